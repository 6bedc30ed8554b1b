"""A model's prompts: a message that seeks facts is embedded as a query, a fact as a document."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.embedding import (
    Embedder,
    EmbeddingBatcher,
    FastEmbedEmbedder,
    HashingEmbedder,
    OllamaEmbedder,
    PromptedEmbedder,
    Prompts,
    TextKind,
    Vectors,
    default_prompts,
)
from memory.embedding.prompts import E5, EMBEDDINGGEMMA, NO_PROMPTS
from memory.index import LanceFactIndex
from memory.llm import ScriptedLanguageModel
from memory.recall import Recaller, RecallSettings
from memory.store import Store
from tests.conftest import EMBEDDINGGEMMA as GEMMA_NAME
from tests.conftest import embeddinggemma_directory
from tests.memory.write.helpers import ALICE, extracted, make_writer, say
from tests.servers.ollama_server import OllamaServer


class KindRecorder:
    """The real model, with a record of which kind each call embedded (a spy, no double)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[tuple[TextKind, list[str]]] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        self.calls.append((kind, list(texts)))
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None

    def kinds_of(self, text: str) -> set[TextKind]:
        return {kind for kind, texts in self.calls if text in texts}


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("google/embeddinggemma-300m", EMBEDDINGGEMMA),
        ("embeddinggemma:300m", EMBEDDINGGEMMA),
        ("intfloat/multilingual-e5-large", E5),
        ("jeffh/intfloat-multilingual-e5-large:f16", E5),
        ("intfloat/e5-small-v2", E5),
        ("sentence-transformers/all-MiniLM-L6-v2", NO_PROMPTS),
        ("BAAI/bge-small-en-v1.5", NO_PROMPTS),
        ("nomic-embed-text", NO_PROMPTS),
    ],
)
def test_known_models_have_their_prompts(model: str, expected: Prompts) -> None:
    assert default_prompts(model) == expected


def test_embeddinggemma_prompts_are_the_models_own() -> None:
    assert EMBEDDINGGEMMA.apply(["Wie heißt mein Hund?"], "query") == [
        "task: search result | query: Wie heißt mein Hund?"
    ]
    assert EMBEDDINGGEMMA.apply(["My dog is called Max"], "document") == [
        "title: none | text: My dog is called Max"
    ]
    assert EMBEDDINGGEMMA.apply(["x"], "similarity") == ["task: sentence similarity | query: x"]


@pytest.fixture(scope="module")
def gemma_folder() -> Path:
    folder = embeddinggemma_directory()
    if folder is None:
        pytest.skip("EmbeddingGemma not built: run ../shared/models/embeddinggemma/setup.sh int8")
    return folder


async def test_embeddinggemma_embeds_queries_and_facts_with_their_prompts(
    gemma_folder: Path,
) -> None:
    prompted = FastEmbedEmbedder(GEMMA_NAME, model_path=gemma_folder)
    bare = FastEmbedEmbedder(GEMMA_NAME, model_path=gemma_folder, prompts=NO_PROMPTS)
    assert prompted.prompts == EMBEDDINGGEMMA
    question, fact = "Wie heißt mein Hund?", "My dog is called Max"
    as_query = await prompted.embed([question], "query")
    as_document = await prompted.embed([fact], "document")
    # One text per call: the int8 copy quantises a batch's activations together, so a
    # padded neighbour would change the vector a little.
    query_by_hand = await bare.embed([EMBEDDINGGEMMA.query + question])
    document_by_hand = await bare.embed([EMBEDDINGGEMMA.document + fact])
    np.testing.assert_allclose(as_query, query_by_hand, atol=1e-5)
    np.testing.assert_allclose(as_document, document_by_hand, atol=1e-5)
    assert float(as_query[0] @ (await bare.embed([question]))[0]) < 0.99
    assert float(as_document[0] @ (await bare.embed([fact]))[0]) < 0.99
    await prompted.aclose()
    await bare.aclose()


async def test_minilm_has_no_prompts(embedder: FastEmbedEmbedder) -> None:
    assert embedder.prompts == NO_PROMPTS
    query, document = (
        await embedder.embed(["I like chess"], "query"),
        await embedder.embed(["I like chess"], "document"),
    )
    np.testing.assert_allclose(query, document, atol=1e-6)


