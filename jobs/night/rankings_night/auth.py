"""The OAuth access token for Firestore's API, from the first source that gives one:
RANKINGS_FIRESTORE_TOKEN_COMMAND; the metadata server (tried for about 10 s: GKE Workload
Identity's does not answer a pod's first seconds); `gcloud auth print-access-token`. None on the
emulator. Fetched again from the same source on a 401 or before a metadata token expires. No
message carries a token: redact() takes every token this process held out of any text."""
import contextlib
import os
import signal
import subprocess
import threading
import time
import urllib.parse

from .transport import NoCredentials, Refused, Retry, Transport, Unavailable

COMMAND_SECONDS = 120
METADATA = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
# About 10 s of tries, 2 s each at most; a name that does not resolve is off Google Cloud: once.
METADATA_RETRY = Retry(attempts=8, initial=0.5, maximum=2.0, deadline=10.0, unknown_host=False)
METADATA_TRY_SECONDS = 2.0
EXPIRY_MARGIN = 60.0    # a metadata token is fetched again this long before it expires
GCLOUD = ("gcloud", "auth", "print-access-token")

COMMAND, METADATA_SERVER, GCLOUD_SOURCE = "RANKINGS_FIRESTORE_TOKEN_COMMAND", "the metadata server", " ".join(GCLOUD)
HOW_TO = ("set RANKINGS_FIRESTORE_TOKEN_COMMAND to a command that prints an access token, or run with a "
          "service account (a Google Cloud VM's or Cloud Run job's, or GKE Workload Identity's)")
_secrets = set()

# Where the token came from, and what a 403 with it most likely means (docs/firestore.md, Credentials).
FORBIDDEN_HINTS = {
    COMMAND: "the token is RANKINGS_FIRESTORE_TOKEN_COMMAND's: give its account roles/datastore.user on the project",
    METADATA_SERVER: "the token is the service account of this VM or job (the metadata server), not a key "
                     "activated with gcloud: give that account roles/datastore.user and the cloud-platform "
                     "scope, or set RANKINGS_FIRESTORE_TOKEN_COMMAND=\"gcloud auth print-access-token\"",
    GCLOUD_SOURCE: "the token is gcloud's active account for this user: give it "
                   "roles/datastore.user on the project (gcloud auth list shows which)",
}


def redact(text):
    for secret in _secrets:
        text = text.replace(secret, "[access token]")
    return text


def checked(text, what):
    """A token goes into an HTTP header: one line of visible ASCII, or a failure that hides it."""
    token = text.strip()
    if not token:
        raise NoCredentials(f"no access token: {what} printed nothing")
    if not all("!" <= c <= "~" for c in token):
        raise NoCredentials(f"no access token: what {what} printed is not a single line of visible ASCII "
                            "characters (not shown)")
    _secrets.add(token)
    return token


def run_bounded(argv, seconds):
    """argv run in a process group of its own, all killed at the limit (TimeoutExpired): no child outlives it."""
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=seconds)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stdout.close()
        process.stderr.close()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


class Credentials:
    """headers() and refresh(sent) as transport.Transport asks them; tests point the sources elsewhere."""

    def __init__(self, command=None, *, emulator=False, metadata=METADATA, metadata_retry=METADATA_RETRY,
                 gcloud=GCLOUD):
        self.command, self.emulator = command, emulator
        self.metadata, self.metadata_retry, self.gcloud = metadata, metadata_retry, tuple(gcloud)
        self.token, self.expires, self.source = None, None, None
        self._lock = threading.Lock()   # the streams of a full read ask at once; one token for all

    def headers(self):
        if self.emulator:
            return {}
        with self._lock:
            if self.token is None or (self.expires is not None and time.monotonic() >= self.expires):
                self.token, self.expires = self._fetch()
            return {"Authorization": f"Bearer {self.token}"}

    def refresh(self, sent):
        """The token `sent` was refused: dropped unless another thread replaced it. Whether a new one may be had."""
        if self.emulator:
            return False
        with self._lock:
            if sent.get("Authorization") == f"Bearer {self.token}":
                self.token = None
        return True

    def forbidden_hint(self):
        return FORBIDDEN_HINTS.get(self.source, "")

    def _fetch(self):
        """(token, monotonic time to fetch another or None): from the last one's source, else the first."""
        if self.command:
            self.source = COMMAND
            return self._run(["/bin/sh", "-c", self.command], COMMAND), None
        tried = ["RANKINGS_FIRESTORE_TOKEN_COMMAND is not set"]
        if self.source != GCLOUD_SOURCE:
            token, expires, why = self._from_metadata()
            if token is not None:
                self.source = METADATA_SERVER
                return token, expires
            tried.append(f"the metadata server ({urllib.parse.urlsplit(self.metadata).hostname}) {why}")
            if self.source == METADATA_SERVER:
                raise NoCredentials(f"no new access token: {tried[-1]}")
        self.source = GCLOUD_SOURCE
        return self._run(list(self.gcloud), GCLOUD_SOURCE, tried), None

    def _from_metadata(self):
        """(token, expires, None) or (None, None, why not)."""
        transport = Transport(self.metadata_retry, METADATA_TRY_SECONDS, say=lambda message: None)
        started = time.monotonic()
        try:
            answer = transport.call("GET", self.metadata, headers={"Metadata-Flavor": "Google"})
        except Refused as refused:
            return None, None, f"answered HTTP {refused.code}{' (no service account)' if refused.code == 404 else ''}"
        except Unavailable as unavailable:
            tries = f"{unavailable.tries} {'try' if unavailable.tries == 1 else 'tries'}"
            return None, None, f"is unreachable ({tries} in {time.monotonic() - started:.0f} s): {unavailable.why}"
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str):
            return None, None, "answered without an access token"
        lifetime = answer.get("expires_in")
        timed = isinstance(lifetime, (int, float)) and not isinstance(lifetime, bool)
        return checked(token, METADATA_SERVER), started + max(lifetime - EXPIRY_MARGIN, 0) if timed else None, None

    def _run(self, argv, what, tried=()):
        """The token argv prints; gcloud's failure (the last source) lists what else was tried, and how to give one."""
        def failed(why):
            if not tried:
                return NoCredentials(f"no access token: {what}: {why}")
            return NoCredentials(f"no access token: {'; '.join(tried)}; {what}: {why}. To give one, {HOW_TO}")
        try:
            done = run_bounded(argv, COMMAND_SECONDS)
        except subprocess.TimeoutExpired:
            raise NoCredentials(f"no access token: {what} did not finish in {COMMAND_SECONDS}s "
                                "(stopped, with every process it started)") from None
        except OSError as error:
            missing = tried and isinstance(error, FileNotFoundError)
            raise failed(f"{argv[0]} is not installed (the container image holds no gcloud)" if missing
                         else error.strerror) from None
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise failed(detail[0] if detail else f"exit status {done.returncode}")
        return checked(done.stdout.decode("utf-8", "replace"), what)
