"""HTTP apart from Firestore's meaning, against a real local server: the whole-call limit, retries
with back-off and Retry-After, final answers, redirects never followed (the token stays home);
the token's form, its redaction, and a token command killed with its children."""
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import auth, settings  # noqa: E402
from rankings_night.firestore import Firestore  # noqa: E402
from rankings_night.log import one_line  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402
from rankings_night.transport import Refused, Transport  # noqa: E402


class Server:
    """A real local HTTP server: every request recorded (method, path, Authorization) and
    answered by handle(handler, number)."""

    def __init__(self, handle):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
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


class Calls(harness.Case):
    def call(self, handle, **options):
        said = []
        transport = Transport(**dict({"attempts": 2, "backoff": 0.01, "timeout": 5, "say": said.append}, **options))
        with Server(handle) as server:
            try:
                return transport.call("POST", server.url + "/v1/x", {}), said, server.requests
            except Failure as failure:
                return failure, said, server.requests

    def test_a_good_answer(self):
        answer, said, _ = self.call(lambda h, n: send(h, 200, b'[{"done": true}]'))
        self.expect("answer", answer, [{"done": True}])
        self.expect("retries", said, [])

    def test_a_trickling_answer_is_cut_off_at_the_whole_call_limit(self):
        failure, said, _ = self.call(trickle, timeout=0.8)
        self.expect("status", failure.status, 69)
        self.expect_in("message", "no whole answer within 0.8s (gave up after 2 tries)", str(failure))
        self.expect_in("retry said", "try 1 of 2", said[0])

    def test_the_run_deadline_ends_the_tries(self):
        failure, _, _ = self.call(trickle, timeout=30, attempts=5, deadline=time.monotonic() + 0.6)
        self.expect_in("message", "(gave up after 1 tries)", str(failure))

    def test_server_trouble_is_retried_then_given_up(self):
        cases = [
            (lambda h, n: send(h, 503, b'{"error": {"message": "busy", "status": "UNAVAILABLE"}}'), "HTTP 503: busy"),
            (lambda h, n: (send(h, 200, b"[{}"), setattr(h, "close_connection", True)) and None, "not JSON"),
            (lambda h, n: (h.wfile.write(b"garbage\r\n\r\n"), setattr(h, "close_connection", True)) and None,
             "a broken answer: BadStatusLine: garbage"),
        ]
        for handle, said in cases:
            with self.subTest(said=said):
                failure, retries, requests = self.call(handle)
                self.expect_in("message", said, str(failure))
                self.expect("tries", len(requests), 2)

    def test_a_busy_answer_then_a_good_one_with_retry_after(self):
        answers = {1: (429, b'{"error": {"message": "slow down", "status": "RESOURCE_EXHAUSTED"}}'),
                   2: (200, b"[]")}
        answer, said, requests = self.call(lambda h, n: send(h, *answers[n], Retry_After="1"))
        self.expect("answer", answer, [])
        self.expect("tries", len(requests), 2)
        self.expect_in("waits what the server asks", "HTTP 429: slow down; try 1 of 2, next in 1s", said[0])

    def test_final_answers_are_not_retried(self):
        failure, _, requests = self.call(lambda h, n: send(
            h, 400, b'{"error": {"code": 400, "message": "too old", "status": "FAILED_PRECONDITION"}}'))
        self.assertIsInstance(failure, Refused)
        self.expect("what it says", (failure.code, failure.reason), (400, "FAILED_PRECONDITION"))
        self.expect("tries", len(requests), 1)

    def test_a_redirect_is_not_followed_and_the_token_stays_home(self):
        with Server(lambda h, n: send(h, 200, b"[]")) as elsewhere:
            for status in (301, 302, 307, 308):
                with self.subTest(status=status):
                    failure, _, requests = self.call(lambda h, n: send(h, status, b"", Location=elsewhere.url + "/steal"),
                                                     authorize=lambda: {"Authorization": "Bearer ya29.secret"})
                    self.assertIsInstance(failure, Refused)
                    self.expect_in("message", f"HTTP {status}: a redirect to {elsewhere.url}/steal, not followed",
                                   str(failure))
                    self.expect("tries", len(requests), 1)
            self.expect("requests the other host saw", elsewhere.requests, [])

    def test_a_403_says_where_the_token_came_from(self):
        def forbidden(h, n):
            send(h, 403, b'{"error": {"code": 403, "message": "insufficient scopes", "status": "PERMISSION_DENIED"}}')
        with Server(forbidden) as server:
            s = settings.from_environment({"RANKINGS_FIRESTORE_PROJECT": "p", "RANKINGS_FIRESTORE_ENDPOINT": server.url,
                                           "RANKINGS_FIRESTORE_TOKEN_COMMAND": "echo ya29.x"})
            with self.assertRaises(Refused) as raised:
                Firestore(s, print).get("weekly_rankings/all_time")
            self.expect_in("hint", "HTTP 403: insufficient scopes (the token is RANKINGS_FIRESTORE_TOKEN_COMMAND's",
                           str(raised.exception))
            self.expect("the token was sent to the endpoint", server.requests[0][2], "Bearer ya29.x")
            self.assertNotIn("ya29.x", auth.redact(str(raised.exception)))


class Tokens(harness.Case):
    def test_a_token_of_more_than_one_line_is_refused_unseen(self):
        for printed in ("ya29.SECRET\nsecond\n", "ya29.SECRET\r\n\r\nmore", "ya29.SEC RET", "ya29.SECRET\x00",
                        "ya29.SECR\u00c9T"):
            with self.subTest(printed=printed), self.assertRaises(Failure) as raised:
                auth.checked(printed, "RANKINGS_FIRESTORE_TOKEN_COMMAND")
            self.expect("status", raised.exception.status, 78)
            self.assertNotIn("SEC", str(raised.exception))
        with self.assertRaises(Failure):
            auth.checked(" \n", "gcloud")

    def test_a_token_is_kept_out_of_every_message_and_a_message_is_one_line(self):
        self.expect("token", auth.checked("ya29.kept-out\n", "x"), "ya29.kept-out")
        self.expect("redacted", auth.redact("Invalid header value b'Bearer ya29.kept-out'"),
                    "Invalid header value b'Bearer [access token]'")
        self.expect("one line", one_line("all\ntime\r\x1b[2J (\u00e9)"), "all\\ntime\\r\\x1b[2J (\u00e9)")

    def test_a_command_at_its_limit_is_killed_with_its_children(self):
        with tempfile.TemporaryDirectory() as work:
            pid_file = os.path.join(work, "child")
            with self.assertRaises(subprocess.TimeoutExpired):
                auth.run_bounded(["/bin/sh", "-c", f"sleep 60 & echo $! >{pid_file}; wait"], 1)
            with open(pid_file) as f:
                child = int(f.read())
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
