"""A forwarding proxy in front of the real emulator that fails some requests on purpose, so a test
can show what the hooks do when Firestore, or the network, has trouble in the middle of a fetch;
or runs a test's function before forwarding a request, so that Google's client can write while a
fetch is paging. Every other request goes to the emulator unchanged, and its answer comes back
unchanged. The proxy also keeps the Authorization header of every request, and sends none on,
and counts the documents in the runQuery answers it passes back whole (what Firestore bills).

Faults, by request number (1-based):
  503, 429        that status, instead of forwarding
  "drop"          the connection closed without an answer
  "garbage"       a line that is not an HTTP status line, then the connection closed
  "truncate"      the emulator's answer, cut after half its bytes though its length says more
  "trickle"       the emulator's answer, one byte every 1.5 s
  "empty"         200 and an empty stream: []
  "error-item"    a streamed error after half the emulator's items, as Google's streamed JSON
                  reports a query failing part way (the status is 200 by then); the rest dropped
  "short"         the emulator's answer without its last document
  "repeat"        the answer's first document twice
  "non-object"    a number in place of the answer's fourth item
  "nameless"      the answer's fourth document without its name
"""
import http.server
import json
import threading
import time
import urllib.error
import urllib.request


def rewrite(fault, items):
    """The emulator's runQuery items as the fault changes them."""
    if fault == "empty":
        return []
    if fault == "error-item":
        return items[: len(items) // 2] + [{"error": {"code": 503, "message": "injected: the query stopped part way",
                                                      "status": "UNAVAILABLE"}}]
    if fault == "short":
        last = max(i for i, item in enumerate(items) if "document" in item)
        return items[:last] + items[last + 1:]
    if fault == "repeat":
        return items[:1] + items
    if fault == "non-object":
        return items[:3] + [42] + items[4:]
    if fault == "nameless":
        items = json.loads(json.dumps(items))
        del items[3]["document"]["name"]
        return items
    raise ValueError(f"unknown fault {fault!r}")


class FaultyProxy:
    def __init__(self, upstream, faults, before=None):
        """faults: request number (1-based) -> one of the faults above; before: request number ->
        a function run before that request is forwarded."""
        self.upstream = upstream
        self.faults = dict(faults)
        self.before = dict(before or {})
        self.requests = 0
        self.authorizations = []
        self.documents = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, data, length=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def forward(self):
                with proxy.lock:
                    proxy.requests += 1
                    fault = proxy.faults.get(proxy.requests)
                    before = proxy.before.get(proxy.requests)
                    proxy.authorizations.append(self.headers.get("Authorization"))
                if before:
                    before()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if fault == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault == "garbage":
                    self.close_connection = True
                    self.wfile.write(b"SSH-2.0-not-http\r\n\r\n")
                    self.connection.close()
                    return
                if isinstance(fault, int):
                    self.answer(fault, b"{}")
                    return
                request = urllib.request.Request(f"http://{proxy.upstream}{self.path}", data=body or None,
                                                 method=self.command,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                if fault == "truncate":
                    self.close_connection = True
                    self.answer(status, data[: len(data) // 2], length=len(data))
                    self.connection.close()
                elif fault == "trickle":
                    self.close_connection = True
                    self.answer(status, b"", length=len(data))
                    try:
                        for byte in data:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(1.5)
                    except OSError:
                        pass  # the hook gave up, as it should
                elif fault:
                    self.answer(status, json.dumps(rewrite(fault, json.loads(data))).encode())
                else:
                    if status == 200 and self.path.endswith(":runQuery"):
                        with proxy.lock:
                            proxy.documents += sum(1 for item in json.loads(data) if "document" in item)
                    self.answer(status, data)

            do_GET = do_POST = do_PATCH = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
