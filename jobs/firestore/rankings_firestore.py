# What rankings-fetch-firestore and rankings-publish-firestore share: their settings, how they
# get a token, one way to call Firestore's REST API with retries and a limit on each call's
# whole time, and the two reads a fetch proves a night complete with: a query paged at one
# readTime, and Firestore's own count of it at that time. Installed next to them and imported
# from there (a script's own directory is first on Python's path).
#
# Only Python 3's standard library: the package depends on python3 and nothing from PyPI, so an
# operator installs no client library and no virtual environment.
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

# sysexits.h, as `rankings` and rankings-cron use them.
EX_USAGE = 64
EX_DATAERR = 65
EX_NOINPUT = 66
EX_UNAVAILABLE = 69
EX_SOFTWARE = 70
EX_CANTCREAT = 73
EX_CONFIG = 78

# Documents a runQuery page asks for (Firestore's answers stay well under its size limits).
PAGE_SIZE = 1000
# How long a token command (the operator's, or gcloud) may run before its process group is killed.
TOKEN_COMMAND_SECONDS = 120


class Failure(Exception):
    """A failure with the exit status it maps to; main() prints it and exits."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# Every access token this run has held: no message may carry one (say() takes them out).
_secrets = set()


def redact(text):
    for secret in _secrets:
        text = text.replace(secret, "[access token]")
    return text


def one_line(text):
    """A log line stays one line whatever it quotes (a file name with a newline in it, an
    answer's raw status line): control characters are written as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def say(program, message):
    print(f"{program}: {one_line(redact(str(message)))}", file=sys.stderr, flush=True)


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
        # The whole of one call: connecting, sending, and reading the answer to its last byte.
        self.timeout = self.number(environ, "RANKINGS_FIRESTORE_TIMEOUT_SECONDS", 60.0, float)
        if self.emulator:
            self.api = f"http://{self.emulator}/v1"
        else:
            # Another address of the same API (Private Service Connect; a test's proxy): the
            # token is fetched and sent as to Google's.
            endpoint = environ.get("RANKINGS_FIRESTORE_ENDPOINT", "").rstrip("/")
            self.api = endpoint or "https://firestore.googleapis.com/v1"
        self.database_path = f"projects/{self.project}/databases/{self.database}"
        # time.monotonic() by which every call must have ended, when the caller bounds a whole
        # run; None: each call is bounded by the timeout alone.
        self.deadline = None
        self._token = None
        self.token_source = None

    @staticmethod
    def number(environ, name, default, kind):
        text = environ.get(name, "")
        if not text:
            return default
        try:
            value = kind(text)
        except ValueError:
            raise Failure(EX_CONFIG, f"{name} must be a number, not {text!r}") from None
        if not value > 0 or value == float("inf"):
            raise Failure(EX_CONFIG, f"{name} must be more than 0, not {text!r}")
        return value

    def call_seconds(self):
        """How long the next call may take: the timeout, or less when the run's deadline is nearer."""
        if self.deadline is None:
            return self.timeout
        return min(self.timeout, self.deadline - time.monotonic())

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

    # Where the token came from, and what a 403 with it most likely means (docs/firestore.md,
    # Credentials): the metadata server's account wins silently over a key activated with gcloud.
    FORBIDDEN_HINTS = {
        "RANKINGS_FIRESTORE_TOKEN_COMMAND": "the token is RANKINGS_FIRESTORE_TOKEN_COMMAND's: give its account "
                                            "roles/datastore.user on the project",
        "the metadata server": "the token is this VM's service account (the metadata server), not a key "
                               "activated with gcloud: give that account roles/datastore.user and the "
                               "cloud-platform scope, or set RANKINGS_FIRESTORE_TOKEN_COMMAND=\"gcloud auth "
                               "print-access-token\" (see Credentials in rankings(1))",
        "gcloud auth print-access-token": "the token is gcloud's active account for this user: give it "
                                          "roles/datastore.user on the project (gcloud auth list shows which)",
    }

    def forbidden_hint(self):
        return self.FORBIDDEN_HINTS.get(self.token_source, "")

    def _fetch_token(self):
        if self.token_command:
            self.token_source = "RANKINGS_FIRESTORE_TOKEN_COMMAND"
            return self._run_token_command(["/bin/sh", "-c", self.token_command], "RANKINGS_FIRESTORE_TOKEN_COMMAND")
        request = urllib.request.Request(
            "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token",
            headers={"Metadata-Flavor": "Google"})
        try:
            status, body = fetch(request, 2)
            token = json.loads(body)["access_token"] if status == 200 else None
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
            token = None  # not on Google Cloud, or no service account: gcloud's account next
        if isinstance(token, str):
            self.token_source = "the metadata server"
            return checked_token(token, "the metadata server")
        self.token_source = "gcloud auth print-access-token"
        return self._run_token_command(["gcloud", "auth", "print-access-token"], "gcloud auth print-access-token")

    @staticmethod
    def _run_token_command(argv, what):
        try:
            done = run_bounded(argv, TOKEN_COMMAND_SECONDS)
        except subprocess.TimeoutExpired:
            raise Failure(EX_CONFIG, f"no access token: {what} did not finish in {TOKEN_COMMAND_SECONDS}s "
                                     "(stopped, with every process it started)") from None
        except OSError as error:
            raise Failure(EX_CONFIG, f"no access token: {what}: {error.strerror}") from None
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] \
                or [f"exit status {done.returncode}"]
            raise Failure(EX_CONFIG, f"no access token: {what}: {detail[0]}")
        return checked_token(done.stdout.decode("utf-8", "replace"), what)


