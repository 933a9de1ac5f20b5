"""HTTP apart from Firestore's meaning, against a real local server: the whole-call limit, retries
as the Retry policy says (full jitter, Retry-After a floor) within the deadline, final answers, a 401
answered with one new token, redirects never followed (the token stays home), a stop that ends a
call's tries at once; batchGet's answer judged whole; the token's sources (the metadata server
retried, what a failure says was tried), its form, its redaction, and a token command killed with
its children; the errors' statuses and their trip across a pipe."""
import http.server
import json
import os
import pickle
import signal
import socket
import sys
import tempfile
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import auth, stop  # noqa: E402
from rankings_night.firestore import GOOGLE, Firestore  # noqa: E402
from rankings_night.log import one_line  # noqa: E402
from rankings_night.statuses import Failure, status_of  # noqa: E402
from rankings_night.stream import Broken  # noqa: E402
from rankings_night.transport import (FirestoreError, NoCredentials, Refused, Retry, TimeUp, Transport,  # noqa: E402
                                      Unavailable)


class Server:
    """A real local HTTP server: every request recorded (method, path, Authorization) and
    answered by handle(handler, number)."""

    def __init__(self, handle):
        self.requests, self.headers, self.bodies = [], [], []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                server.bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.headers.append(dict(self.headers))
                server.requests.append((self.command, self.path, self.headers.get("Authorization")))
                try:
                    handle(self, len(server.requests))
                except OSError:
                    pass
            do_GET = do_POST = do_PATCH = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()


def send(handler, status, body=b"[]", **headers):
    handler.send_response(status)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def trickle(handler, _):
    handler.send_response(200)
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    for _ in range(100):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.3)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def error(status, message, reason):
    return json.dumps({"error": {"code": status, "message": message, "status": reason}}).encode()


FOUND = {"name": "projects/p/databases/(default)/documents/weekly_rankings/all_time",
         "updateTime": "2026-01-01T00:00:00.000001Z"}


def night_settings(emulator_host=None, token_command=None):
    """The four settings Firestore.from_settings reads."""
    return types.SimpleNamespace(firestore_project="p", firestore_database="(default)",
                                 firestore_token_command=token_command, emulator_host=emulator_host)


def sleeping(sleep):
    """A Transport's stop that never stops, pauses with `sleep` and has no call to cut."""
    return types.SimpleNamespace(check=lambda: None, sleep=sleep, cuts=set())


