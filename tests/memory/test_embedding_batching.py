"""The embedding batcher: one model call for concurrent callers, replies first, a bounded
cache without words, and every caller gets exactly its own rows."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from memory.embedding import EmbeddingBatcher, FastEmbedEmbedder, HashingEmbedder, TextKind, Vectors
from memory.errors import EmbeddingError
from tests.memory.write.gated import until


class CountingEmbedder:
    """Wraps a real embedder and records the texts of every model call (a spy)."""

    def __init__(self, inner: FastEmbedEmbedder | HashingEmbedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        self.calls.append(list(texts))
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


class GatedEmbedder(CountingEmbedder):
    """Holds every model call until the test opens the gate (test double for a slow model)."""

    def __init__(self) -> None:
        super().__init__(HashingEmbedder())
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.failure: Exception | None = None

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        self.calls.append(list(texts))
        self.entered.set()
        await self.gate.wait()
        if self.failure is not None:
            raise self.failure
        return await self.inner.embed(texts, kind)


async def test_concurrent_callers_share_calls_and_get_their_own_rows(
    embedder: FastEmbedEmbedder,
) -> None:
    spy = CountingEmbedder(embedder)
    batcher = EmbeddingBatcher(spy)
    requests = [[f"I have {n} cats", f"My sister lives in town {n}"] for n in range(12)]
    try:
        results = await asyncio.gather(*(batcher.replies.embed(texts) for texts in requests))
    finally:
        await batcher.aclose()
    for texts, vectors in zip(requests, results, strict=True):
        expected = await embedder.embed(texts)
        assert vectors.shape == (2, 384)
        assert np.allclose(vectors, expected, atol=1e-5)
    assert len(spy.calls) < len(requests)
    assert sorted(text for call in spy.calls for text in call) == sorted(
        text for texts in requests for text in texts
    )


async def test_waiting_reply_texts_go_before_background_texts() -> None:
    slow = GatedEmbedder()
    batcher = EmbeddingBatcher(slow)
    first = asyncio.create_task(batcher.background.embed(["queue fact one"]))
    await slow.entered.wait()  # the first call is in flight; the next ones wait
    later_background = asyncio.create_task(batcher.background.embed(["queue fact two"]))
    await asyncio.sleep(0)
    reply = asyncio.create_task(batcher.replies.embed(["what is my cat called?"]))
    await asyncio.sleep(0)
    slow.gate.set()
    await asyncio.gather(first, later_background, reply)
    await batcher.aclose()
    assert slow.calls == [["queue fact one"], ["what is my cat called?"], ["queue fact two"]]


async def test_a_text_seen_before_costs_no_model_call_and_the_cache_is_bounded() -> None:
    spy = CountingEmbedder(HashingEmbedder())
    batcher = EmbeddingBatcher(spy, cache_size=2)
    first = await batcher.replies.embed(["hello there"])
    again = await batcher.replies.embed(["hello there"])
    assert len(spy.calls) == 1
    assert np.array_equal(first, again)
    await batcher.replies.embed(["second text"])
    await batcher.replies.embed(["third text"])  # pushes "hello there" out
    await batcher.replies.embed(["hello there"])
    assert spy.calls[-1] == ["hello there"]
    await batcher.aclose()


async def test_the_cache_keeps_no_words() -> None:
    batcher = EmbeddingBatcher(HashingEmbedder())
    await batcher.replies.embed(["my secret is purple"])
    keys = list(batcher._cache)
    assert len(keys) == 1
    assert b"secret" not in keys[0]
    assert keys[0] != b"my secret is purple"
    await batcher.aclose()


async def test_repeated_texts_in_one_call_come_back_in_place() -> None:
    spy = CountingEmbedder(HashingEmbedder())
    batcher = EmbeddingBatcher(spy)
    vectors = await batcher.background.embed(["a b", "c d", "a b"])
    await batcher.aclose()
    assert spy.calls == [["a b", "c d"]]
    assert np.array_equal(vectors[0], vectors[2])
    assert not np.array_equal(vectors[0], vectors[1])


async def test_a_failed_call_fails_its_callers_and_the_batcher_goes_on() -> None:
    slow = GatedEmbedder()
    slow.failure = EmbeddingError("the model broke")
    batcher = EmbeddingBatcher(slow)
    first = asyncio.create_task(batcher.replies.embed(["one"]))
    await slow.entered.wait()
    second = asyncio.create_task(batcher.replies.embed(["two"]))
    third = asyncio.create_task(batcher.replies.embed(["three"]))
    slow.gate.set()
    results = await asyncio.gather(first, second, third, return_exceptions=True)
    assert all(isinstance(result, EmbeddingError) for result in results)
    slow.failure = None
    assert (await batcher.replies.embed(["four"])).shape == (1, 64)
    await batcher.aclose()


async def test_a_cancelled_caller_does_not_disturb_the_others() -> None:
    slow = GatedEmbedder()
    batcher = EmbeddingBatcher(slow)
    first = asyncio.create_task(batcher.replies.embed(["one"]))
    await slow.entered.wait()
    leaving = asyncio.create_task(batcher.replies.embed(["two"]))
    staying = asyncio.create_task(batcher.replies.embed(["three"]))
    await asyncio.sleep(0)
    leaving.cancel()
    slow.gate.set()
    await first
    assert (await staying).shape == (1, 64)
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert ["two"] not in slow.calls and ["two", "three"] not in slow.calls
    await batcher.aclose()


async def test_closing_cancels_calls_still_waiting() -> None:
    slow = GatedEmbedder()
    batcher = EmbeddingBatcher(slow)
    in_flight = asyncio.create_task(batcher.replies.embed(["one"]))
    await slow.entered.wait()
    waiting = asyncio.create_task(batcher.background.embed(["two"]))
    await asyncio.sleep(0)
    await batcher.aclose()
    for task in (in_flight, waiting):
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_batch_is_at_most_max_batch_texts_unless_one_request_is_larger() -> None:
    slow = GatedEmbedder()
    batcher = EmbeddingBatcher(slow, max_batch=3)
    first = asyncio.create_task(batcher.replies.embed(["zero"]))
    await slow.entered.wait()
    tasks = [asyncio.create_task(batcher.replies.embed([f"t{n}a", f"t{n}b"])) for n in range(3)]
    big = asyncio.create_task(batcher.replies.embed([f"big {n}" for n in range(5)]))
    await asyncio.sleep(0)
    slow.gate.set()
    await asyncio.gather(first, big, *tasks)
    await batcher.aclose()
    sizes = [len(call) for call in slow.calls]
    assert sizes == [1, 2, 2, 2, 5]


async def test_background_batches_are_smaller_so_a_reply_text_waits_less() -> None:
    slow = GatedEmbedder()
    batcher = EmbeddingBatcher(slow, max_batch=6, max_background_batch=2)
    first = asyncio.create_task(batcher.background.embed(["zero"]))
    await slow.entered.wait()
    queued = [asyncio.create_task(batcher.background.embed([f"fact {n}"])) for n in range(5)]
    await asyncio.sleep(0)
    slow.gate.set()
    await asyncio.gather(first, *queued)
    replies = [asyncio.create_task(batcher.replies.embed([f"reply {n}"])) for n in range(5)]
    await asyncio.gather(*replies)
    await batcher.aclose()
    assert [len(call) for call in slow.calls] == [1, 2, 2, 1, 5]


async def test_no_texts_give_no_rows() -> None:
    spy = CountingEmbedder(HashingEmbedder())
    batcher = EmbeddingBatcher(spy)
    assert (await batcher.replies.embed([])).shape[0] == 0
    await batcher.aclose()


class TwoGatedEmbedder(GatedEmbedder):
    """A gated model that counts the calls in progress at once."""

    def __init__(self) -> None:
        super().__init__()
        self.in_progress = 0
        self.most_at_once = 0

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        self.in_progress += 1
        self.most_at_once = max(self.most_at_once, self.in_progress)
        try:
            return await super().embed(texts, kind)
        finally:
            self.in_progress -= 1


async def test_reply_texts_arriving_together_are_shared_between_two_calls() -> None:
    slow = TwoGatedEmbedder()
    batcher = EmbeddingBatcher(slow, max_calls=2)
    texts = [f"reply {n}" for n in range(10)]
    replies = [asyncio.create_task(batcher.replies.embed([text])) for text in texts]
    await asyncio.sleep(0)
    await slow.entered.wait()
    await asyncio.sleep(0)
    slow.gate.set()
    vectors = await asyncio.gather(*replies)
    await batcher.aclose()
    assert slow.calls == [texts[:5], texts[5:]]
    assert slow.most_at_once == 2
    expected = await HashingEmbedder().embed(texts)
    assert np.allclose(np.vstack(vectors), expected)


async def test_a_reply_text_takes_the_free_call_beside_a_busy_one() -> None:
    slow = TwoGatedEmbedder()
    batcher = EmbeddingBatcher(slow, max_calls=2)
    first = asyncio.create_task(batcher.replies.embed(["first"]))
    await slow.entered.wait()
    second = asyncio.create_task(batcher.replies.embed(["second"]))
    await until(lambda: len(slow.calls) == 2)
    assert slow.calls == [["first"], ["second"]]
    slow.gate.set()
    await asyncio.gather(first, second)
    await batcher.aclose()


async def test_background_texts_never_take_both_calls() -> None:
    slow = TwoGatedEmbedder()
    batcher = EmbeddingBatcher(slow, max_calls=2, max_background_batch=2)
    facts = [asyncio.create_task(batcher.background.embed([f"fact {n}"])) for n in range(6)]
    await slow.entered.wait()
    await asyncio.sleep(0)
    reply = asyncio.create_task(batcher.replies.embed(["a reply"]))
    await until(lambda: len(slow.calls) == 2)
    # One background call in progress; the reply took the other at once.
    assert slow.calls == [["fact 0", "fact 1"], ["a reply"]]
    slow.gate.set()
    await asyncio.gather(reply, *facts)
    await batcher.aclose()
    assert slow.most_at_once == 2
    assert all(len(call) <= 2 for call in slow.calls)