def checked_token(text, what):
    """The token in a command's output, or a failure that does not show it: it goes into an
    HTTP header, so one line of visible ASCII (RFC 6750's token is narrower still)."""
    token = text.strip()
    if not token:
        raise Failure(EX_CONFIG, f"no access token: {what} printed nothing")
    if not all("!" <= c <= "~" for c in token):
        raise Failure(EX_CONFIG, f"no access token: what {what} printed is not a single line of "
                                 "visible ASCII characters (not shown)")
    _secrets.add(token)
    return token


def run_bounded(argv, seconds):
    """argv's output (bytes), run in a process group of its own: at the limit the whole group is
    killed, so a shell's children cannot outlive it, and TimeoutExpired is raised."""
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
        # Not communicate(): a process that left the group could hold the pipes open for ever.
        process.stdout.close()
        process.stderr.close()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


class TimeUp(OSError):
    """A call's whole time ran out; retried like a connection that timed out."""


class _Watch:
    """One call's limit on its whole time. A socket timeout bounds each read alone, so a server
    sending a byte a second would hold a call for ever; at the limit this shuts the connection's
    socket down, which ends whatever read or write is waiting on it."""

    def __init__(self, seconds):
        self.expired = False
        self._lock = threading.Lock()
        self._socket = None  # a duplicate of the connection's socket, ours to shut down and close
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def start(self):
        self._timer.start()

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


def _watched(connection_class, watch):
    class Watched(connection_class):
        def connect(self):
            super().connect()
            watch.attach(self.sock)
    return Watched


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch):
        super().__init__()
        self.watch = watch

    def http_open(self, request):
        return self.do_open(_watched(http.client.HTTPConnection, self.watch), request)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch):
        super().__init__()
        self.watch = watch

    def https_open(self, request):
        return self.do_open(_watched(http.client.HTTPSConnection, self.watch), request, context=self._context)


def fetch(request, seconds):
    """(HTTP status, the answer's whole body) within `seconds` from the start, through urllib (so
    the https_proxy environment is honoured). Raises TimeUp at the limit, OSError when the
    connection fails, http.client.HTTPException when the answer is not HTTP or is cut short."""
    if seconds <= 0:
        raise TimeUp("no time left for another call")
    watch = _Watch(seconds)
    opener = urllib.request.build_opener(_HTTPHandler(watch), _HTTPSHandler(watch))
    watch.start()
    try:
        try:
            with opener.open(request, timeout=seconds) as answer:
                status, body = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read()
        if watch.expired:
            raise TimeUp(f"no whole answer within {seconds:g}s")
        return status, body
    except (OSError, http.client.HTTPException):
        if watch.expired:
            raise TimeUp(f"no whole answer within {seconds:g}s") from None
        raise
    finally:
        watch.close()


def retryable(status):
    """Worth another try: rate limited, or the server's trouble. Everything else (400, 401, 403,
    404...) would get the same answer again."""
    return status == 429 or status >= 500