class Calls(harness.Case):
    def call(self, handle, retry=Retry(attempts=2, initial=0.01), **options):
        said = []
        transport = Transport(**dict({"retry": retry, "timeout": 5, "credentials": None, "say": said.append,
                                      "deadline": None, "stop": sleeping(time.sleep)}, **options))
        with Server(handle) as server:
            try:
                return transport.call("POST", server.url + "/v1/x", {}), said, server.requests
            except FirestoreError as failure:
                return failure, said, server.requests

    def test_a_good_answer(self):
        answer, said, _ = self.call(lambda h, n: send(h, 200, b'[{"done": true}]'))
        self.expect("answer", answer, [{"done": True}])
        self.expect("retries", said, [])

    def test_a_trickling_answer_is_cut_off_at_the_whole_call_limit(self):
        failure, said, _ = self.call(trickle, timeout=0.8)
        self.assertIsInstance(failure, Unavailable)
        self.expect("status", status_of(failure), 69)
        self.expect_in("message", "no whole answer within 0.8s (gave up after 2 tries)", str(failure))
        self.expect_in("retry said", "try 1 of 2", said[0])

    def test_the_run_deadline_ends_the_tries(self):
        failure, _, _ = self.call(trickle, timeout=30, retry=Retry(attempts=5, initial=0.01),
                                  deadline=time.monotonic() + 0.6)
        self.assertIsInstance(failure, TimeUp)
        self.expect_in("message", "(gave up after 1 tries: the deadline comes before another)", str(failure))
        self.expect("status", status_of(failure), 69)

    def test_the_deadline_ends_the_tries_before_their_number(self):
        failure, _, requests = self.call(lambda h, n: send(h, 503, error(503, "busy", "UNAVAILABLE")),
                                         retry=Retry(attempts=1000, initial=0.05, maximum=0.05),
                                         deadline=time.monotonic() + 0.5)
        self.assertIsInstance(failure, TimeUp)
        self.expect_in("message", "(gave up after", str(failure))
        # The try the deadline cuts is counted, and may or may not have reached the server by then
        # (on a loaded machine a try left a millisecond is sent but never answered).
        self.expect("tries counted, less the requests the server saw", failure.tries - len(requests) in (0, 1), True)
        self.assertLess(len(requests), 1000)

    def test_a_pause_that_overruns_the_deadline_counts_no_try_that_was_not_made(self):
        # A loaded machine's sleep, stood in for by one that sleeps past the deadline.
        said = []
        transport = Transport(retry=Retry(attempts=5, initial=0.05, maximum=0.05), timeout=5, credentials=None,
                              say=said.append, deadline=time.monotonic() + 0.5,
                              stop=sleeping(lambda seconds: time.sleep(seconds + 0.6)))
        with Server(lambda h, n: send(h, 503, error(503, "busy", "UNAVAILABLE"))) as server:
            with self.assertRaises(TimeUp) as raised:
                transport.call("POST", server.url + "/v1/x", {})
        self.expect("tries", raised.exception.tries, 1)
        self.expect("requests", len(server.requests), 1)
        self.expect_in("message", "(gave up after 1 tries: the deadline comes before another)", str(raised.exception))

    def test_server_trouble_is_retried_then_given_up(self):
        cases = [
            (lambda h, n: send(h, 503, error(503, "busy", "UNAVAILABLE")), "HTTP 503: busy"),
            (lambda h, n: (send(h, 200, b"[{}"), setattr(h, "close_connection", True)) and None, "not JSON"),
            (lambda h, n: (h.wfile.write(b"garbage\r\n\r\n"), setattr(h, "close_connection", True)) and None,
             "a broken answer: BadStatusLine: garbage"),
        ]
        for handle, said in cases:
            with self.subTest(said=said):
                failure, retries, requests = self.call(handle)
                self.assertIsInstance(failure, Unavailable)
                self.expect_in("message", said, str(failure))
                self.expect("tries", len(requests), 2)

    def test_a_busy_answer_then_a_good_one_with_retry_after(self):
        answers = {1: (429, error(429, "slow down", "RESOURCE_EXHAUSTED")), 2: (200, b"[]")}
        answer, said, requests = self.call(lambda h, n: send(h, *answers[n], Retry_After="1"))
        self.expect("answer", answer, [])
        self.expect("tries", len(requests), 2)
        self.expect_in("waits what the server asks", "HTTP 429: slow down; try 1 of 2, next in 1s", said[0])

    def test_the_pauses_slept_are_the_policys_each_drawn_at_random_up_to_its_ceiling(self):
        drawn, slept = [], []

        def uniform(low, high):
            drawn.append((low, high))
            return high / 2
        failure, _, requests = self.call(lambda h, n: send(h, 503, error(503, "busy", "UNAVAILABLE")),
                                         retry=Retry(attempts=6, initial=1, maximum=10),
                                         stop=sleeping(slept.append), uniform=uniform)
        self.expect("tries", len(requests), 6)
        self.expect("drawn from", drawn, [(0.0, 1), (0.0, 2), (0.0, 4), (0.0, 8), (0.0, 10)])
        self.expect("slept", slept, [0.5, 1, 2, 4, 5])

    def test_retry_after_is_a_floor_under_the_jitter(self):
        slept = []
        answers = {1: (429, b"{}"), 2: (429, b"{}"), 3: (200, b"[]")}
        self.call(lambda h, n: send(h, *answers[n], Retry_After="7"), retry=Retry(attempts=3, initial=0.01),
                  stop=sleeping(slept.append))
        self.expect("slept", slept, [7.0, 7.0])

    def test_full_jitter_spreads_the_streams_and_keeps_under_the_ceiling(self):
        policy = Retry(initial=1, maximum=5)
        for tries, ceiling in ((1, 1), (2, 2), (3, 4), (4, 5), (9, 5)):
            pauses = [policy.pause(tries) for _ in range(16)]
            self.assertTrue(all(0 <= p <= ceiling for p in pauses), f"try {tries}: {pauses}")
            self.assertGreater(len(set(pauses)), 1, f"try {tries}: sixteen streams in lockstep: {pauses}")
        self.expect("a floor", policy.pause(1, floor=3.5), 3.5)
        self.expect("a floor of a server's mistake", policy.pause(1, floor=86400), 300.0)

    def test_final_answers_are_not_retried(self):
        failure, _, requests = self.call(lambda h, n: send(h, 400, error(400, "too old", "FAILED_PRECONDITION")))
        self.assertIsInstance(failure, Refused)
        self.expect("what it says", (failure.code, failure.reason), (400, "FAILED_PRECONDITION"))
        self.expect("status", status_of(failure), 69)
        self.expect("tries", len(requests), 1)

    def test_a_status_word_named_final_is_refused_at_once(self):
        with Server(lambda h, n: send(h, 504, error(504, "too slow", "DEADLINE_EXCEEDED"))) as server:
            transport = Transport(Retry(attempts=3, initial=0.01), 5, None, lambda m: None, None, sleeping(time.sleep))
            with self.assertRaises(Refused) as raised:
                transport.call("POST", server.url + "/v1/x", {}, final=("DEADLINE_EXCEEDED",))
            self.expect("tries", len(server.requests), 1)
        self.expect("what it says", (raised.exception.code, raised.exception.reason), (504, "DEADLINE_EXCEEDED"))

    def test_a_redirect_is_not_followed_and_the_token_stays_home(self):
        class Token:
            def headers(self):
                return {"Authorization": "Bearer ya29.secret"}

            def refresh(self, sent):
                return True
        with Server(lambda h, n: send(h, 200, b"[]")) as elsewhere:
            for status in (301, 302, 307, 308):
                with self.subTest(status=status):
                    failure, _, requests = self.call(lambda h, n: send(h, status, b"", Location=elsewhere.url + "/steal"),
                                                     credentials=Token())
                    self.assertIsInstance(failure, Refused)
                    self.expect_in("message", f"HTTP {status}: a redirect to {elsewhere.url}/steal, not followed",
                                   str(failure))
                    self.expect("tries", len(requests), 1)
            self.expect("requests the other host saw", elsewhere.requests, [])

    def test_a_403_says_where_the_token_came_from(self):
        def forbidden(h, n):
            send(h, 403, error(403, "insufficient scopes", "PERMISSION_DENIED"))
        with Server(forbidden) as server:
            firestore = Firestore("p", api=server.url + "/v1", credentials=auth.Credentials("echo ya29.x"))
            with self.assertRaises(Refused) as raised:
                firestore.get_document("weekly_rankings/all_time")
            self.expect_in("hint", "HTTP 403: insufficient scopes (the token is RANKINGS_FIRESTORE_TOKEN_COMMAND's",
                           str(raised.exception))
            self.expect("the token was sent to the endpoint", server.requests[0][2], "Bearer ya29.x")
            self.assertNotIn("ya29.x", auth.redact(str(raised.exception)))


