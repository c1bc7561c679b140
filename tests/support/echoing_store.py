"""A Qdrant-speaking HTTP server on 127.0.0.1 that takes a collection, then answers every write
of points with 500 and a body quoting the request's api-key header: what a misconfigured proxy
or a chatty server does. It stops when the `with` block ends."""

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK = {"status": "ok", "time": 0}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        if path.endswith("/exists"):
            return self._send(200, {"result": {"exists": False}, **OK})
        if self.command == "PUT" and path.count("/") == 2:  # create the collection
            return self._send(200, {"result": True, **OK})
        if path.endswith("/index"):  # payload indexes
            return self._send(200, {"result": {"operation_id": 1, "status": "completed"}, **OK})
        if path.endswith("/points/scroll"):
            return self._send(200, {"result": {"points": [], "next_page_offset": None}, **OK})
        self._send(500, {"status": {"error": f"refused; your key was {self.headers.get('api-key')}"}, "time": 0})

    do_GET = do_PUT = do_POST = do_DELETE = _answer


@contextlib.contextmanager
def echoing_store() -> Iterator[int]:
    """The server's port while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
