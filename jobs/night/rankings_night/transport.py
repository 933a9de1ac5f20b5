"""HTTP for Firestore's calls, apart from what they mean and from the night's exit statuses: each
try bounded in its whole time (connecting, sending, reading the last byte); retried as a Retry
policy says (which answers and failures, back-off with full jitter, a server's Retry-After as a
floor, an overall deadline); a 401 answered by dropping the token and trying once with a new one;
redirects never followed (a token must not travel to another host). Through urllib, so
https_proxy is honoured.

Failures are exceptions of the types below, never exit statuses: statuses.status_of maps them."""
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
    """Firestore answered a final no (400, 401, 403, 404, a redirect...): `code` is the HTTP
    status, `reason` Firestore's status word (FAILED_PRECONDITION) when it gave one."""

    def __init__(self, message, code, reason=""):
        super().__init__(message)
        self.code, self.reason = code, reason


class Unavailable(FirestoreError):
    """No answer that counts after the tries the policy allows: `tries` made, `why` the last
    one's failure (without the method and URL the message starts with)."""

    def __init__(self, message, tries, why=""):
        super().__init__(message)
        self.tries, self.why = tries, why


class TimeUp(Unavailable):
    """The run's deadline or the policy's own ended the tries before an answer."""


class NoCredentials(FirestoreError):
    """No access token from any source; the message says what was tried and how to give one."""


class _TooSlow(OSError):
    """One try's whole time ran out; retried like a connection that timed out."""


def _retried_failure(error):
    """A try's failure that another try may not repeat: the connection, the answer broken or
    not JSON. Not a name that does not resolve when `unknown_host` is false (below)."""
    return isinstance(error, (OSError, http.client.HTTPException, ValueError))


def _unknown_host(error):
    reason = getattr(error, "reason", error)
    return isinstance(reason, socket.gaierror) and reason.errno == socket.EAI_NONAME


@dataclasses.dataclass(frozen=True)
class Retry:
    """When and how long to wait before another try. A try's pause is drawn at random between 0
    and initial * multiplier ** (tries - 1), capped at `maximum` (full jitter: streams answered
    429 together do not come back together); a server's Retry-After is a floor. `deadline`:
    seconds a call may take with all its tries (None: only `attempts` bounds them)."""
    attempts: int = 5
    initial: float = 1.0
    maximum: float = 60.0
    multiplier: float = 2.0
    jitter: bool = True
    deadline: "float | None" = None
    statuses: frozenset = frozenset({408, 429, 500, 502, 503, 504})
    unknown_host: bool = True      # retry a host name that does not resolve (EAI_NONAME)

    def retries(self, error):
        """Whether a try that failed with `error` (not an HTTP answer) is worth another."""
        return _retried_failure(error) and (self.unknown_host or not _unknown_host(error))

    def pause(self, tries, floor=0.0, uniform=random.uniform):
        """Seconds to wait after `tries` tries; `floor` the server's Retry-After."""
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
    """One try's limit on its whole time. A socket timeout bounds each read alone, so a server
    sending a byte a second would hold a call for ever; at the limit this shuts the socket down,
    which ends whatever read or write waits on it."""

    def __init__(self, seconds):
        self.expired = False
        self._lock = threading.Lock()
        self._socket = None
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def attach(self, connected):
        with self._lock:
            self._socket = socket.fromfd(connected.fileno(), connected.family, connected.type)
            if self.expired:
                self._cut()

    def _expire(self):
        with self._lock:
            self.expired = True
            self._cut()

    def _cut(self):
        if self._socket is not None:
            try:
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self._timer.cancel()
        with self._lock:
            if self._socket is not None:
                self._socket.close()


def _handlers(watch):
    def watched(base):
        class Watched(base):
            def connect(self):
                super().connect()
                watch.attach(self.sock)
        return Watched

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, request):
            return self.do_open(watched(http.client.HTTPConnection), request)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, request):
            return self.do_open(watched(http.client.HTTPSConnection), request, context=self._context)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None     # the 3xx comes back to the caller as it is

    return HTTP(), HTTPS(), NoRedirect()