class Stops(harness.Case):
    """A stop (stop.STOP, as the night's signal handler sets it) ends a call's tries at once: no try
    after it reaches the server, a pause ends when it comes, and the call raises stop.Stopped as it is."""

    def tearDown(self):
        stop.STOP.reset()

    def firestore(self, server):
        return Firestore("p", api=server.url + "/v1", retry=Retry(attempts=5, initial=30), say=lambda m: None)

    def test_a_stop_in_the_pause_between_tries_ends_the_call(self):
        def busy(h, n):
            send(h, 503, error(503, "busy", "UNAVAILABLE"), Retry_After="30")
            threading.Timer(0.3, stop.STOP.set, (signal.SIGTERM,)).start()
        with Server(busy) as server:
            started = time.monotonic()
            with self.assertRaises(stop.Stopped) as raised:
                self.firestore(server).get_document("weekly_rankings/all_time")
            self.assertLess(time.monotonic() - started, 10, "the 30 s pause was slept out")
            time.sleep(0.2)
            self.expect("requests", len(server.requests), 1)
        self.expect("status", (type(raised.exception), status_of(raised.exception)), (stop.Stopped, 143))

    def test_a_stop_during_a_try_lets_no_other_try_start(self):
        def busy(h, n):
            stop.STOP.set(signal.SIGINT)
            send(h, 503, error(503, "busy", "UNAVAILABLE"))
        with Server(busy) as server:
            firestore = self.firestore(server)
            with self.assertRaises(stop.Stopped):
                firestore.call("POST", "/documents:runAggregationQuery", {})
            with self.assertRaises(stop.Stopped):
                firestore.commit([])
            self.expect("requests", len(server.requests), 1)


    def test_a_stop_cuts_a_try_in_flight(self):
        # 0.5's first stop waited out a held answer to its 60 s: podman's 10 s killed the night first.
        def held(h, n):
            threading.Timer(0.3, stop.STOP.set, (signal.SIGTERM,)).start()
            time.sleep(20)
            send(h, 200, b"[]")
        with Server(held) as server:
            started = time.monotonic()
            with self.assertRaises(stop.Stopped):
                self.firestore(server).call("POST", "/documents:runAggregationQuery", {})
            self.assertLess(time.monotonic() - started, 10, "the held answer was waited for")
            self.expect("requests", len(server.requests), 1)
            self.expect("no cut left registered", stop.STOP.cuts, set())


