"""The stand-in's ``ollama`` command: ``serve``, and ``list`` / ``pull NAME`` as clients.

``list`` is the compose file's health check, run every few seconds: it imports nothing but
the standard library (the server's module loads the memory package, seconds on a busy
machine, past the check's timeout).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

PORT = 11434


def request(path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    host = os.environ.get("OLLAMA_HOST", f"http://127.0.0.1:{PORT}").rstrip("/")
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(f"{host}{path}", data=data, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def main(argv: Sequence[str]) -> int:
    """The three sub-commands the compose file uses."""
    command, *arguments = list(argv) or ["serve"]
    try:
        if command == "serve":
            from tests.deploy.standins.ollama import serve

            serve()
            return 0
        if command == "list":
            print("NAME")
            for model in request("/api/tags")["models"]:
                print(model["name"])
            return 0
        if command == "pull" and len(arguments) == 1:
            print(request("/api/pull", {"model": arguments[0], "stream": False})["status"])
            return 0
    except (urllib.error.URLError, OSError) as error:
        print(f"Error: could not connect to ollama server: {error}", file=sys.stderr)
        return 1
    print(f"the stand-in knows serve, list and pull NAME, not {' '.join(argv)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
