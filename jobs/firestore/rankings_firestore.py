# What rankings-fetch-firestore and rankings-publish-firestore share: their settings, how they
# get a token, and one way to call Firestore's REST API with retries. Installed next to them
# and imported from there (a script's own directory is first on Python's path).
#
# Only Python 3's standard library: the package depends on python3 and nothing from PyPI, so an
# operator installs no client library and no virtual environment.
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

# sysexits.h, as `rankings` and rankings-cron use them.
EX_USAGE = 64
EX_DATAERR = 65
EX_NOINPUT = 66
EX_UNAVAILABLE = 69
EX_CANTCREAT = 73
EX_CONFIG = 78


class Failure(Exception):
    """A failure with the exit status it maps to; main() prints it and exits."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def say(program, message):
    print(f"{program}: {message}", file=sys.stderr, flush=True)


class Settings:
    """The RANKINGS_FIRESTORE_* environment, as the units' EnvironmentFile= and the cron
    wrapper's export hand it over: a hook run by hand with the same variables does the same."""

    def __init__(self, environ=os.environ):
        self.project = environ.get("RANKINGS_FIRESTORE_PROJECT", "")
        if not self.project:
            raise Failure(EX_CONFIG, "RANKINGS_FIRESTORE_PROJECT is not set")
        self.database = environ.get("RANKINGS_FIRESTORE_DATABASE") or "(default)"
        self.emulator = environ.get("FIRESTORE_EMULATOR_HOST", "")
        self.token_command = environ.get("RANKINGS_FIRESTORE_TOKEN_COMMAND", "")
        self.rankings = environ.get("RANKINGS_BIN") or "@BINDIR@/rankings"
        self.attempts = self.number(environ, "RANKINGS_FIRESTORE_ATTEMPTS", 5, int)
        self.backoff = self.number(environ, "RANKINGS_FIRESTORE_BACKOFF_SECONDS", 1.0, float)
        self.timeout = self.number(environ, "RANKINGS_FIRESTORE_TIMEOUT_SECONDS", 60.0, float)
        if self.emulator:
            self.api = f"http://{self.emulator}/v1"
        else:
            self.api = "https://firestore.googleapis.com/v1"
        self.database_path = f"projects/{self.project}/databases/{self.database}"
        self._token = None

    @staticmethod
    def number(environ, name, default, kind):
        text = environ.get(name, "")
        if not text:
            return default
        try:
            value = kind(text)
        except ValueError:
            raise Failure(EX_CONFIG, f"{name} must be a number, not {text!r}") from None
        if value <= 0:
            raise Failure(EX_CONFIG, f"{name} must be more than 0, not {text!r}")
        return value

    def token(self):
        """An OAuth access token, fetched once per run; None for the emulator, which wants none.

        In order: the operator's RANKINGS_FIRESTORE_TOKEN_COMMAND; the metadata server on
        Google Cloud (the machine's service account); `gcloud auth print-access-token` for the
        account gcloud has configured for this user."""
        if self.emulator:
            return None
        if self._token is None:
            self._token = self._fetch_token()
        return self._token

    def _fetch_token(self):
        if self.token_command:
            return self._run_token_command(["/bin/sh", "-c", self.token_command], "RANKINGS_FIRESTORE_TOKEN_COMMAND")
        request = urllib.request.Request(
            "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token",
            headers={"Metadata-Flavor": "Google"})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return json.load(response)["access_token"]
        except (OSError, ValueError, KeyError):
            pass  # not on Google Cloud, or no service account: gcloud's account next
        return self._run_token_command(["gcloud", "auth", "print-access-token"], "gcloud auth print-access-token")

    @staticmethod
    def _run_token_command(argv, what):
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise Failure(EX_CONFIG, f"no access token: {what}: {error}") from None
        token = done.stdout.strip()
        if done.returncode != 0 or not token:
            detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise Failure(EX_CONFIG, f"no access token: {what}: {detail[0]}")
        return token


def retryable(status):
    """Worth another try: rate limited, or the server's trouble. Everything else (400, 401, 403,
    404...) would get the same answer again."""
    return status == 429 or status >= 500


def call(settings, program, method, url, body=None):
    """One REST call, its JSON answer decoded. Retried with exponential backoff on 429, 5xx and
    connection errors (up to RANKINGS_FIRESTORE_ATTEMPTS tries); callers send only requests
    that give the same answer when repeated (a page at a fixed readTime, a whole-document
    PATCH), so a retry can neither duplicate nor drop anything."""
    data = None if body is None else json.dumps(body).encode()
    last = ""
    for attempt in range(1, settings.attempts + 1):
        headers = {"Content-Type": "application/json"}
        token = settings.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=settings.timeout) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", "replace")
            last = f"{method} {url}: HTTP {error.code}: {summary(text)}"
            if not retryable(error.code):
                raise Failure(EX_UNAVAILABLE, last) from None
        except (OSError, ValueError) as error:  # refused, reset, timed out, DNS; a truncated answer
            last = f"{method} {url}: {getattr(error, 'reason', error)}"
        if attempt < settings.attempts:
            pause = settings.backoff * 2 ** (attempt - 1)
            say(program, f"{last}; try {attempt} of {settings.attempts}, next in {pause:g}s")
            time.sleep(pause)
    raise Failure(EX_UNAVAILABLE, f"{last} (gave up after {settings.attempts} tries)")


def summary(text):
    """Firestore's own error message when the answer carries one, else the answer's start."""
    try:
        answer = json.loads(text)
        if isinstance(answer, list):
            answer = answer[0]
        return answer["error"]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return text.strip()[:300]


def main(program, work):
    """Runs work() and exits with its status, or a failure's: never a traceback for a failure we
    know, and never status 0 after one."""
    try:
        sys.exit(work())
    except Failure as failure:
        say(program, f"error: {failure}")
        sys.exit(failure.status)
    except KeyboardInterrupt:
        sys.exit(130)
