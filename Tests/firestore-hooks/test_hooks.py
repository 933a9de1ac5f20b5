"""The Firestore hooks' own parts, without the emulator: how a runQuery and a count answer are
judged, how values order, the token's form and its redaction, one log line per message, a
command killed with its whole process group, a call cut off at its whole-time limit by a real
local server, and a full disk while writing a night. Run by run.sh (python3 -m unittest)."""
import contextlib
import http.server
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
hooks = os.path.join(root, "jobs", "firestore")
sys.path.insert(0, hooks)
sys.dont_write_bytecode = True
import rankings_firestore as fs  # noqa: E402


def load_hook(name):
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), os.path.join(hooks, name))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


fetch_hook = load_hook("rankings-fetch-firestore")
PREFIX = "projects/p/databases/(default)/documents/rating_events/"


def item(name, read_time="2026-11-26T05:00:00.000001Z", **more):
    return dict({"document": {"name": PREFIX + name, "fields": {}}, "readTime": read_time}, **more)


class Pages(unittest.TestCase):
    def broken(self, answer, message):
        with self.assertRaises(fs.Failure) as caught:
            fs.read_page(answer, "runQuery page 2")
        self.assertEqual(caught.exception.status, fs.EX_UNAVAILABLE)
        self.assertIn(message, str(caught.exception))
        self.assertTrue(str(caught.exception).startswith("runQuery page 2: "))

    def test_a_whole_page(self):
        documents, read_time, done = fs.read_page([item("a"), item("b", done=True)], "p")
        self.assertEqual([d["name"] for d in documents], [PREFIX + "a", PREFIX + "b"])
        self.assertEqual((read_time, done), ("2026-11-26T05:00:00.000001Z", True))

    def test_an_empty_collection_still_has_its_read_time(self):
        self.assertEqual(fs.read_page([{"readTime": "2026-11-26T05:00:00Z", "done": True}], "p"),
                         ([], "2026-11-26T05:00:00Z", True))

    def test_broken_streams(self):
        self.broken([], "the stream holds no readTime (0 items)")
        self.broken({"error": {"message": "denied"}}, "not a stream (a JSON array) but denied")
        self.broken([item("a"), 42], "item 2 is not an object but 42")
        self.broken([item("a"), "text"], "item 2 is not an object")
        self.broken([item("a"), {"error": {"code": 503, "message": "stopped"}}],
                    "Firestore stopped the stream at item 2 with an error: stopped")
        self.broken([item("a", done=True), item("b")], "item 2 follows the item marked done")
        self.broken([{"document": {"fields": {}}, "readTime": "t"}], "item 1 holds a document without a name")
        self.broken([{"document": {"name": 7}, "readTime": "t"}], "item 1 holds a document without a name")
        self.broken([{"document": [], "readTime": "t"}], "item 1 holds a document without a name")
        self.broken([{"document": {"name": "x"}}], "the stream holds no readTime")
        self.broken([{"readTime": 5}], "readTime is not a string")


class Counts(unittest.TestCase):
    def answer(self, value):
        return [{"result": {"aggregateFields": {"documents": value}}, "readTime": "t", "done": True}]

    def test_the_count(self):
        self.assertEqual(fs.read_count(self.answer({"integerValue": "12100"}), "c"), 12100)
        self.assertEqual(fs.read_count(self.answer({"integerValue": "0"}), "c"), 0)

    def test_broken_counts(self):
        for answer, message in (
                ([], "0 counts in the answer, not 1"),
                (self.answer({"integerValue": "1"}) * 2, "2 counts in the answer, not 1"),
                (self.answer({"doubleValue": 1.0}), "item 1 holds no integer count"),
                ([{"error": {"message": "too old"}}], "an error: too old"),
                ([3], "item 1 is not an object"),
                ({"result": 1}, "not a stream")):
            with self.assertRaises(fs.Failure) as caught:
                fs.read_count(answer, "runAggregationQuery")
            self.assertEqual(caught.exception.status, fs.EX_UNAVAILABLE)
            self.assertIn(message, str(caught.exception))