async def test_recall_embeds_a_query_and_the_write_path_documents(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    recorder = KindRecorder(embedder)
    llm = ScriptedLanguageModel([extracted("My dog is called Max")])
    await say(make_writer(store, index, recorder, llm), ALICE, "My dog is called Max")
    recalled = await Recaller(store, index, recorder, RecallSettings()).passive(
        ALICE, "What is my dog called?"
    )
    assert [item.fact.text for item in recalled] == ["My dog is called Max"]
    assert recorder.kinds_of("My dog is called Max") == {"document"}
    assert recorder.kinds_of("What is my dog called?") == {"query"}


async def test_the_batcher_keeps_each_kind_to_its_own_call_and_cache() -> None:
    inner = HashingEmbedder(prompts=Prompts(query="Q: ", document="D: "))
    batcher = EmbeddingBatcher(inner)
    try:
        await batcher.replies.embed(["warm"], "query")
        inner.calls.clear()
        first, second = await asyncio.gather(
            batcher.replies.embed(["I like chess"], "query"),
            batcher.replies.embed(["I like chess"], "document"),
        )
        assert sorted(inner.calls) == [["D: I like chess"], ["Q: I like chess"]]
        assert float(first[0] @ second[0]) < 0.99
        again = await batcher.background.embed(["I like chess"], "document")
        np.testing.assert_array_equal(again, second)
        assert len(inner.calls) == 2
    finally:
        await batcher.aclose()


async def test_kinds_with_the_same_prompt_share_one_model_call_and_cache_entry() -> None:
    # all-MiniLM-L6-v2 has no prompts: the message recall embedded as a query is the text
    # the write path's candidate search embeds as a document.
    inner = HashingEmbedder(prompts=Prompts(query="Q: ", document="Q: "))
    batcher = EmbeddingBatcher(inner)
    try:
        as_query = await batcher.replies.embed(["I like chess"], "query")
        both = await batcher.background.embed(["I like chess", "I play go"], "document")
        assert inner.calls == [["Q: I like chess"], ["Q: I play go"]]
        np.testing.assert_array_equal(both[0], as_query[0])
    finally:
        await batcher.aclose()


async def test_the_batcher_keeps_the_kinds_apart_for_an_embedder_that_hides_its_prompts() -> None:
    inner = HashingEmbedder(prompts=Prompts(query="Q: ", document="D: "))
    recorder = KindRecorder(inner)  # a wrapper that does not say the prompts it uses
    batcher = EmbeddingBatcher(recorder)
    try:
        await batcher.replies.embed(["I like chess"], "query")
        await batcher.background.embed(["I like chess"], "document")
        assert inner.calls == [["Q: I like chess"], ["D: I like chess"]]
    finally:
        await batcher.aclose()


def test_every_backend_says_its_prompts(embedder: FastEmbedEmbedder) -> None:
    """The batcher can share a vector between kinds only with an embedder that says them."""
    backends = [embedder, OllamaEmbedder("all-minilm"), HashingEmbedder()]
    assert all(isinstance(backend, PromptedEmbedder) for backend in backends)
    assert OllamaEmbedder("embeddinggemma:300m").prompts == EMBEDDINGGEMMA


async def test_ollama_is_sent_the_prompted_texts() -> None:
    with OllamaServer(models=("embeddinggemma:300m", "all-minilm")) as ollama:
        gemma = OllamaEmbedder("embeddinggemma:300m", host=ollama.base_url)
        await gemma.embed(["Wie heißt mein Hund?"], "query")
        await gemma.embed(["My dog is called Max"])
        minilm = OllamaEmbedder("all-minilm", host=ollama.base_url)
        await minilm.embed(["Wie heißt mein Hund?"], "query")
        await gemma.aclose()
        await minilm.aclose()
    assert [request["input"] for request in ollama.requests] == [
        ["task: search result | query: Wie heißt mein Hund?"],
        ["title: none | text: My dog is called Max"],
        ["Wie heißt mein Hund?"],
    ]