class Clients(harness.Case):
    def test_the_nights_client_is_the_emulators_or_googles(self):
        google = Firestore.from_settings(night_settings(token_command="echo ya29.x"), print)
        self.expect("Google's", (google.api, google.transport.credentials.command, google.transport.retry,
                                 google.transport.timeout),
                    (GOOGLE, "echo ya29.x", Retry(attempts=5, initial=1.0), 60.0))
        emulator = Firestore.from_settings(night_settings("127.0.0.1:8080"), print)
        self.expect("the emulator's", (emulator.api, emulator.transport.credentials.headers(), emulator.database_path),
                    ("http://127.0.0.1:8080/v1", {}, "projects/p/databases/(default)"))

    def test_batch_get_gives_the_document_or_none_and_firestores_read_time(self):
        name = "projects/p/databases/(default)/documents/weekly_rankings/all_time"
        found = {"name": name, "updateTime": "2026-01-01T00:00:00.000001Z", "createTime": "2026-01-01T00:00:00Z"}
        rows = [
            ([{"missing": name, "readTime": "2026-12-01T00:00:00.5Z"}], (None, "2026-12-01T00:00:00.5Z")),
            ([{"found": found, "readTime": "2026-12-01T00:00:01Z"}], (found, "2026-12-01T00:00:01Z")),
            ([{"found": dict(found, fields={"week_id": {"stringValue": "all_time"}}), "readTime": "2026-12-01T00:00:01Z"}],
             (dict(found, fields={"week_id": {"stringValue": "all_time"}}), "2026-12-01T00:00:01Z")),
            ([], "not one document's answer: []"),
            ([{"missing": name}], "not one document's answer"),
            ([{"found": dict(found, name=name + "x"), "readTime": "2026-12-01T00:00:01Z"}], "not one document's answer"),
            ([{"missing": name, "readTime": "t"}] * 2, "not one document's answer"),
            ({"found": found, "readTime": "2026-12-01T00:00:01Z"}, "not one document's answer"),
        ]
        for answer, expected in rows:
            with self.subTest(answer=answer), Server(lambda h, n: send(h, 200, json.dumps(answer).encode())) as server:
                firestore = Firestore("p", api=server.url + "/v1", say=print)
                try:
                    got = firestore.batch_get("weekly_rankings/all_time")
                except Broken as broken:
                    got = str(broken)
                    self.expect_in("why", expected, got)
                    self.expect("status", status_of(broken), 69)
                else:
                    self.expect("answer", got, expected)
                self.expect("asked", (server.requests[0][:2], json.loads(server.bodies[0])),
                            (("POST", "/v1/projects/p/databases/(default)/documents:batchGet"), {"documents": [name]}))


