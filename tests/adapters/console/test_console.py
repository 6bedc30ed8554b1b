"""The console adapter: in-process over streams, and ``mnemo chat`` as a real subprocess."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from adapters.console import ChatCommand, ConsoleIdentity, ConsoleSession
from adapters.main import main
from bot.cli import build_parser
from memory.embedding import Embedder
from memory.llm import ChatMessage
from memory.scope import Scope
from tests.bot.core.harness import ScriptedMind, fact, open_harness
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.servers.openai_server import OpenAICompatibleServer, prompt_of


def lines_reader(lines: list[str]) -> Callable[[], Awaitable[str | None]]:
    pending: Iterator[str] = iter(lines)

    async def read_line() -> str | None:
        return next(pending, None)

    return read_line


async def test_session_remembers_lists_and_exports(tmp_path: Path, embedder: Embedder) -> None:
    bot = await open_harness(tmp_path, embedder)
    output = io.StringIO()
    session = ConsoleSession(
        bot.app.core,
        ConsoleIdentity("alice"),
        read_line=lines_reader(
            [
                "remember that I have a cat named Miso",
                "",
                "/memory list",
                "!memory export",
                "/quit",
                "this line is never read",
            ]
        ),
        output=output,
        export_directory=tmp_path / "exports",
    )
    try:
        await session.run()
    finally:
        await bot.app.aclose()
    printed = output.getvalue().splitlines()
    assert printed[0] == 'Mnemo> Got it, I\'ll remember: "I have a cat named Miso" (#1).'
    assert printed[1] == "Mnemo> What I remember about you here (1 fact, page 1 of 1):"
    assert printed[2] == "#1 I have a cat named Miso"
    saved = Path(printed[-1].removeprefix("(saved ").removesuffix(")"))
    assert saved.parent == tmp_path / "exports"
    exported = json.loads(await asyncio.to_thread(saved.read_text))
    assert exported["facts"][0]["text"] == "I have a cat named Miso"
    assert "never read" not in output.getvalue()


async def test_room_session_uses_the_room_scope(tmp_path: Path, embedder: Embedder) -> None:
    mind = ScriptedMind(facts={"I sing in a choir.": [fact("I sing in a choir", "hobby")]})
    bot = await open_harness(tmp_path, embedder, mind=mind)
    in_room = io.StringIO()
    in_dm = io.StringIO()
    try:
        room = ConsoleSession(
            bot.app.core,
            ConsoleIdentity("alice", "choir"),
            read_line=lines_reader(["I sing in a choir."]),
            output=in_room,
            export_directory=tmp_path,
        )
        await room.run()
        await bot.app.writer.drain()
        await room.send("/memory list")
        dm = ConsoleSession(
            bot.app.core,
            ConsoleIdentity("alice"),
            read_line=lines_reader(["/memory list"]),
            output=in_dm,
            export_directory=tmp_path,
        )
        await dm.run()
    finally:
        await bot.app.aclose()
    assert "#1 I sing in a choir" in in_room.getvalue()
    assert in_dm.getvalue() == "Mnemo> I don't remember anything about you here yet.\n"


async def test_mnemo_chat_subprocess_remembers_across_runs(tmp_path: Path) -> None:
    mind = ScriptedMind(facts={"I live in Lisbon.": [fact("I live in Lisbon", "location")]})
    mind.replies += ["Lovely city!", "You live in Lisbon."]

    def reply(body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        return mind([ChatMessage(m["role"], m["content"]) for m in messages])

    with OpenAICompatibleServer(model="local-model", fallback=reply) as server:
        environment = {
            **os.environ,
            "MNEMO_STORAGE__DATA_DIR": str(tmp_path / "data"),
            "MNEMO_EMBEDDING__MODEL_PATH": str(LOCAL_MODEL_DIRECTORY),
            "MNEMO_MEMORY__RERANKER_MODEL": "",
            "MNEMO_LLM__PROVIDER": "openai",
            "MNEMO_LLM__BASE_URL": server.base_url,
            "MNEMO_LLM__MODEL": "local-model",
            "MNEMO_LOGGING__LEVEL": "WARNING",
        }
        # Memory is written in the background; quitting gives the queue a short grace.
        first = await run_chat(environment, tmp_path, "I live in Lisbon.\n")
        second = await run_chat(environment, tmp_path, "/memory list\nWhere do I live?\n")
    assert "Mnemo> Lovely city!" in first
    assert (
        "Mnemo> What I remember about you here (1 fact, page 1 of 1):\n#1 I live in Lisbon"
        in second
    )
    assert "Mnemo> You live in Lisbon." in second
    reply_prompts = [prompt_of(b) for b in server.requests if "response_format" not in b]
    assert "- alice lives in Lisbon" in reply_prompts[-1]


async def run_chat(environment: dict[str, str], directory: Path, stdin: str) -> str:
    return (await run_chat_with_stderr(environment, directory, stdin))[0]


async def run_chat_with_stderr(
    environment: dict[str, str], directory: Path, stdin: str
) -> tuple[str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.main",
        "chat",
        "--user",
        "alice",
        cwd=directory,
        env=environment,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return stdout.decode(), stderr.decode()


def test_chat_command_rejects_names_with_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser((ChatCommand(),))
    arguments = parser.parse_args(["chat", "--user", "alice", "--room", "book-club"])
    assert (arguments.user, arguments.room) == ("alice", "book-club")
    with pytest.raises(SystemExit):
        parser.parse_args(["chat", "--user", "alice smith"])
    assert "must be one word without spaces, got 'alice smith'" in capsys.readouterr().err


def test_chat_with_a_broken_model_path_says_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MNEMO_STORAGE__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MNEMO_EMBEDDING__MODEL_PATH", str(tmp_path / "no-such-model"))
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n"))
    assert main(["chat"]) == 1
    error = capsys.readouterr().err
    assert "error:" in error and "no-such-model" in error


@pytest.mark.parametrize("name", ["dm", "DM", " dm "])
def test_a_room_named_like_the_direct_chat_is_refused(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``console:dm`` is the direct chat's key: a "group room" of that name would show DM
    facts in a room."""
    parser = build_parser((ChatCommand(),))
    with pytest.raises(SystemExit):
        parser.parse_args(["chat", "--room", name])
    error = capsys.readouterr().err
    assert "is the name of the direct chat: leave out --room to talk there" in error
    assert parser.parse_args(["chat", "--room", "dms"]).room == "dms"


