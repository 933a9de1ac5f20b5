"""The OAuth access token for Firestore's API, fetched once a run: the operator's
RANKINGS_FIRESTORE_TOKEN_COMMAND, else the metadata server (a Google Cloud VM's or a Cloud Run
job's service account), else `gcloud auth print-access-token`. None on the emulator. No message
ever carries a token: redact() takes every token this process held out of any text."""
import json
import os
import signal
import subprocess
import threading
import urllib.request

from . import transport
from .statuses import CONFIG, Failure

COMMAND_SECONDS = 120
METADATA = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
_secrets = set()

# Where the token came from, and what a 403 with it most likely means (docs/firestore.md, Credentials).
FORBIDDEN_HINTS = {
    "RANKINGS_FIRESTORE_TOKEN_COMMAND": "the token is RANKINGS_FIRESTORE_TOKEN_COMMAND's: give its account "
                                        "roles/datastore.user on the project",
    "the metadata server": "the token is the service account of this VM or job (the metadata server), not a key "
                           "activated with gcloud: give that account roles/datastore.user and the cloud-platform "
                           "scope, or set RANKINGS_FIRESTORE_TOKEN_COMMAND=\"gcloud auth print-access-token\"",
    "gcloud auth print-access-token": "the token is gcloud's active account for this user: give it "
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
        raise Failure(CONFIG, f"no access token: {what} printed nothing")
    if not all("!" <= c <= "~" for c in token):
        raise Failure(CONFIG, f"no access token: what {what} printed is not a single line of visible ASCII "
                              "characters (not shown)")
    _secrets.add(token)
    return token


def run_bounded(argv, seconds):
    """argv's output, run in a process group of its own, the whole group killed at the limit
    (TimeoutExpired), so a shell's children cannot outlive it."""
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=seconds)
    except BaseException:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        process.stdout.close()
        process.stderr.close()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


class Credentials:
    def __init__(self, settings):
        self.emulator = settings.emulator_host
        self.command = settings.firestore_token_command
        self.token, self.source = None, None
        self._lock = threading.Lock()   # the streams of a full read ask at once; one token a run

    def headers(self):
        if self.emulator:
            return {}
        with self._lock:
            if self.token is None:
                self.token = self._fetch()
        return {"Authorization": f"Bearer {self.token}"}

    def forbidden_hint(self):
        return FORBIDDEN_HINTS.get(self.source, "")

    def _fetch(self):
        if self.command:
            self.source = "RANKINGS_FIRESTORE_TOKEN_COMMAND"
            return self._run(["/bin/sh", "-c", self.command])
        request = urllib.request.Request(METADATA, headers={"Metadata-Flavor": "Google"})
        try:
            status, _, body = transport.fetch(request, 2)
            token = json.loads(body)["access_token"] if status == 200 else None
        except (OSError, ValueError, KeyError, TypeError, Exception):  # noqa: BLE001 (off Google Cloud)
            token = None
        if isinstance(token, str):
            self.source = "the metadata server"
            return checked(token, self.source)
        self.source = "gcloud auth print-access-token"
        return self._run(["gcloud", "auth", "print-access-token"])

    def _run(self, argv):
        what = self.source
        try:
            done = run_bounded(argv, COMMAND_SECONDS)
        except subprocess.TimeoutExpired:
            raise Failure(CONFIG, f"no access token: {what} did not finish in {COMMAND_SECONDS}s "
                                  "(stopped, with every process it started)") from None
        except OSError as error:
            raise Failure(CONFIG, f"no access token: {what}: {error.strerror}") from None
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise Failure(CONFIG, f"no access token: {what}: {detail[0]}")
        return checked(done.stdout.decode("utf-8", "replace"), what)