class Refresh(harness.Case):
    """A token that expires mid-fetch: Firestore answers 401, the token is dropped, a new one
    fetched once and the call made again; a second 401 is final."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-refresh.")
        self.counter = os.path.join(self.work, "n")
        with open(self.counter, "w") as f:
            f.write("0")
        # Each run prints a new token: ya29.token0, ya29.token1...
        self.command = f'n=$(cat {self.counter}); echo $((n + 1)) >{self.counter}; echo ya29.token$n'

    def firestore(self, server, said):
        return Firestore("p", api=server.url + "/v1", credentials=auth.Credentials(self.command),
                                 retry=Retry(attempts=3, initial=0.01), say=said.append)

    def test_a_401_gets_a_new_token_once_and_the_same_call_again(self):
        def handle(h, n):
            if h.headers.get("Authorization") == "Bearer ya29.token0":
                send(h, 401, error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED"))
            else:
                send(h, 200, json.dumps([{"found": FOUND, "readTime": "2026-12-01T00:00:01Z"}]).encode())
        said = []
        with Server(handle) as server:
            firestore = self.firestore(server, said)
            self.expect("answer", firestore.get_document("weekly_rankings/all_time"), FOUND)
            self.expect("answer after", firestore.get_document("weekly_rankings/all_time"), FOUND)
            self.expect("tokens sent", [r[2] for r in server.requests],
                        ["Bearer ya29.token0", "Bearer ya29.token1", "Bearer ya29.token1"])
        self.expect("said", len(said), 1)
        self.expect_in("said", "HTTP 401: Request had invalid authentication credentials.; a new access token, "
                               "and the call again", said[0])
        self.assertNotIn("token0", said[0])

    def test_a_second_401_is_final(self):
        said = []
        with Server(lambda h, n: send(h, 401, error(401, "no", "UNAUTHENTICATED"))) as server:
            with self.assertRaises(Refused) as raised:
                self.firestore(server, said).get_document("weekly_rankings/all_time")
            self.expect("tokens sent", [r[2] for r in server.requests], ["Bearer ya29.token0", "Bearer ya29.token1"])
        self.expect("code", raised.exception.code, 401)

    def test_on_the_emulator_a_401_is_final_at_once(self):
        with Server(lambda h, n: send(h, 401, error(401, "no", "UNAUTHENTICATED"))) as server:
            firestore = Firestore.from_settings(night_settings(server.url.removeprefix("http://"), "echo ya29.x"), print)
            with self.assertRaises(Refused):
                firestore.get_document("weekly_rankings/all_time")
            self.expect("requests", [r[2] for r in server.requests], [None])


class Documents(harness.Case):
    def test_get_document_is_none_when_missing_and_commit_sends_the_precondition(self):
        def handle(h, n):
            if h.path.endswith(":batchGet"):
                send(h, 200, json.dumps([{"missing": FOUND["name"], "readTime": "2026-12-01T00:00:01Z"}]).encode())
            else:
                send(h, 200, b'{"writeResults": [{"updateTime": "2026-01-01T00:00:00.000001Z"}]}')
        with Server(handle) as server:
            firestore = Firestore("p", api=server.url + "/v1/", say=print)
            self.expect("absent", firestore.get_document("weekly_rankings/all_time"), None)
            fields = {"week_id": {"stringValue": "all_time"}}
            firestore.commit([firestore.write("weekly_rankings/all_time", fields, update_time="2026-01-01T00:00:00Z")])
            firestore.commit([firestore.write("weekly_rankings/all_time", fields, exists=False)])
            self.expect("paths", [r[:2] for r in server.requests],
                        [("POST", "/v1/projects/p/databases/(default)/documents:batchGet"),
                         ("POST", "/v1/projects/p/databases/(default)/documents:commit"),
                         ("POST", "/v1/projects/p/databases/(default)/documents:commit")])
            name = "projects/p/databases/(default)/documents/weekly_rankings/all_time"
            self.expect("bodies", [json.loads(b) for b in server.bodies[1:]], [
                {"writes": [{"update": {"name": name, "fields": fields},
                             "currentDocument": {"updateTime": "2026-01-01T00:00:00Z"}}]},
                {"writes": [{"update": {"name": name, "fields": fields}, "currentDocument": {"exists": False}}]}])

    def test_other_refusals_of_a_get_are_raised(self):
        with Server(lambda h, n: send(h, 403, error(403, "denied", "PERMISSION_DENIED"))) as server:
            with self.assertRaises(Refused):
                Firestore("p", api=server.url + "/v1", say=print).get_document("a/b")


class Errors(harness.Case):
    def test_each_error_maps_to_one_status(self):
        for error, status in ((Refused("x", 400), 69), (Unavailable("x", 5), 69), (TimeUp("x", 1), 69),
                              (NoCredentials("x"), 78), (Failure(65, "x"), 65), (ValueError("x"), 70)):
            self.expect(type(error).__name__, status_of(error), status)

    def test_errors_cross_a_pipe_whole(self):
        for error in (Refused("no", 400, "FAILED_PRECONDITION"), Unavailable("gone", 5, "HTTP 503: busy"),
                      TimeUp("late", 2, "HTTP 429"), NoCredentials("none")):
            error.documents_read = 7
            back = pickle.loads(pickle.dumps(error))
            self.expect(type(error).__name__, (type(back), str(back), back.__dict__),
                        (type(error), str(error), error.__dict__))


class Sources(harness.Case):
    """Where the token comes from: the metadata server tried for a while (Workload Identity's
    answers a pod only after its first seconds), else gcloud; a failure says what was tried."""

    def credentials(self, metadata, gcloud=("/nonexistent/gcloud", "auth", "print-access-token"), attempts=4):
        return auth.Credentials(None, metadata=metadata, gcloud=gcloud,
                                metadata_retry=Retry(attempts=attempts, initial=0.01, unknown_host=False))

    def test_the_metadata_server_unreachable_at_first_is_tried_again(self):
        def handle(h, n):
            if n <= 2:      # not answering yet: the connection closed without a word
                h.close_connection = True
                return
            send(h, 200, b'{"access_token": "ya29.from-metadata", "expires_in": 3599, "token_type": "Bearer"}')
        with Server(handle) as server:
            credentials = self.credentials(server.url + "/token")
            self.expect("headers", credentials.headers(), {"Authorization": "Bearer ya29.from-metadata"})
            self.expect("headers again", credentials.headers(), {"Authorization": "Bearer ya29.from-metadata"})
            self.expect("requests", len(server.requests), 3)
            self.expect("asked as Google asks", {h.get("Metadata-Flavor") for h in server.headers}, {"Google"})
        self.expect("source", credentials.source, "the metadata server")

    def test_a_metadata_token_about_to_expire_is_fetched_again(self):
        with Server(lambda h, n: send(h, 200, json.dumps({"access_token": f"ya29.m{n}", "expires_in": 30}).encode())) \
                as server:
            credentials = self.credentials(server.url + "/token")
            self.expect("first", credentials.headers(), {"Authorization": "Bearer ya29.m1"})
            self.expect("second", credentials.headers(), {"Authorization": "Bearer ya29.m2"})

    def test_no_token_anywhere_says_what_was_tried_and_how_to_give_one(self):
        port = closed_port()
        with self.assertRaises(NoCredentials) as raised:
            self.credentials(f"http://127.0.0.1:{port}/token", attempts=3).headers()
        message = str(raised.exception)
        self.expect("status", status_of(raised.exception), 78)
        for said in ("no access token: RANKINGS_FIRESTORE_TOKEN_COMMAND is not set; ",
                     "the metadata server (127.0.0.1) is unreachable (3 tries in ",
                     "Connection refused; ",
                     "gcloud auth print-access-token: /nonexistent/gcloud is not installed (the container image holds "
                     "no gcloud). To give one, set RANKINGS_FIRESTORE_TOKEN_COMMAND to a command that prints an "
                     "access token, or run with a service account (a Google Cloud VM's or Cloud Run job's, or GKE "
                     "Workload Identity's)"):
            self.expect_in("message", said, message)

    def test_off_google_cloud_the_metadata_server_is_asked_once(self):
        with self.assertRaises(NoCredentials) as raised:
            auth.Credentials(None, metadata="http://metadata.invalid/token",
                             gcloud=("/bin/sh", "-c", "echo 'ERROR: (gcloud.auth) no active account' >&2; exit 1")).headers()
        self.expect_in("message", "the metadata server (metadata.invalid) is unreachable (1 try in ", str(raised.exception))
        self.expect_in("message", "; gcloud auth print-access-token: ERROR: (gcloud.auth) no active account. To give "
                                  "one, set RANKINGS_FIRESTORE_TOKEN_COMMAND", str(raised.exception))

    def test_a_metadata_server_without_an_account_is_said(self):
        with Server(lambda h, n: send(h, 404, b"not found")) as server:
            with self.assertRaises(NoCredentials) as raised:
                self.credentials(server.url + "/token").headers()
            self.expect("requests", len(server.requests), 1)
        self.expect_in("message", "the metadata server (127.0.0.1) answered HTTP 404 (no service account); gcloud",
                       str(raised.exception))

    def test_a_token_command_that_fails_is_said_alone(self):
        with self.assertRaises(NoCredentials) as raised:
            auth.Credentials("echo nope >&2; exit 3").headers()
        self.expect("message", str(raised.exception), "no access token: RANKINGS_FIRESTORE_TOKEN_COMMAND: nope")


class Tokens(harness.Case):
    def test_a_token_of_more_than_one_line_is_refused_unseen(self):
        for printed in ("ya29.SECRET\nsecond\n", "ya29.SECRET\r\n\r\nmore", "ya29.SEC RET", "ya29.SECRET\x00",
                        "ya29.SECR\u00c9T"):
            with self.subTest(printed=printed), self.assertRaises(NoCredentials) as raised:
                auth.checked(printed, "RANKINGS_FIRESTORE_TOKEN_COMMAND")
            self.expect("status", status_of(raised.exception), 78)
            self.assertNotIn("SEC", str(raised.exception))
        with self.assertRaises(NoCredentials):
            auth.checked(" \n", "gcloud")

    def test_a_token_is_kept_out_of_every_message_and_a_message_is_one_line(self):
        self.expect("token", auth.checked("ya29.kept-out\n", "x"), "ya29.kept-out")
        self.expect("redacted", auth.redact("Invalid header value b'Bearer ya29.kept-out'"),
                    "Invalid header value b'Bearer [access token]'")
        self.expect("one line", one_line("all\ntime\r\x1b[2J (\u00e9)"), "all\\ntime\\r\\x1b[2J (\u00e9)")

    def test_a_command_at_its_limit_is_killed_with_its_children(self):
        limit, auth.COMMAND_SECONDS = auth.COMMAND_SECONDS, 1
        try:
            with tempfile.TemporaryDirectory() as work:
                pid_file = os.path.join(work, "child")
                with self.assertRaises(NoCredentials) as raised:
                    auth.Credentials(f"sleep 60 & echo $! >{pid_file}; wait").headers()
                with open(pid_file) as f:
                    child = int(f.read())
        finally:
            auth.COMMAND_SECONDS = limit
        self.expect("message", str(raised.exception),
                    "no access token: RANKINGS_FIRESTORE_TOKEN_COMMAND ran past 1s: stopped, with all it started")
        for _ in range(100):
            try:
                with open(f"/proc/{child}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return
            except FileNotFoundError:
                return
            time.sleep(0.05)
        self.fail(f"the token command's child {child} still runs")


if __name__ == "__main__":
    harness.main()
