"""HTTP for the Firestore calls, apart from what they mean: each try bounded in its whole time
(connecting, sending, reading the last byte), retried with exponential back-off where another try
can succeed (429, 5xx, a connection failing, an answer cut short, not HTTP or not JSON), a server's
Retry-After honoured, and redirects never followed (a token must not travel to another host).
Through urllib, so https_proxy is honoured."""
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request

from .statuses import UNAVAILABLE, Failure


class TimeUp(OSError):
    """A call's whole time ran out; retried like a connection that timed out."""


class Refused(Failure):
    """Firestore answered a final no (400, 401, 403, 404, a redirect...): `code` is the HTTP
    status, `reason` Firestore's status word (FAILED_PRECONDITION) when it gave one."""

    def __init__(self, message, code, reason=""):
        super().__init__(UNAVAILABLE, message)
        self.code, self.reason = code, reason


class _Watch:
    """One call's limit on its whole time. A socket timeout bounds each read alone, so a server
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
    """(status, headers, body) within `seconds` from the start. Raises TimeUp at the limit,
    OSError when the connection fails, HTTPException when the answer is not HTTP or cut short."""
    if seconds <= 0:
        raise TimeUp("no time left for another call")
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
            raise TimeUp(f"no whole answer within {seconds:g}s")
        return status, headers, body
    except (OSError, http.client.HTTPException):
        if watch.expired:
            raise TimeUp(f"no whole answer within {seconds:g}s") from None
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


class Transport:
    """Calls with retries. `authorize()` gives the headers of each try (the token's); `say` logs a
    retry; `deadline` (time.monotonic()) bounds every call of a run when set."""

    def __init__(self, attempts=5, backoff=1.0, timeout=60.0, authorize=dict, say=print, deadline=None):
        self.attempts, self.backoff, self.timeout = attempts, backoff, timeout
        self.authorize, self.say, self.deadline = authorize, say, deadline

    def seconds_left(self):
        if self.deadline is None:
            return self.timeout
        return min(self.timeout, self.deadline - time.monotonic())

    def call(self, method, url, body=None, final=()):
        """One call's JSON answer. Only calls that give the same answer when repeated are made (a
        page at a fixed readTime and cursor, a whole-document PATCH), so a retry can neither
        duplicate nor drop anything. `final`: Firestore status words (DEADLINE_EXCEEDED for a
        COUNT) that are Refused at once, whatever the HTTP status."""
        data = None if body is None else json.dumps(body).encode()
        last, attempt = "", 0
        for attempt in range(1, self.attempts + 1):
            headers = {"Content-Type": "application/json", **self.authorize()}
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            wait = 0.0
            try:
                status, answer_headers, text = fetch(request, self.seconds_left())
                if 300 <= status < 400:
                    raise Refused(f"{method} {url}: HTTP {status}: a redirect to "
                                  f"{answer_headers.get('Location', '?')}, not followed", status)
                if status >= 400:
                    message, reason = summary(text.decode("utf-8", "replace"))
                    last = f"{method} {url}: HTTP {status}: {message}"
                    if (status != 429 and status < 500) or reason in final:
                        raise Refused(last, status, reason)
                    wait = _retry_after(answer_headers)
                else:
                    return json.loads(text or b"{}")
            except http.client.IncompleteRead as error:
                last = f"{method} {url}: a broken answer: IncompleteRead: cut short after {len(error.partial)} bytes"
            except http.client.HTTPException as error:
                last = f"{method} {url}: a broken answer: {type(error).__name__}: {str(error).strip()}"
            except OSError as error:
                last = f"{method} {url}: {getattr(error, 'reason', None) or error}"
            except ValueError as error:
                last = f"{method} {url}: the answer is not JSON: {error}"
            if self.deadline is not None and self.seconds_left() <= 0:
                break
            if attempt < self.attempts:
                pause = max(self.backoff * 2 ** (attempt - 1), wait)
                if self.deadline is not None:
                    pause = min(pause, max(self.deadline - time.monotonic(), 0))
                self.say(f"{last}; try {attempt} of {self.attempts}, next in {pause:g}s")
                time.sleep(pause)
        raise Failure(UNAVAILABLE, f"{last} (gave up after {attempt} tries)")


def _retry_after(headers):
    try:
        return min(float(headers.get("Retry-After", "0")), 300.0)
    except (TypeError, ValueError):
        return 0.0