class Order(unittest.TestCase):
    def test_timestamps_order_by_time_not_by_text(self):
        # As text, "...:00Z" sorts after "...:00.5Z"; as times it comes first.
        texts = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000000001Z", "2026-01-01T00:00:00.5Z",
                 "2026-01-01T00:00:00.500000001Z", "2026-01-01T00:00:01Z"]
        keys = [fs.value_key({"timestampValue": t}) for t in texts]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(len(set(keys)), len(keys))

    def test_types_order_as_firestore_orders_them(self):
        values = [{"nullValue": None}, {"booleanValue": True}, {"integerValue": "-3"}, {"doubleValue": 2.5},
                  {"integerValue": "10"}, {"timestampValue": "1970-01-01T00:00:00Z"}, {"stringValue": "a"}]
        keys = [fs.value_key(v) for v in values]
        self.assertEqual(keys, sorted(keys))

    def test_values_it_cannot_order(self):
        for value in ({"mapValue": {}}, {"timestampValue": "yesterday"}, {"integerValue": "x"}, {}, 3):
            with self.assertRaises(fs.Failure):
                fs.value_key(value)

    def test_a_query_orders_by_its_fields_then_the_name(self):
        settings = fs.Settings({"RANKINGS_FIRESTORE_PROJECT": "p"})
        query = fs.Query(settings, "t", "rating_events", order_by=("timestamp", "__name__"))
        early = {"name": PREFIX + "z", "fields": {"timestamp": {"timestampValue": "2026-01-01T00:00:00Z"}}}
        late = {"name": PREFIX + "a", "fields": {"timestamp": {"timestampValue": "2026-01-01T00:00:00.1Z"}}}
        (early_cursor, early_key), (_, late_key) = query.ordering(early), query.ordering(late)
        self.assertLess(early_key, late_key)
        self.assertEqual(early_cursor, [{"timestampValue": "2026-01-01T00:00:00Z"}, {"referenceValue": early["name"]}])
        with self.assertRaises(ValueError):
            fs.Query(settings, "t", "rating_events", order_by=("timestamp",))


class Tokens(unittest.TestCase):
    def test_a_token_of_more_than_one_line_is_refused_unseen(self):
        for printed in ("ya29.SECRET\nsecond\n", "ya29.SECRET\r\n\r\nmore", "ya29.SEC RET", "ya29.SECRET\x00",
                        "ya29.SECRÉT"):
            with self.assertRaises(fs.Failure) as caught:
                fs.checked_token(printed, "RANKINGS_FIRESTORE_TOKEN_COMMAND")
            self.assertEqual(caught.exception.status, fs.EX_CONFIG)
            self.assertIn("no access token: what RANKINGS_FIRESTORE_TOKEN_COMMAND printed is not a single line",
                          str(caught.exception))
            self.assertNotIn("SEC", str(caught.exception))
        with self.assertRaises(fs.Failure):
            fs.checked_token(" \n", "gcloud")

    def test_a_token_is_kept_out_of_every_message(self):
        self.assertEqual(fs.checked_token("ya29.kept-out\n", "x"), "ya29.kept-out")
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            fs.say("hook", "Invalid header value b'Bearer ya29.kept-out'")
        self.assertEqual(said.getvalue(), "hook: Invalid header value b'Bearer [access token]'\n")

    def test_one_message_one_line(self):
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            fs.say("hook", "wrote weekly_rankings/all\ntime\r\x1b[2J (é)")
        self.assertEqual(said.getvalue(), "hook: wrote weekly_rankings/all\\ntime\\r\\x1b[2J (é)\n")

    def test_a_command_at_its_limit_is_killed_with_its_children(self):
        with tempfile.TemporaryDirectory() as work:
            pid_file = os.path.join(work, "child")
            started = time.monotonic()
            with self.assertRaises(subprocess.TimeoutExpired):
                fs.run_bounded(["/bin/sh", "-c", f"sleep 60 & echo $! >{pid_file}; wait"], 1)
            self.assertLess(time.monotonic() - started, 30)
            with open(pid_file) as f:
                child = int(f.read())
        # Gone, or a zombie waiting for a parent that does not reap (PID 1 in some containers).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{child}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                return
            if state == "Z":
                return
            time.sleep(0.05)
        self.fail(f"the token command's child {child} still runs (state {state})")

    def test_a_command_within_its_limit(self):
        done = fs.run_bounded(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], 10)
        self.assertEqual((done.returncode, done.stdout, done.stderr), (3, b"out\n", b"err\n"))


class Settings(unittest.TestCase):
    def test_numbers(self):
        for text in ("0", "-1", "nan", "inf", "abc", ""):
            environ = {"RANKINGS_FIRESTORE_PROJECT": "p", "RANKINGS_FIRESTORE_TIMEOUT_SECONDS": text}
            if not text:
                self.assertEqual(fs.Settings(environ).timeout, 60.0)
                continue
            with self.assertRaises(fs.Failure) as caught:
                fs.Settings(environ)
            self.assertEqual(caught.exception.status, fs.EX_CONFIG)

    def test_endpoint(self):
        base = {"RANKINGS_FIRESTORE_PROJECT": "p"}
        self.assertEqual(fs.Settings(base).api, "https://firestore.googleapis.com/v1")
        self.assertEqual(fs.Settings(dict(base, RANKINGS_FIRESTORE_ENDPOINT="http://127.0.0.1:9/v1/")).api,
                         "http://127.0.0.1:9/v1")
        self.assertEqual(fs.Settings(dict(base, FIRESTORE_EMULATOR_HOST="h:1",
                                          RANKINGS_FIRESTORE_ENDPOINT="http://x/v1")).api, "http://h:1/v1")


