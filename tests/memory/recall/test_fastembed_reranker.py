"""The fastembed cross-encoder wrapper: lazy load, the call, a remembered load failure.

No cross-encoder weights are reachable here, so the inference call is checked against a
scripted engine (test double); the real fastembed loading and its failure run for real.
"""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path
from typing import Any

import pytest

from memory.recall import FastEmbedReranker, RerankerError, RerankerUnavailable


class ScriptedEngine:
    """Stands in for ``TextCrossEncoder``: scores by word overlap, records calls."""

    def __init__(self, broken: bool = False, short: bool = False) -> None:
        self.calls: list[tuple[str, list[str], int]] = []
        self.broken = broken
        self.short = short

    def rerank(self, query: str, documents: list[str], batch_size: int = 64) -> Any:
        self.calls.append((query, documents, batch_size))
        if self.broken:
            raise RuntimeError("onnxruntime error")
        words = set(query.lower().split())
        scores = (float(len(words & set(d.lower().split()))) for d in documents)
        return list(scores)[:-1] if self.short else scores


async def test_loads_lazily_once_and_scores_in_passage_order() -> None:
    engines: list[ScriptedEngine] = []

    def factory() -> ScriptedEngine:
        engines.append(ScriptedEngine())
        return engines[-1]

    reranker = FastEmbedReranker(batch_size=16, engine_factory=factory)
    assert engines == []
    assert await reranker.rank("my sister anna", ["I like tea", "my sister is anna"]) == [0.0, 3.0]
    assert await reranker.rank("tea", ["tea", "coffee"]) == [1.0, 0.0]
    assert len(engines) == 1
    assert engines[0].calls[0] == ("my sister anna", ["I like tea", "my sister is anna"], 16)
    assert await reranker.rank("tea", []) == []


async def test_scoring_errors_are_translated() -> None:
    broken = FastEmbedReranker(engine_factory=lambda: ScriptedEngine(broken=True))
    with pytest.raises(RerankerError, match="onnxruntime error"):
        await broken.rank("q", ["a"])
    short = FastEmbedReranker(engine_factory=lambda: ScriptedEngine(short=True))
    with pytest.raises(RerankerError, match="1 scores for 2"):
        await short.rank("q", ["a", "b"])


async def test_real_fastembed_with_a_missing_directory_is_unavailable(tmp_path: Path) -> None:
    reranker = FastEmbedReranker(model_path=tmp_path / "no-such-model")
    with pytest.raises(RerankerUnavailable, match=r"memory\.reranker_model_path"):
        await reranker.rank("q", ["a"])


async def test_real_fastembed_without_a_download_is_unavailable_and_not_retried(
    tmp_path: Path,
) -> None:
    # local_files_only with an empty cache: fastembed's real loader fails without network.
    reranker = FastEmbedReranker(cache_dir=tmp_path, local_files_only=True)
    with pytest.raises(RerankerUnavailable, match="ms-marco-MiniLM-L-6-v2") as first:
        await reranker.rank("q", ["a"])
    with pytest.raises(RerankerUnavailable) as second:
        await reranker.rank("q", ["a"])
    assert second.value is first.value


async def test_unknown_model_name_is_unavailable() -> None:
    reranker = FastEmbedReranker("nobody/no-such-cross-encoder", local_files_only=True)
    with pytest.raises(RerankerUnavailable, match="not supported"):
        await reranker.rank("q", ["a"])


class SlowLoad:
    """An engine factory that takes a while, as a download does (runs in a worker thread)."""

    def __init__(self, seconds: float, fails: bool = False) -> None:
        self.seconds = seconds
        self.fails = fails
        self.calls = 0

    def __call__(self) -> ScriptedEngine:
        self.calls += 1
        time.sleep(self.seconds)
        if self.fails:
            raise ValueError("Could not load model from any source.")
        return ScriptedEngine()


async def test_a_slow_first_load_does_not_hold_the_call() -> None:
    factory = SlowLoad(0.5)
    reranker = FastEmbedReranker(load_wait=0.01, engine_factory=factory)
    with pytest.raises(RerankerError, match="still loading") as raised:
        await reranker.rank("tea", ["tea"])
    assert not isinstance(raised.value, RerankerUnavailable)
    await reranker.load()
    assert await reranker.rank("tea", ["tea", "milk"]) == [1.0, 0.0]
    assert factory.calls == 1


async def test_a_slow_failing_load_becomes_unavailable() -> None:
    factory = SlowLoad(0.2, fails=True)
    reranker = FastEmbedReranker(load_wait=0.01, engine_factory=factory)
    with pytest.raises(RerankerError, match="still loading"):
        await reranker.rank("tea", ["tea"])
    with pytest.raises(RerankerUnavailable, match="from any source"):
        await reranker.load()
    with pytest.raises(RerankerUnavailable):
        await reranker.rank("tea", ["tea"])
    assert factory.calls == 1


async def test_a_load_that_fails_while_nobody_waits_is_remembered_not_left_unretrieved() -> None:
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: unhandled.append(context))
    factory = SlowLoad(0.2, fails=True)
    reranker = FastEmbedReranker(load_wait=0.01, engine_factory=factory)
    with pytest.raises(RerankerError, match="still loading"):
        await reranker.rank("tea", ["tea"])
    await asyncio.sleep(0.5)  # the load fails in its thread; no lookup is waiting
    await reranker.aclose()
    gc.collect()
    assert unhandled == []
    with pytest.raises(RerankerUnavailable, match="from any source"):
        await reranker.rank("tea", ["tea"])
    assert factory.calls == 1