def call(settings, program, method, url, body=None):
    """One REST call, its JSON answer decoded. Each try is bounded in its whole time (the
    settings' call_seconds()). Retried with exponential backoff on 429, 5xx, connection errors,
    an answer cut short or not HTTP, and one that is not JSON (up to RANKINGS_FIRESTORE_ATTEMPTS
    tries); callers send only requests that give the same answer when repeated (a page at a
    fixed readTime, a whole-document PATCH), so a retry can neither duplicate nor drop anything."""
    data = None if body is None else json.dumps(body).encode()
    last = ""
    for attempt in range(1, settings.attempts + 1):
        headers = {"Content-Type": "application/json"}
        token = settings.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            status, text = fetch(request, settings.call_seconds())
            if status >= 400:
                last = f"{method} {url}: HTTP {status}: {summary(text.decode('utf-8', 'replace'))}"
                if not retryable(status):
                    if status == 403 and settings.forbidden_hint():
                        last += f" ({settings.forbidden_hint()})"
                    raise Failure(EX_UNAVAILABLE, last)
            else:
                return json.loads(text or b"{}")
        except http.client.IncompleteRead as error:
            last = f"{method} {url}: a broken answer: IncompleteRead: cut short after {len(error.partial)} bytes"
        except http.client.HTTPException as error:  # not HTTP (BadStatusLine), a header line too long
            last = f"{method} {url}: a broken answer: {type(error).__name__}: {str(error).strip()}"
        except OSError as error:  # refused, reset, timed out, DNS
            last = f"{method} {url}: {getattr(error, 'reason', None) or error}"
        except ValueError as error:
            last = f"{method} {url}: the answer is not JSON: {error}"
        if settings.deadline is not None and settings.call_seconds() <= 0:
            break
        if attempt < settings.attempts:
            pause = settings.backoff * 2 ** (attempt - 1)
            say(program, f"{last}; try {attempt} of {settings.attempts}, next in {pause:g}s")
            time.sleep(pause)
    raise Failure(EX_UNAVAILABLE, f"{last} (gave up after {attempt} tries)")


def summary(text):
    """Firestore's own error message when the answer carries one, else the answer's start."""
    try:
        answer = json.loads(text)
        if isinstance(answer, list):
            answer = answer[0]
        return answer["error"]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return text.strip()[:300]


# Reading a query whole. Firestore streams a runQuery answer as a JSON array of items: documents,
# each with the readTime; `done` on the last item when the server says so; an `error` item when
# the query failed part way (the HTTP status is 200 by then). A page is whole only when the
# array is, every item is an object and none is an error. The query's end is a whole page with
# fewer documents than its limit; names (and every ordering value) strictly increase across all
# pages, so nothing was repeated or skipped back to; and the caller then asks Firestore to count
# the same query at the same readTime.

class Broken(Failure):
    """Firestore's answer is not a whole, well-formed stream: the night cannot be proven complete."""

    def __init__(self, message):
        super().__init__(EX_UNAVAILABLE, message)


def error_message(item):
    """The message of a streamed `error` item, or the item's error as it is."""
    error = item["error"]
    return error.get("message", error) if isinstance(error, dict) else error


def read_page(answer, where):
    """(documents, readTime, done) of one runQuery answer, or Broken."""
    if not isinstance(answer, list):
        raise Broken(f"{where}: the answer is not a stream (a JSON array) but {summary(json.dumps(answer))}")
    documents, read_time, done = [], None, False
    for number, item in enumerate(answer, 1):
        if not isinstance(item, dict):
            raise Broken(f"{where}: item {number} is not an object but {json.dumps(item)[:100]}")
        if done:
            raise Broken(f"{where}: item {number} follows the item marked done")
        if "error" in item:
            raise Broken(f"{where}: Firestore stopped the stream at item {number} with an error: {error_message(item)}")
        if "readTime" in item:
            if not isinstance(item["readTime"], str):
                raise Broken(f"{where}: item {number}'s readTime is not a string")
            read_time = read_time or item["readTime"]
        if "document" in item:
            document = item["document"]
            if not isinstance(document, dict) or not isinstance(document.get("name"), str):
                raise Broken(f"{where}: item {number} holds a document without a name")
            documents.append(document)
        done = item.get("done") is True
    if read_time is None:
        raise Broken(f"{where}: the stream holds no readTime ({len(answer)} items): not Firestore's whole answer")
    return documents, read_time, done


# Firestore's order of values of different types (its documented "value type ordering").
_TYPE_RANK = {"nullValue": 0, "booleanValue": 1, "integerValue": 2, "doubleValue": 2, "timestampValue": 3,
              "stringValue": 4, "referenceValue": 6}
_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z")


def value_key(value):
    """A Python value that sorts as Firestore sorts this REST Value, for the types a query of
    ours orders by; Broken for any other."""
    if isinstance(value, dict) and len(value) == 1:
        (kind, inner), = value.items()
        rank = _TYPE_RANK.get(kind)
        try:
            if kind in ("integerValue", "doubleValue"):
                return rank, float(inner) if kind == "doubleValue" else int(inner)
            if kind == "timestampValue":
                whole = _TIMESTAMP.fullmatch(inner)
                return rank, (whole[1], int((whole[2] or "").ljust(9, "0")))
            if kind in ("stringValue", "referenceValue"):
                return rank, str(inner)
            if kind == "booleanValue":
                return rank, bool(inner)
            if kind == "nullValue":
                return rank, 0
        except (TypeError, ValueError):
            pass
    raise Broken(f"cannot order by the value {json.dumps(value)[:100]}")