class Server:
    """A real local HTTP server answering every request with handle(handler)."""

    def __init__(self, handle):
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    handle(self)
                except OSError:
                    pass  # the client gave up

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/x"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def trickle(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    for _ in range(100):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.3)


def cut_short(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    handler.wfile.write(b"[{}")
    handler.close_connection = True


def not_json(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "8")
    handler.end_headers()
    handler.wfile.write(b"[{\"a\": 1")


def not_http(handler):
    handler.wfile.write(b"garbage\r\n\r\n")
    handler.close_connection = True


class Calls(unittest.TestCase):
    def settings(self, **more):
        environ = dict({"RANKINGS_FIRESTORE_PROJECT": "p", "FIRESTORE_EMULATOR_HOST": "unused:1",
                        "RANKINGS_FIRESTORE_BACKOFF_SECONDS": "0.01", "RANKINGS_FIRESTORE_ATTEMPTS": "2"}, **more)
        return fs.Settings(environ)

    def failed_call(self, handle, settings):
        server = Server(handle)
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said), self.assertRaises(fs.Failure) as caught:
                fs.call(settings, "hook", "POST", server.url, {})
        finally:
            server.close()
        self.assertEqual(caught.exception.status, fs.EX_UNAVAILABLE)
        return str(caught.exception), said.getvalue()

    def test_a_trickling_answer_is_cut_off_at_the_whole_call_limit(self):
        # A byte every 0.3 s keeps each read well inside any per-read timeout.
        started = time.monotonic()
        message, said = self.failed_call(trickle, self.settings(RANKINGS_FIRESTORE_TIMEOUT_SECONDS="0.8"))
        self.assertLess(time.monotonic() - started, 10)
        self.assertIn("no whole answer within 0.8s (gave up after 2 tries)", message)
        self.assertIn("try 1 of 2", said)

    def test_the_run_deadline_ends_the_tries(self):
        settings = self.settings(RANKINGS_FIRESTORE_TIMEOUT_SECONDS="30", RANKINGS_FIRESTORE_ATTEMPTS="5")
        settings.deadline = time.monotonic() + 0.6
        message, _ = self.failed_call(trickle, settings)
        self.assertIn("(gave up after 1 tries)", message)

    def test_an_answer_cut_short_not_json_or_not_http_is_retried_then_69(self):
        message, said = self.failed_call(cut_short, self.settings())
        self.assertIn("a broken answer: IncompleteRead", message)
        self.assertIn("try 1 of 2", said)
        message, said = self.failed_call(not_json, self.settings())
        self.assertIn("the answer is not JSON: ", message)
        self.assertIn("try 1 of 2", said)
        message, said = self.failed_call(not_http, self.settings())
        self.assertTrue(message.endswith("a broken answer: BadStatusLine: garbage (gave up after 2 tries)"), message)

    def test_a_403_names_where_the_token_came_from(self):
        def forbidden(handler):
            body = b'{"error": {"code": 403, "message": "Request had insufficient authentication scopes."}}'
            handler.send_response(403)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        settings = fs.Settings({"RANKINGS_FIRESTORE_PROJECT": "p", "RANKINGS_FIRESTORE_TOKEN_COMMAND": "echo ya29.x"})
        message, said = self.failed_call(forbidden, settings)
        self.assertIn("HTTP 403: Request had insufficient authentication scopes. (the token is "
                      "RANKINGS_FIRESTORE_TOKEN_COMMAND's: give its account roles/datastore.user", message)
        self.assertNotIn("ya29.x", message + said)
        settings.token_source = "the metadata server"
        message, _ = self.failed_call(forbidden, settings)
        self.assertIn("this VM's service account (the metadata server), not a key activated with gcloud", message)


class Writing(unittest.TestCase):
    def test_a_full_disk_is_73_naming_the_file(self):
        pages = iter([[{"name": PREFIX + "a", "fields": {}}] * 2000])
        with self.assertRaises(fs.Failure) as caught:
            fetch_hook.write_documents("/dev/full", pages)
        self.assertEqual(caught.exception.status, fs.EX_CANTCREAT)
        self.assertEqual(str(caught.exception), "cannot write /dev/full: No space left on device")

    def test_documents_one_per_line(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "rating_events.ndjson")
            count = fetch_hook.write_documents(path, iter([[{"name": "a", "fields": {"é": 1}}], [{"name": "b"}], []]))
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), '{"name":"a","fields":{"é":1}}\n{"name":"b"}\n')
        self.assertEqual(count, 2)


if __name__ == "__main__":
    unittest.main()
