"""Embeddings from an Ollama server's ``/api/embed``."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np
import ollama

from memory.embedding.base import Vectors, normalise
from memory.embedding.prompts import Prompts, TextKind, default_prompts
from memory.errors import EmbeddingError, EmbeddingModelUnavailable


class OllamaEmbedder:
    """``prompts`` defaults to the known prompts of ``model`` (Ollama adds none itself)."""

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout: float = 60.0,
        client: ollama.AsyncClient | None = None,
        prompts: Prompts | None = None,
    ) -> None:
        self._model = model
        self._prompts = default_prompts(model) if prompts is None else prompts
        self._host = host
        self._client = client or ollama.AsyncClient(host=host, timeout=timeout)

    @property
    def prompts(self) -> Prompts:
        return self._prompts

    @property
    def model_name(self) -> str:
        return f"ollama/{self._model}"

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        prompted = self._prompts.apply(texts, kind)
        try:
            response = await self._client.embed(model=self._model, input=prompted)
        except ollama.ResponseError as error:
            if error.status_code == 404:
                raise EmbeddingModelUnavailable(
                    f"Ollama at {self._host} has no model {self._model!r}: "
                    f"run `ollama pull {self._model}`"
                ) from error
            raise EmbeddingError(f"Ollama embedding failed: {error.error}") from error
        except (httpx.HTTPError, ConnectionError) as error:
            raise EmbeddingModelUnavailable(
                f"Ollama at {self._host} is not reachable: {error}"
            ) from error
        return normalise(np.asarray(response.embeddings, dtype=np.float32))

    async def aclose(self) -> None:
        client = getattr(self._client, "_client", None)
        if isinstance(client, httpx.AsyncClient):
            await client.aclose()