class Query:
    """One query over a top-level collection, read whole at one readTime, a page at a time:
    optional `where` (a REST Filter), ordered ascending by `order_by` (field paths, the last
    one __name__, so that a cursor names one place). read_time: the first page's when None."""

    def __init__(self, settings, program, collection, where=None, order_by=("__name__",), read_time=None,
                 page_size=PAGE_SIZE):
        if not order_by or order_by[-1] != "__name__":
            raise ValueError("a paged query must end its order with __name__")
        self.settings, self.program, self.collection = settings, program, collection
        self.where, self.order_by, self.read_time, self.page_size = where, tuple(order_by), read_time, page_size
        self.prefix = f"{settings.database_path}/documents/{collection}/"
        self.url = f"{settings.api}/{settings.database_path}/documents:runQuery"

    def structured_query(self):
        query = {"from": [{"collectionId": self.collection}]}
        if self.where is not None:
            query["where"] = self.where
        return query

    def ordering(self, document):
        """The document's cursor values, and its place in the query's order as a Python key."""
        values = []
        for path in self.order_by:
            if path == "__name__":
                values.append({"referenceValue": document["name"]})
                continue
            value = {"mapValue": {"fields": document.get("fields", {})}}
            for part in path.split("."):
                value = (value.get("mapValue") or {}).get("fields", {}).get(part) if isinstance(value, dict) else None
            if value is None:
                raise Broken(f"{document['name']} has no {path}, which the query orders by")
            values.append(value)
        # The name's last part alone: every document here shares the collection's prefix.
        key = tuple(value_key(v) for v in values[:-1]) + (document["name"][len(self.prefix):],)
        return values, key

    def pages(self):
        """Each page's documents, in order, once it has arrived whole; Failure for any answer
        that is not Firestore's whole stream and for any document out of order."""
        cursor, last_key, number = None, None, 0
        while True:
            number += 1
            query = dict(self.structured_query(),
                         orderBy=[{"field": {"fieldPath": p}, "direction": "ASCENDING"} for p in self.order_by],
                         limit=self.page_size)
            if cursor is not None:
                query["startAt"] = {"values": cursor, "before": False}
            body = {"structuredQuery": query}
            if self.read_time is not None:
                body["readTime"] = self.read_time
            where = f"runQuery page {number}"
            documents, read_time, _ = read_page(call(self.settings, self.program, "POST", self.url, body), where)
            if self.read_time is None:
                self.read_time = read_time
            for document in documents:
                name = document["name"]
                if not name.startswith(self.prefix) or "/" in name[len(self.prefix):]:
                    raise Broken(f"{where}: {name} is not a document of {self.prefix[:-1]}")
                cursor, key = self.ordering(document)
                if last_key is not None and not key > last_key:
                    raise Broken(f"{where}: {name} does not come after the document before it "
                                 "(a repeat or a step back)")
                last_key = key
            if len(documents) > self.page_size:
                raise Broken(f"{where}: {len(documents)} documents, more than the limit of {self.page_size}")
            yield documents
            if len(documents) < self.page_size:
                return

    def count(self):
        """Firestore's own count of the query's documents at its readTime (after pages())."""
        url = f"{self.settings.api}/{self.settings.database_path}/documents:runAggregationQuery"
        body = {"structuredAggregationQuery": {"structuredQuery": self.structured_query(),
                                               "aggregations": [{"alias": "documents", "count": {}}]},
                "readTime": self.read_time}
        return read_count(call(self.settings, self.program, "POST", url, body), "runAggregationQuery")


def read_count(answer, where):
    """The `documents` count of one runAggregationQuery answer, or Broken."""
    if not isinstance(answer, list):
        raise Broken(f"{where}: the answer is not a stream (a JSON array) but {summary(json.dumps(answer))}")
    counts = []
    for number, item in enumerate(answer, 1):
        if not isinstance(item, dict):
            raise Broken(f"{where}: item {number} is not an object")
        if "error" in item:
            raise Broken(f"{where}: Firestore stopped the stream with an error: {error_message(item)}")
        if "result" in item:
            try:
                counts.append(int(item["result"]["aggregateFields"]["documents"]["integerValue"]))
            except (KeyError, TypeError, ValueError):
                raise Broken(f"{where}: item {number} holds no integer count") from None
    if len(counts) != 1:
        raise Broken(f"{where}: {len(counts)} counts in the answer, not 1")
    return counts[0]


def main(program, work):
    """Runs work() and exits with its status, or a failure's: never a traceback, never a token,
    and never status 0 after a failure."""
    try:
        sys.exit(work())
    except Failure as failure:
        say(program, f"error: {failure}")
        sys.exit(failure.status)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 (a bug: one line, no traceback that could hold a token)
        say(program, f"error: unexpected {type(error).__name__}: {error} (a bug in {program})")
        sys.exit(EX_SOFTWARE)