def test_a_name_that_is_not_printable_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser((ChatCommand(),))
    with pytest.raises(SystemExit):
        # What argv holds for an invalid UTF-8 byte (surrogateescape).
        parser.parse_args(["chat", "--user", "al\udcffice"])
    assert "must be printable characters only" in capsys.readouterr().err


async def test_message_ids_are_unique_across_sessions(tmp_path: Path, embedder: Embedder) -> None:
    """They become facts' sources and the queue's key: a second session must not reuse one."""
    said = {
        "I keep bees.": [fact("I keep bees", "hobby")],
        "I bake bread.": [fact("I bake bread", "hobby")],
    }
    # Both are hobbies: the second may be shown the first as a candidate; a model adds it.
    add = '{"decisions": [{"fact": 1, "action": "ADD", "target": null}]}'
    bot = await open_harness(tmp_path, embedder, mind=ScriptedMind(facts=said, decisions=[add]))
    try:
        for line in said:
            session = ConsoleSession(
                bot.app.core,
                ConsoleIdentity("alice"),
                read_line=lines_reader([line]),
                output=io.StringIO(),
                export_directory=tmp_path,
            )
            await session.run()
            await bot.app.writer.drain()
        scope = Scope("console:alice", "console:dm")
        facts = await bot.app.store.read(
            lambda transaction: transaction.facts.list_in_scope(scope, limit=10)
        )
    finally:
        await bot.app.aclose()
    assert sorted(f.text for f in facts) == ["I bake bread", "I keep bees"]
    sources = {f.source_message_id for f in facts}
    assert len(sources) == 2 and all(s and s.startswith("console-") for s in sources)


class Writes(io.StringIO):
    """A terminal's output that also keeps each write apart (test inspection)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


STREAMED_ANSWER = (
    "Lisbon in spring is lovely: walk up to the Alfama in the morning, take the tram back "
    "down, and keep an evening for fado."
)


async def test_the_answer_is_printed_as_it_is_written(tmp_path: Path, embedder: Embedder) -> None:
    bot = await open_harness(tmp_path, embedder, mind=ScriptedMind(replies=[STREAMED_ANSWER]))
    output = Writes()
    session = ConsoleSession(
        bot.app.core,
        ConsoleIdentity("alice"),
        read_line=lines_reader(["What should I do in Lisbon?", "/memory list"]),
        output=output,
        export_directory=tmp_path,
    )
    try:
        await session.run()
    finally:
        await bot.app.aclose()
    lines = output.getvalue().splitlines()
    # One line of the bot's, the whole answer, written word by word; a command's reply whole.
    assert lines == [
        f"Mnemo> {STREAMED_ANSWER}",
        "Mnemo> I don't remember anything about you here yet.",
    ]
    answer_writes = output.writes[: output.writes.index("\n")]
    assert len(answer_writes) > 10
    assert answer_writes[0].startswith("Mnemo> ") and len(answer_writes[0]) < 20


async def test_without_streaming_the_answer_comes_whole(tmp_path: Path, embedder: Embedder) -> None:
    bot = await open_harness(tmp_path, embedder, mind=ScriptedMind(replies=[STREAMED_ANSWER]))
    output = Writes()
    session = ConsoleSession(
        bot.app.core,
        ConsoleIdentity("alice"),
        read_line=lines_reader(["What should I do in Lisbon?"]),
        output=output,
        export_directory=tmp_path,
        stream=False,
    )
    try:
        await session.run()
    finally:
        await bot.app.aclose()
    assert output.writes == [f"Mnemo> {STREAMED_ANSWER}\n"]


async def test_mnemo_chat_keeps_the_log_off_the_terminal(tmp_path: Path) -> None:
    with OpenAICompatibleServer(model="local-model", fallback=STREAMED_ANSWER) as server:
        environment = {
            **os.environ,
            "MNEMO_STORAGE__DATA_DIR": str(tmp_path / "data"),
            "MNEMO_EMBEDDING__MODEL_PATH": str(LOCAL_MODEL_DIRECTORY),
            "MNEMO_MEMORY__RERANKER_MODEL": "",
            "MNEMO_LLM__PROVIDER": "openai",
            "MNEMO_LLM__BASE_URL": server.base_url,
            "MNEMO_LLM__MODEL": "local-model",
            "MNEMO_LOGGING__LEVEL": "INFO",
        }
        stdout, stderr = await run_chat_with_stderr(environment, tmp_path, "Lisbon tips?\n")
    printed = stdout.splitlines()
    assert printed[0].startswith("Mnemo here: you are alice in a direct chat.")
    assert printed[1:] == [f"Mnemo> {STREAMED_ANSWER}"]
    assert " INFO " not in stderr
    log = (tmp_path / "data" / "chat.log").read_text(encoding="utf-8")
    assert " INFO " in log and "migrat" in log.lower()
    # The reply was streamed from the server.
    assert any(body.get("stream") for body in server.requests if "response_format" not in body)
