"""The stand-in for the ``ollama/ollama`` image: ``ollama serve``, ``ollama list``, ``ollama pull``.

No image registry is reachable here, so the compose stack runs this instead (a test double,
named as such). ``serve`` is the project's Ollama-shaped server (tests/servers) on
0.0.0.0:11434 answering each kind of call as the fault suite's model does (tests/faults:
statements become facts, replies are "Noted."), with what a real server adds: models exist
once pulled (kept in the ``/root/.ollama`` volume), ``/api/embed`` gives real
all-MiniLM-L6-v2 vectors (fastembed, the model copied into the image), ``/api/version``.

For the test, on the published port: ``GET /standin/calls`` lists the chat calls (kind,
client address, last user text); ``POST /standin/hold`` makes extraction calls wait until
``POST /standin/release``. The ``ollama`` command is ``ollama_cli``.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.faults.llm_stand_in import CallKind, kind_of, last_user_text, normal_answer
from tests.servers.ollama_server import Held, OllamaServer, Reply

MODELS_FILE = Path("/root/.ollama/standin-models.json")
EMBEDDING_MODEL_DIRECTORY = Path("/standin/model")
PORT = 11434
HELD = (CallKind.EXTRACTION, CallKind.COMBINED)
NO_SEARCH = json.dumps({"search": False, "queries": [], "time_range": None})


def tagged(name: str) -> str:
    """Ollama's full name of a model: ``all-minilm`` is ``all-minilm:latest``."""
    return name if ":" in name else f"{name}:latest"


class Embedding:
    """all-MiniLM-L6-v2 from the copied ONNX files, loaded on first use."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            if self._model is None:
                from fastembed import TextEmbedding
                from fastembed.common.model_description import ModelSource, PoolingType

                TextEmbedding.add_custom_model(
                    model="local/all-MiniLM-L6-v2",
                    pooling=PoolingType.MEAN,
                    normalization=True,
                    sources=ModelSource(hf="local/none"),
                    dim=384,
                    model_file="model.onnx",
                )
                self._model = TextEmbedding(
                    "local/all-MiniLM-L6-v2", specific_model_path=str(self._directory)
                )
            return [vector.tolist() for vector in self._model.embed(list(texts))]


@dataclass
class StandInOllama(OllamaServer):
    embedding: Embedding = field(default_factory=lambda: Embedding(EMBEDDING_MODEL_DIRECTORY))
    calls: list[dict[str, str]] = field(default_factory=list)
    gate: threading.Event | None = None

    def __post_init__(self) -> None:
        self.models = tuple(json.loads(MODELS_FILE.read_text())) if MODELS_FILE.exists() else ()
        self.responder = self.answer

    def pull(self, name: str) -> None:
        with self._lock:
            if tagged(name) not in self.models:
                self.models = (*self.models, tagged(name))
            MODELS_FILE.parent.mkdir(parents=True, exist_ok=True)
            MODELS_FILE.write_text(json.dumps(self.models))

    def answer(self, body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        if kind is CallKind.OTHER and "search" in body["format"].get("properties", {}):
            return NO_SEARCH
        answer = normal_answer(kind, body)
        with self._lock:
            gate = self.gate
        if kind in HELD and gate is not None and isinstance(answer, str):
            return Held(gate, answer)
        return answer

    def record(self, client: str, body: dict[str, Any]) -> None:
        call = {"kind": kind_of(body).value, "client": client, "text": last_user_text(body)}
        with self._lock:
            self.calls.append(call)

    def hold(self, holding: bool) -> None:
        with self._lock:
            gate, self.gate = self.gate, (threading.Event() if holding else None)
        if gate is not None:
            gate.set()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self
        base: Any = super()._handler_class()

        class Handler(base):  # type: ignore[misc]
            rfile: io.BufferedIOBase

            def do_GET(self) -> None:
                if self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-standin"})
                elif self.path == "/standin/calls":
                    with owner._lock:
                        self._send(200, {"calls": list(owner.calls)})
                else:
                    super().do_GET()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw or b"{}")
                if self.path == "/api/pull":
                    owner.pull(str(body.get("model") or body.get("name")))
                    self._send(200, {"status": "success"})
                elif self.path == "/api/embed":
                    if tagged(str(body.get("model"))) not in owner.models:
                        self._send(404, {"error": f'model "{body.get("model")}" not found'})
                        return
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vectors = owner.embedding.embed([str(text) for text in texts])
                    self._send(200, {"model": body["model"], "embeddings": vectors})
                elif self.path in ("/standin/hold", "/standin/release"):
                    owner.hold(self.path == "/standin/hold")
                    self._send(200, {})
                else:
                    if self.path == "/api/chat":
                        owner.record(self.client_address[0], body)
                    self.rfile = io.BytesIO(raw)
                    super().do_POST()

        return Handler


def serve() -> None:
    server = StandInOllama()
    server.host, server.port = "0.0.0.0", PORT
    server.start()
    print(f"stand-in Ollama listening on :{PORT}, models: {list(server.models)}", flush=True)
    threading.Event().wait()
