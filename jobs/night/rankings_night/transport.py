"""HTTP for Firestore's calls, apart from what they mean: each try bounded in its whole time;
retried as a Retry policy says; a 401 answered by one new token; redirects never followed (a token
must not travel to another host). Through urllib, so https_proxy is honoured. Failures are the
exceptions below, never exit statuses: statuses.status_of maps them."""
import contextlib
import dataclasses
import http.client
import json
import random
import socket
import threading
import time
import urllib.error
import urllib.request

RETRY_AFTER_LIMIT = 300.0   # a Retry-After longer than this is a server's mistake, not a plan


class FirestoreError(Exception):
    """Any failure of Firestore's client: a call refused or unanswered, no credentials."""

    def __reduce__(self):
        # Whole across a pipe from a child process (parallel.apart): the message and every
        # attribute (code, reason, documents_read a caller added), without calling __init__.
        return _rebuilt, (type(self), str(self), self.__dict__)


def _rebuilt(kind, message, attributes):
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    error.__dict__.update(attributes)
    return error


class Refused(FirestoreError):
    """A final no: `code` the HTTP status, `reason` Firestore's status word (FAILED_PRECONDITION)."""

    def __init__(self, message, code, reason=""):
        super().__init__(message)
        self.code, self.reason = code, reason


class Unavailable(FirestoreError):
    """No answer that counts after the tries allowed: `tries` made, `why` the last one's failure."""

    def __init__(self, message, tries, why=""):
        super().__init__(message)
        self.tries, self.why = tries, why


class TimeUp(Unavailable):
    """The run's deadline or the policy's own ended the tries before an answer."""


class NoCredentials(FirestoreError):
    """No access token from any source; the message says what was tried and how to give one."""


class _TooSlow(OSError):
    """One try's whole time ran out; retried like a connection that timed out."""


@dataclasses.dataclass(frozen=True)
class Retry:
    """When to try again: full jitter (streams answered 429 together do not come back together), a
    server's Retry-After a floor; `deadline`: seconds a call may take with all its tries."""
    attempts: int = 5
    initial: float = 1.0
    maximum: float = 60.0
    multiplier: float = 2.0
    jitter: bool = True
    deadline: "float | None" = None
    statuses: frozenset = frozenset({408, 429, 500, 502, 503, 504})
    unknown_host: bool = True      # retry a host name that does not resolve (EAI_NONAME)

    def retries(self, error):
        reason = getattr(error, "reason", error)
        unknown = isinstance(reason, socket.gaierror) and reason.errno == socket.EAI_NONAME
        retried = isinstance(error, (OSError, http.client.HTTPException, ValueError))
        return retried and (self.unknown_host or not unknown)

    def pause(self, tries, floor=0.0, uniform=random.uniform):
        ceiling = min(self.maximum, self.initial * self.multiplier ** (tries - 1))
        wait = uniform(0.0, ceiling) if self.jitter else ceiling
        return max(wait, min(floor, RETRY_AFTER_LIMIT))


class Anonymous:
    """No credentials (the emulator, a metadata server): no header, nothing to refresh."""

    def headers(self):
        return {}

    def refresh(self, sent):
        return False


class _Watch:
    """One try's limit on its whole time (a socket timeout bounds each read alone: a byte a second
    would hold a call for ever): at the limit the socket is shut down, ending any read or write."""

    def __init__(self, seconds):
        self.expired, self.socket, self.lock = False, None, threading.Lock()
        self.timer = threading.Timer(seconds, self.cut, kwargs={"expire": True})
        self.timer.daemon = True

    def cut(self, connected=None, expire=False):
        with self.lock:
            if connected is not None:
                self.socket = socket.fromfd(connected.fileno(), connected.family, connected.type)
            self.expired = self.expired or expire
            if self.expired and self.socket is not None:
                with contextlib.suppress(OSError):
                    self.socket.shutdown(socket.SHUT_RDWR)

    def close(self):
        self.timer.cancel()
        with self.lock:
            if self.socket is not None:
                self.socket.close()


def _handler(watch):
    def watched(base):
        class Watched(base):
            def connect(self):
                super().connect()
                watch.cut(self.sock)
        return Watched

    class Handler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
        def http_open(self, request):
            return self.do_open(watched(http.client.HTTPConnection), request)

        def https_open(self, request):
            return self.do_open(watched(http.client.HTTPSConnection), request, context=self._context)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None     # the 3xx comes back to the caller as it is

    return Handler(), NoRedirect()


