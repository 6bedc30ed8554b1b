"""The stand-in for the ``searxng/searxng`` image (a test double: no registry is reachable).

The project's SearXNG-shaped server (tests/servers) on 0.0.0.0:8080, as SearXNG listens in
its container: ``/healthz`` for the health check, JSON search with its recorded answers. As
a SearXNG whose engines reach the web, a query nothing was recorded for finds nothing
without failed engines (the shaped server's default is a SearXNG cut off from the web).
"""

from __future__ import annotations

import json
import sys
from http.server import ThreadingHTTPServer

from tests.servers.searxng_server import SearxngShapedServer, handler_for

PORT = 8080


class OnlineSearxng(SearxngShapedServer):
    def respond(self, path: str, parameters: dict[str, str]) -> tuple[int, str, bytes]:
        status, content_type, body = super().respond(path, parameters)
        if status == 200 and content_type == "application/json":
            answer = json.loads(body)
            answer["unresponsive_engines"] = []
            body = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        return status, content_type, body


def main() -> int:
    server = ThreadingHTTPServer(("0.0.0.0", PORT), handler_for(OnlineSearxng()))
    print(f"stand-in SearXNG listening on :{PORT}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
