"""The lifecycle shared by the HTTP servers the tests start on 127.0.0.1.

A subclass says how to answer (``_handler_class``); this starts a stdlib
``ThreadingHTTPServer`` on a free port in a thread, stops it, and works as a context manager.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LoopbackServer:
    _server: ThreadingHTTPServer | None = None
    # Where it listens: 127.0.0.1 on a free port, unless a stand-in in a container says else.
    host: str = "127.0.0.1"
    port: int = 0

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        server = ThreadingHTTPServer((self.host, self.port), self._handler_class())
        server.daemon_threads = True
        # A short poll interval makes stop() quick.
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self._server = server
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