def fetch(request, seconds):
    """(status, headers, body) of one try within `seconds`; OSError or HTTPException else."""
    if seconds <= 0:
        raise _TooSlow("no time left for another try")
    watch = _Watch(seconds)
    opener = urllib.request.build_opener(*_handler(watch))
    watch.timer.start()
    try:
        try:
            with opener.open(request, timeout=seconds) as answer:
                status, headers, body = answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, error.headers, error.read()
        if not watch.expired:
            return status, headers, body
    except (OSError, http.client.HTTPException) as error:
        # A read the socket's own timeout ended waited `seconds` alone: the watch's limit too,
        # whichever of the two fired first on a loaded machine.
        if not (watch.expired or isinstance(getattr(error, "reason", error), TimeoutError)):
            raise
    finally:
        watch.close()
    raise _TooSlow(f"no whole answer within {seconds:g}s")


def summary(text):
    """(Firestore's own message, its status word) when the answer carries them, else its start."""
    try:
        answer = json.loads(text)
        if isinstance(answer, list):
            answer = answer[0]
        return answer["error"]["message"], answer["error"].get("status", "")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return text.strip()[:300], ""


def _described(error):
    if isinstance(error, http.client.IncompleteRead):
        return f"a broken answer: IncompleteRead: cut short after {len(error.partial)} bytes"
    if isinstance(error, http.client.HTTPException):
        return f"a broken answer: {type(error).__name__}: {str(error).strip()}"
    if isinstance(error, OSError):
        return str(getattr(error, "reason", None) or error)
    return f"the answer is not JSON: {error}"


class Transport:
    """Calls with retries. `credentials`: headers() and refresh(sent) (a 401's token dropped: whether
    a new one may be had); `deadline` (time.monotonic()) bounds every call when set."""

    def __init__(self, retry=Retry(), timeout=60.0, credentials=None, say=print, deadline=None,
                 sleep=time.sleep, uniform=random.uniform):
        self.retry, self.timeout, self.credentials = retry, timeout, credentials or Anonymous()
        self.say, self.deadline, self.sleep, self.uniform = say, deadline, sleep, uniform

    def call(self, method, url, body=None, final=(), headers=None):
        """One call's JSON answer; every call made may be repeated (a commit with a precondition is
        refused, not applied twice). `final`: status words (DEADLINE_EXCEEDED) Refused at once."""
        retry, data = self.retry, None if body is None else json.dumps(body).encode()
        ends = min((t for t in (self.deadline, None if retry.deadline is None else time.monotonic() + retry.deadline)
                    if t is not None), default=None)
        tries, refreshed = 0, False
        while True:
            tries += 1
            sent = self.credentials.headers()
            request = urllib.request.Request(url, data=data, method=method,
                                             headers={"Content-Type": "application/json", **(headers or {}), **sent})
            floor = 0.0
            try:
                status, answer_headers, text = fetch(request, self.timeout if ends is None else
                                                     min(self.timeout, ends - time.monotonic()))
            except (OSError, http.client.HTTPException) as error:
                why = _described(error)
                if not retry.retries(error):
                    raise Unavailable(f"{method} {url}: {why}", tries, why) from None
            else:
                if 300 <= status < 400:
                    raise Refused(f"{method} {url}: HTTP {status}: a redirect to "
                                  f"{answer_headers.get('Location', '?')}, not followed", status)
                if status < 300:
                    try:
                        return json.loads(text or b"{}")
                    except ValueError as error:
                        why = _described(error)
                else:
                    message, reason = summary(text.decode("utf-8", "replace"))
                    why = f"HTTP {status}: {message}"
                    if status == 401 and not refreshed and self.credentials.refresh(sent):
                        # An expired token: a new one, once, and the same try again.
                        refreshed, tries = True, tries - 1
                        self.say(f"{method} {url}: {why}; a new access token, and the call again")
                        continue
                    if status not in retry.statuses or reason in final:
                        raise Refused(f"{method} {url}: {why}", status, reason)
                    with contextlib.suppress(TypeError, ValueError):
                        floor = max(float(answer_headers.get("Retry-After", "0")), 0.0)
            last = f"{method} {url}: {why}"
            if tries >= retry.attempts:
                raise Unavailable(f"{last} (gave up after {tries} tries)", tries, why)
            pause = retry.pause(tries, floor, self.uniform)
            time_up = TimeUp(f"{last} (gave up after {tries} tries: the deadline comes before another)", tries, why)
            if ends is not None and time.monotonic() + pause >= ends:
                raise time_up
            self.say(f"{last}; try {tries} of {retry.attempts}, next in {pause:.3g}s")
            self.sleep(pause)
            if ends is not None and time.monotonic() >= ends:
                raise time_up       # the pause overran (a loaded machine): no try without time to reach the server
