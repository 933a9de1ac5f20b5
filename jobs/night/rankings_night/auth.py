"""The OAuth access token of the first source that gives one (docs/firestore.md, "Credentials"); redact() hides it."""
import contextlib
import math
import os
import signal
import subprocess
import threading
import time
import urllib.parse

from . import stop
from .transport import NoCredentials, Refused, Retry, Transport, Unavailable

METADATA = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
# About 10 s of tries (GKE Workload Identity's does not answer a pod's first seconds), once off Google Cloud.
METADATA_RETRY = Retry(attempts=8, initial=0.5, maximum=2.0, unknown_host=False)
COMMAND_SECONDS, METADATA_SECONDS, METADATA_TRY_SECONDS, EXPIRY_MARGIN = 120, 10.0, 2.0, 60.0
GCLOUD = ("gcloud", "auth", "print-access-token")
COMMAND, METADATA_SERVER, GCLOUD_SOURCE = "RANKINGS_FIRESTORE_TOKEN_COMMAND", "the metadata server", " ".join(GCLOUD)
HOW_TO = ("set RANKINGS_FIRESTORE_TOKEN_COMMAND to a command that prints an access token, or run with a "
          "service account (a Google Cloud VM's or Cloud Run job's, or GKE Workload Identity's)")
_secrets = set()


def redact(text):
    for secret in _secrets:
        text = text.replace(secret, "[access token]")
    return text


def checked(text, what):
    """A token goes into an HTTP header: one line of visible ASCII, or a failure that hides it."""
    token = text.strip()
    if not token or not all("!" <= c <= "~" for c in token):
        raise NoCredentials(f"no access token: {what} printed nothing" if not token else (
            f"no access token: what {what} printed is not a single line of visible ASCII characters (not shown)"))
    _secrets.add(token)
    return token


class Credentials:
    """headers(), refresh(sent) and forbidden_hint(), as transport.Transport asks them."""

    def __init__(self, command=None, *, metadata=METADATA, metadata_retry=METADATA_RETRY, gcloud=GCLOUD):
        self.command, self.metadata, self.metadata_retry, self.gcloud = command, metadata, metadata_retry, gcloud
        self.token, self.expires, self.source, self._lock = None, math.inf, None, threading.Lock()  # one token for all

    def headers(self):
        with self._lock:
            if self.token is None or time.monotonic() >= self.expires:
                self.token, self.expires = self._fetch()
            return {"Authorization": f"Bearer {self.token}"}

    def refresh(self, sent):
        """The token `sent` was refused: dropped, unless another thread has replaced it."""
        with self._lock:
            if sent.get("Authorization") == f"Bearer {self.token}":
                self.token = None

    def forbidden_hint(self):
        return (f"the token is {self.source}'s: give its account roles/datastore.user, and a VM's the cloud-platform "
                "scope, or set RANKINGS_FIRESTORE_TOKEN_COMMAND to print another account's token")

    def _fetch(self):
        """(token, monotonic time to fetch another): from the last one's source, else the first that gives one."""
        if self.command:
            return self._run(["/bin/sh", "-c", self.command], COMMAND), math.inf
        tried = ["RANKINGS_FIRESTORE_TOKEN_COMMAND is not set"]
        if self.source != GCLOUD_SOURCE:
            started, answer, why = time.monotonic(), {}, "answered without an access token"
            transport = Transport(self.metadata_retry, METADATA_TRY_SECONDS, None, lambda message: None,
                                  started + METADATA_SECONDS, stop.STOP)
            try:
                answer = transport.call("GET", self.metadata, headers={"Metadata-Flavor": "Google"})
            except Refused as refused:
                why = f"answered HTTP {refused.code}{' (no service account)' if refused.code == 404 else ''}"
            except Unavailable as unavailable:
                tries = f"{unavailable.tries} {'try' if unavailable.tries == 1 else 'tries'}"
                why = f"is unreachable ({tries} in {time.monotonic() - started:.0f} s): {unavailable.why}"
            token = answer.get("access_token") if isinstance(answer, dict) else None
            if isinstance(token, str):
                self.source, lifetime = METADATA_SERVER, answer.get("expires_in")
                expires = started + max(lifetime - EXPIRY_MARGIN, 0) if type(lifetime) in (int, float) else math.inf
                return checked(token, METADATA_SERVER), expires
            tried.append(f"the metadata server ({urllib.parse.urlsplit(self.metadata).hostname}) {why}")
            if self.source == METADATA_SERVER:
                raise NoCredentials(f"no new access token: {tried[-1]}")
        return self._run(self.gcloud, GCLOUD_SOURCE, tried), math.inf

    def _run(self, argv, what, tried=()):
        """The token argv prints (its process group killed at the limit); gcloud's failure says what was tried."""
        self.source = what
        try:
            with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True) as process:
                try:
                    out, err = process.communicate(timeout=COMMAND_SECONDS)
                except BaseException:   # the limit, or the stop: no child outlives it
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    raise
            if process.returncode == 0:
                return checked(out.decode("utf-8", "replace"), what)
            why = (err.decode("utf-8", "replace").strip().splitlines() or [f"exit status {process.returncode}"])[-1]
        except subprocess.TimeoutExpired:
            raise NoCredentials(f"no access token: {what} ran past {COMMAND_SECONDS}s: stopped, with all it started")
        except OSError as error:
            missing = tried and isinstance(error, FileNotFoundError)
            why = f"{argv[0]} is not installed (the container image holds no gcloud)" if missing else error.strerror
        raise NoCredentials(f"no access token: {'; '.join(tried)}; {what}: {why}. To give one, {HOW_TO}" if tried
                            else f"no access token: {what}: {why}")
