"""HTTP for Firestore's calls, through urllib so that https_proxy is honoured (docs/firestore.md, "Calls, retries")."""
import contextlib
import http.client
import json
import random
import socket
import threading
import time
import types
import typing
import urllib.request

RETRIED, RETRY_AFTER_LIMIT = frozenset({408, 429, 500, 502, 503, 504}), 300.0   # a longer Retry-After is a mistake


class FirestoreError(Exception):
    """Any failure of Firestore's client: a call refused or unanswered, no credentials."""

    def __reduce__(self):   # whole across a pipe from a child process (parallel.apart), every attribute too
        return type(self), (str(self),), self.__dict__


class Refused(FirestoreError):
    """A final no: `code` the HTTP status, `reason` Firestore's status word (FAILED_PRECONDITION)."""

    def __init__(self, message, code=0, reason=""):
        super().__init__(message)
        self.code, self.reason = code, reason


class Unavailable(FirestoreError):
    """No answer that counts after the tries allowed: `tries` made, `why` the last one's failure."""

    def __init__(self, message, tries=0, why=""):
        super().__init__(message)
        self.tries, self.why = tries, why


class TimeUp(Unavailable):
    """The deadline ended the tries before an answer."""


class NoCredentials(FirestoreError):
    """No access token from any source; the message says what was tried and how to give one."""


class Retry(typing.NamedTuple):
    """Full jitter (streams answered 429 together do not come back together), a server's Retry-After a floor."""
    attempts: int = 5
    initial: float = 1.0
    maximum: float = 60.0
    unknown_host: bool = True   # a host name that does not resolve (EAI_NONAME) tried again

    def pause(self, tries, floor=0.0, uniform=random.uniform):
        return max(uniform(0.0, min(self.maximum, self.initial * 2 ** (tries - 1))), min(floor, RETRY_AFTER_LIMIT))


ANONYMOUS = types.SimpleNamespace(headers=dict, refresh=lambda sent: None, forbidden_hint=lambda: "no token sent")


class _Try(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """One try's connection, cut at the try's limit (a socket's timeout bounds each read alone, and a byte a second
    would hold it for ever) by shutting down a duplicate of its socket: urllib may close the socket itself."""

    def __init__(self, seconds):
        super().__init__()
        self.expired, self.socket, self.timer = False, None, threading.Timer(seconds, self.expire)
        self.timer.start()

    def expire(self):
        self.expired = True
        with contextlib.suppress(OSError, AttributeError):     # AttributeError: no socket yet
            self.socket.shutdown(socket.SHUT_RDWR)

    def watched(self, base):
        class Watched(base):
            def connect(connection):
                super().connect()
                self.socket = socket.fromfd(connection.sock.fileno(), connection.sock.family, connection.sock.type)
                if self.expired:    # the limit came while it connected
                    self.expire()
        return Watched

    def http_open(self, request):
        return self.do_open(self.watched(http.client.HTTPConnection), request)

    def https_open(self, request):
        return self.do_open(self.watched(http.client.HTTPSConnection), request, context=self._context)


def fetch(request, seconds, cuts):
    """(status, headers, body) of one try within `seconds`, whatever the status: no handler of errors, and no
    redirect followed (a token must not travel to another host); cut at once by a stop (`cuts`: STOP.cuts)."""
    if seconds <= 0:
        raise TimeoutError("no time left for another try")
    opener, connection = urllib.request.OpenerDirector(), _Try(seconds)
    cuts.add(connection.expire)
    opener.add_handler(urllib.request.ProxyHandler())
    opener.add_handler(connection)
    try:
        with opener.open(request, timeout=seconds) as answer:
            status, headers, body = answer.status, answer.headers, answer.read()
        if not connection.expired:
            return status, headers, body
    except (OSError, http.client.HTTPException):
        if not connection.expired:
            raise
    finally:
        cuts.discard(connection.expire)
        connection.timer.cancel()
        connection.timer.join()     # no expire() at work on the socket closed next
        if connection.socket is not None:
            connection.socket.close()
    raise TimeoutError(f"no whole answer within {seconds:g}s")


class Transport:
    """Calls with retries, ended at `deadline` (time.monotonic(), or None) and by `stop` (stop.STOP)."""

    def __init__(self, retry, timeout, credentials, say, deadline, stop, uniform=random.uniform):
        self.retry, self.timeout, self.credentials = retry, timeout, credentials or ANONYMOUS
        self.say, self.deadline, self.stop, self.uniform = say, deadline, stop, uniform

    def call(self, method, url, body=None, final=(), headers=None):
        """One call's JSON answer (`final`: status words Refused at once). Every call made is safe to repeat."""
        data, call, tries, refreshed = None if body is None else json.dumps(body).encode(), f"{method} {url}", 0, False
        ends = float("inf") if self.deadline is None else self.deadline
        while True:
            self.stop.check()
            tries, floor, sent = tries + 1, 0.0, self.credentials.headers()
            request = urllib.request.Request(url, data, {"Content-Type": "application/json", **(headers or {}), **sent},
                                             method=method)
            try:
                status, answered, text = fetch(request, min(self.timeout, ends - time.monotonic()), self.stop.cuts)
            except (OSError, http.client.HTTPException) as error:
                reason = getattr(error, "reason", error)     # urllib's URLError holds the socket's
                broken = isinstance(error, http.client.HTTPException)
                why = f"a broken answer: {type(error).__name__}: {str(error).strip()}" if broken else str(reason)
                if not self.retry.unknown_host and getattr(reason, "errno", None) == socket.EAI_NONAME:
                    raise Unavailable(f"{call}: {why}", tries, why) from None
            else:
                if 300 <= status < 400:
                    raise Refused(f"{call}: HTTP {status}: a redirect to {answered['Location']}, not followed", status)
                if status < 300:
                    try:
                        return json.loads(text or b"{}")
                    except ValueError as error:
                        why = f"the answer is not JSON: {error}"
                else:
                    try:
                        error = json.loads(text)
                        error = (error[0] if isinstance(error, list) else error)["error"]
                        said, reason = error["message"], error.get("status", "")
                    except (ValueError, KeyError, IndexError, TypeError):     # not Firestore's words: its start
                        said, reason = text.decode("utf-8", "replace").strip()[:300], ""
                    why = f"HTTP {status}: {said}{f' ({self.credentials.forbidden_hint()})' if status == 403 else ''}"
                    if status == 401 and not refreshed and sent:    # an expired token
                        self.credentials.refresh(sent)
                        refreshed, tries = True, tries - 1
                        self.say(f"{call}: {why}; a new access token, and the call again")
                        continue
                    if status not in RETRIED or reason in final:
                        raise Refused(f"{call}: {why}", status, reason)
                    with contextlib.suppress(ValueError):
                        floor = float(answered.get("Retry-After", 0))
            if tries >= self.retry.attempts:
                raise Unavailable(f"{call}: {why} (gave up after {tries} tries)", tries, why)
            pause = self.retry.pause(tries, floor, self.uniform)
            if time.monotonic() + pause < ends:
                self.say(f"{call}: {why}; try {tries} of {self.retry.attempts}, next in {pause:.3g}s")
                self.stop.sleep(pause)
                if time.monotonic() < ends:     # else the pause overran (a loaded machine): no try without time
                    continue
            raise TimeUp(f"{call}: {why} (gave up after {tries} tries: the deadline comes before another)", tries, why)
