"""Issue 5 end to end through the core: real store, index, embedder, writer and recaller;
only the model's judgement is scripted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.core import APOLOGY
from memory.embedding import Embedder, HashingEmbedder
from memory.llm import LanguageModelUnavailable, ModelNotFound
from memory.records import FactSource, FactStatus
from tests.bot.core.harness import (
    Harness,
    extraction_calls,
    fact,
    make_config,
    open_harness,
    reply_calls,
)


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    yield harness
    await harness.app.aclose()


async def facts_of(bot: Harness) -> list[str]:
    """Every active fact in the store, whoever owns it (test inspection only)."""
    facts = await bot.app.store.read(lambda tx: tx.facts.admin_active_facts())
    return [f.text for f in facts]


async def test_told_fact_is_in_a_later_prompt_listed_and_forgotten(bot: Harness) -> None:
    bot.mind.facts["I have a cat named Miso."] = [fact("I have a cat named Miso", "possession")]
    bot.mind.replies += ["What a lovely name!", "Your cat is called Miso."]

    assert await bot.say("alice", "I have a cat named Miso.") == "What a lovely name!"
    first_system = reply_calls(bot.llm)[0].system_text
    assert "You do not know anything about Alice yet." in first_system
    assert await bot.say("alice", "What's my cat called?") == "Your cat is called Miso."
    system = reply_calls(bot.llm)[-1].system_text
    assert "What you know about Alice from earlier conversations" in system
    assert "- Alice has a cat named Miso" in system

    listing = (await bot.send("alice", "!memory list"))[0]
    assert listing.private
    assert "1 fact, page 1 of 1" in listing.text
    assert "#1 I have a cat named Miso" in listing.text

    forgotten = await bot.say("alice", "/memory forget 1")
    assert forgotten == "Forgotten for good: #1."
    await bot.say("alice", "Do I have pets?")
    assert "- Alice has a cat named Miso" not in reply_calls(bot.llm)[-1].system_text
    assert await facts_of(bot) == []


async def test_undo_restores_an_automatic_update(bot: Harness) -> None:
    bot.mind.facts["I live in Paris."] = [fact("I live in Paris", "location")]
    bot.mind.facts["I moved to Berlin last week."] = [fact("I live in Berlin", "location")]
    # What a model answers for "I live in Berlin" against candidate 1 "I live in Paris".
    bot.mind.decisions.append('{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}')

    await bot.say("alice", "I live in Paris.")
    await bot.say("alice", "I moved to Berlin last week.")
    listing = await bot.say("alice", "!memory list")
    assert "I live in Berlin" in listing and "I live in Paris" not in listing

    undone = await bot.say("alice", "!memory undo")
    assert undone.startswith("Undone: the UPDATE")
    assert 'Back again: #1 "I live in Paris"' in undone
    assert 'No longer remembered: #2 "I live in Berlin"' in undone

    await bot.say("alice", "Where do I live?")
    assert "- Alice lives in Paris" in bot.last_reply_prompt()
    assert "- Alice lives in Berlin" not in bot.last_reply_prompt()
    history = await bot.say("alice", "!memory history 1")
    assert history.startswith("History of #1 (active): I live in Paris")
    assert "ADD (learned from chat)" in history and "RESTORE (by you)" in history
    # The next undo reverses the ADD of Paris; then nothing automatic is left.
    assert 'No longer remembered: #1 "I live in Paris"' in await bot.say("alice", "!memory undo")
    assert (
        await bot.say("alice", "!memory undo") == "There is no automatic change here left to undo."
    )


async def test_remember_that_stores_a_remembered_fact_without_extraction(bot: Harness) -> None:
    answer = await bot.say("alice", "Remember that my sister's name is Inès.")
    assert answer == "Got it, I'll remember: \"my sister's name is Inès\" (#1)."
    assert extraction_calls(bot.llm) == []
    stored = await bot.app.store.read(lambda tx: tx.facts.admin_active_facts())
    assert [(f.text, f.source) for f in stored] == [
        ("my sister's name is Inès", FactSource.REMEMBERED)
    ]
    again = await bot.say("alice", "remember that my sister's name is Inès")
    assert again == 'I already remember that: #1 "my sister\'s name is Inès".'


async def test_commands_and_bot_text_never_reach_the_write_path(bot: Harness) -> None:
    bot.mind.replies.append("I live in Rome, as a language model would never say.")
    await bot.say("alice", "!memory list")
    await bot.say("alice", "/memory help")
    await bot.say("alice", "!help")
    assert extraction_calls(bot.llm) == []
    await bot.say("alice", "I went for a walk")
    extracted = [call.messages[-1].content for call in extraction_calls(bot.llm)]
    assert extracted == ["I went for a walk"]


async def test_pause_stops_learning_and_survives_a_restart(
    tmp_path: Path, embedder: Embedder
) -> None:
    bot = await open_harness(tmp_path, embedder)
    bot.mind.facts["I have a dog."] = [fact("I have a dog", "possession")]
    bot.mind.facts["I have a horse."] = [fact("I have a horse", "possession")]
    try:
        paused = await bot.say("alice", "!memory pause")
        assert paused.startswith("Paused: I won't learn anything new")
        await bot.say("alice", "I have a dog.")
        assert extraction_calls(bot.llm) == []
        assert await bot.app.store.read(lambda tx: tx.pending.count()) == 0
    finally:
        await bot.app.aclose()

    restarted = await open_harness(tmp_path, embedder, mind=bot.mind)
    try:
        await restarted.say("alice", "I have a dog.")
        assert extraction_calls(restarted.llm) == []
        # Bob is not paused by Alice's pause.
        await restarted.say("bob", "I have a horse.")
        assert await facts_of(restarted) == ["I have a horse"]
        await restarted.say("alice", "!memory resume")
        await restarted.say("alice", "I have a dog.")
        assert sorted(await facts_of(restarted)) == ["I have a dog", "I have a horse"]
    finally:
        await restarted.app.aclose()


@pytest.mark.parametrize(
    ("error", "operator_hint"),
    [
        (
            LanguageModelUnavailable("Ollama at http://127.0.0.1:11434 is not reachable"),
            "not reachable",
        ),
        (ModelNotFound("run `ollama pull llama3.1:8b`"), "ollama pull"),
    ],
)
async def test_llm_down_apologises_logs_the_fix_and_still_learns(
    bot: Harness, caplog: pytest.LogCaptureFixture, error: Exception, operator_hint: str
) -> None:
    bot.mind.reply_errors.append(error)  # the reply call fails; the extraction works
    bot.mind.facts["I'm a nurse."] = [fact("I work as a nurse", "work")]
    answer = await bot.say("alice", "I'm a nurse.")
    assert answer == APOLOGY
    assert operator_hint in caplog.text and "could not answer matrix:alice" in caplog.text
    assert await facts_of(bot) == ["I work as a nurse"]


async def test_group_room_only_answers_when_addressed(bot: Harness) -> None:
    assert await bot.send("alice", "I have a boat.", room="!r:x", mention=False) == []
    assert await bot.send("alice", "!roll d20", room="!r:x", mention=False) == []
    assert bot.llm.calls == []
    assert await bot.app.store.read(lambda tx: tx.turns.recent("matrix:!r:x", limit=10)) == []
    listing = await bot.send("alice", "!memory list", room="!r:x", mention=False)
    assert listing[0].text == "I don't remember anything about you here yet."


async def test_rate_limit_and_truncation(tmp_path: Path, embedder: Embedder) -> None:
    config = make_config(tmp_path / "data", rate_limit_per_minute=2, max_message_chars=100)
    bot = await open_harness(tmp_path, embedder, config=config)
    try:
        long_text = "I collect stamps. " + "x" * 300
        reply = await bot.say("alice", long_text)
        assert reply.endswith("(Your message was 318 characters long; I only read the first 100.)")
        assert reply_calls(bot.llm)[0].messages[-1].content == long_text[:100]
        await bot.say("alice", "hello")
        calls = len(bot.llm.calls)
        refused = await bot.send("alice", "hello again")
        assert refused[0].private
        assert refused[0].text.startswith("You're sending messages faster than I can answer (2 a")
        assert await bot.send("alice", "and again") == []
        assert len(bot.llm.calls) == calls
        assert await bot.say("bob", "hi") == "OK."
    finally:
        await bot.app.aclose()


async def test_forget_all_needs_confirmation(bot: Harness) -> None:
    bot.mind.facts["I like jazz."] = [fact("I like jazz", "preference")]
    bot.mind.facts["I speak Welsh."] = [fact("I speak Welsh", "identity")]
    await bot.say("alice", "I like jazz.")
    await bot.say("alice", "I speak Welsh.")
    nothing = await bot.say("alice", "!memory forget all confirm")
    assert nothing.startswith("Nothing to confirm")
    assert len(await facts_of(bot)) == 2
    ask = await bot.say("alice", "!memory forget all")
    assert "erases all 2 facts" in ask and "!memory forget all confirm within 60 seconds" in ask
    assert len(await facts_of(bot)) == 2
    done = await bot.say("alice", "!memory forget all confirm")
    assert done == "Done: I forgot all 2 facts about you here."
    assert await facts_of(bot) == []


async def test_export_is_a_json_attachment_of_own_facts(bot: Harness) -> None:
    bot.mind.facts["I'm vegetarian."] = [fact("I am vegetarian", "health")]
    await bot.say("alice", "I'm vegetarian.")
    reply = (await bot.send("alice", "!memory export"))[0]
    assert reply.private and len(reply.attachments) == 1
    document = json.loads(reply.attachments[0].content)
    assert document["owner"] == "matrix:alice" and document["room"] == "matrix:dm"
    assert [(f["text"], f["status"]) for f in document["facts"]] == [
        ("I am vegetarian", FactStatus.ACTIVE.value)
    ]


async def test_a_message_without_text_gets_a_clear_answer(bot: Harness) -> None:
    assert await bot.say("alice", "   ") == "I can only read text, and your message had none."
    assert bot.llm.calls == []
    assert await bot.send("alice", " ", room="!r:x", mention=False) == []


async def test_a_ten_megabyte_message_is_cut_answered_and_learned_from_in_part(
    bot: Harness,
) -> None:
    opening = "I collect stamps. "
    huge = opening + "y" * (10 * 1024 * 1024)
    read = huge[:4000]
    bot.mind.facts[read] = [fact("I collect stamps", "hobby")]
    reply = await bot.say("alice", huge)
    note = f"(Your message was {len(huge)} characters long; I only read the first 4000.)"
    assert reply.endswith(note)
    assert reply_calls(bot.llm)[0].messages[-1].content == read
    assert all(len(call.prompt_text) < 20_000 for call in bot.llm.calls)
    assert [call.messages[-1].content for call in extraction_calls(bot.llm)] == [read]
    assert await facts_of(bot) == ["I collect stamps"]


async def test_a_message_is_given_to_the_embedding_model_once(tmp_path: Path) -> None:
    """Recall embeds it as a query and the write path's candidate search as a document; a
    model without prompts (all-MiniLM-L6-v2) sees the same text, so one vector serves both."""
    embedder = HashingEmbedder(dimension=384)
    bot = await open_harness(tmp_path, embedder)
    message = "I have a cat named Miso."
    bot.mind.facts[message] = [fact("I have a cat named Miso", "possession")]
    try:
        await bot.say("alice", message)
        assert await facts_of(bot) == ["I have a cat named Miso"]
    finally:
        await bot.app.aclose()
    assert sum(texts.count(message) for texts in embedder.calls) == 1