def fetch(request, seconds):
    """(status, headers, body) of one try within `seconds` from the start. Raises OSError when
    the connection fails or the time runs out, HTTPException when the answer is not HTTP or is
    cut short."""
    if seconds <= 0:
        raise _TooSlow("no time left for another try")
    watch = _Watch(seconds)
    opener = urllib.request.build_opener(*_handlers(watch))
    watch._timer.start()
    try:
        try:
            with opener.open(request, timeout=seconds) as answer:
                status, headers, body = answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, error.headers, error.read()
        if watch.expired:
            raise _TooSlow(f"no whole answer within {seconds:g}s")
        return status, headers, body
    except (OSError, http.client.HTTPException) as error:
        # A read the socket's own timeout ended waited `seconds` alone: the watch's limit too,
        # whichever of the two fired first on a loaded machine.
        if watch.expired or isinstance(getattr(error, "reason", error), TimeoutError):
            raise _TooSlow(f"no whole answer within {seconds:g}s") from None
        raise
    finally:
        watch.close()


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
    """Calls with retries. `retry` (Retry) says which failures are tried again and when;
    `timeout` bounds one try; `credentials` gives each try's headers (headers()) and drops a
    token a 401 answered (refresh(headers sent) -> whether a new one may be had); `say` logs a
    retry; `deadline` (time.monotonic()) bounds every call of a run when set. `sleep` and
    `uniform` are time.sleep and random.uniform but for tests."""

    def __init__(self, retry=Retry(), timeout=60.0, credentials=None, say=print, deadline=None,
                 sleep=time.sleep, uniform=random.uniform):
        self.retry, self.timeout, self.credentials = retry, timeout, credentials or Anonymous()
        self.say, self.deadline, self.sleep, self.uniform = say, deadline, sleep, uniform

    def _ends(self, started):
        ends = [t for t in (self.deadline, None if self.retry.deadline is None else started + self.retry.deadline)
                if t is not None]
        return min(ends) if ends else None

    def seconds_left(self, ends=None):
        ends = self.deadline if ends is None else ends
        return self.timeout if ends is None else min(self.timeout, ends - time.monotonic())

    def call(self, method, url, body=None, final=(), headers=None):
        """One call's JSON answer. Only calls that may be repeated are made: a page at a fixed
        readTime and cursor, a whole-document PATCH, a commit (repeated after an answer lost, a
        commit with a precondition is refused, not applied twice: its caller reads back). `final`:
        Firestore status words (DEADLINE_EXCEEDED for a COUNT) that are Refused at once,
        whatever the HTTP status. `headers`: the call's own, besides the credentials'."""
        retry, data = self.retry, None if body is None else json.dumps(body).encode()
        ends = self._ends(time.monotonic())
        tries, refreshed = 0, False
        while True:
            tries += 1
            sent = self.credentials.headers()
            request = urllib.request.Request(url, data=data, method=method,
                                             headers={"Content-Type": "application/json", **(headers or {}), **sent})
            floor = 0.0
            try:
                status, answer_headers, text = fetch(request, self.seconds_left(ends))
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
                    floor = _retry_after(answer_headers)
            last = f"{method} {url}: {why}"
            if tries >= retry.attempts:
                raise Unavailable(f"{last} (gave up after {tries} tries)", tries, why)
            pause = retry.pause(tries, floor, self.uniform)
            if ends is not None and time.monotonic() + pause >= ends:
                raise TimeUp(f"{last} (gave up after {tries} tries: the deadline comes before another)", tries, why)
            self.say(f"{last}; try {tries} of {retry.attempts}, next in {pause:.3g}s")
            self.sleep(pause)


def _retry_after(headers):
    try:
        return max(float(headers.get("Retry-After", "0")), 0.0)
    except (TypeError, ValueError):
        return 0.0
