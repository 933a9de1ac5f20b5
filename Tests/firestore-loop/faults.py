"""A forwarding proxy in front of the real emulator that fails some requests on purpose: answers
503 to some, 429 to others, and closes the connection without an answer on others, so a test can
show what the hooks do when Firestore has trouble in the middle of a fetch; or runs a test's
function before forwarding a request, so that Google's client can write while a fetch is paging.
Every other request goes to the emulator unchanged, and its answer comes back unchanged."""
import http.server
import threading
import urllib.error
import urllib.request


class FaultyProxy:
    def __init__(self, upstream, faults, before=None):
        """faults: request number (1-based) -> 503, 429 or "drop"; before: request number ->
        a function run before that request is forwarded."""
        self.upstream = upstream
        self.faults = dict(faults)
        self.before = dict(before or {})
        self.requests = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self):
                with proxy.lock:
                    proxy.requests += 1
                    fault = proxy.faults.get(proxy.requests)
                    before = proxy.before.get(proxy.requests)
                if before:
                    before()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if fault == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault:
                    self.send_response(fault)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    return
                request = urllib.request.Request(f"http://{proxy.upstream}{self.path}", data=body or None,
                                                 method=self.command,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
