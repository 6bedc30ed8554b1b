"""``mnemo discord``: config mistakes fail fast; Discord's refusals are reported, nothing leaks."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from adapters.discord.cli import DiscordCommand
from bot.app import Application
from bot.cli import main
from bot.config import Config
from memory.embedding import Embedder
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.bot.core.harness import make_config, open_harness


def write_config(tmp_path: Path, discord_section: str) -> Path:
    path = tmp_path / "mnemo.toml"
    path.write_text(f'[storage]\ndata_dir = "data"\n\n[discord]\n{discord_section}\n')
    return path


def never_built(config: Config) -> Application:
    raise AssertionError("the application must not be built when the config is wrong")


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("", "discord.token is not set"),
        ('token = "Bot abc.def.ghi"', "starts with 'Bot '"),
        ('token = "abc.def.ghi"\nallowed_roles = ["family"]', "discord.allowed_roles: 'family'"),
    ],
)
def test_config_mistakes_exit_with_code_2_and_say_what_to_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    section: str,
    expected: str,
) -> None:
    monkeypatch.delenv("MNEMO_DISCORD__TOKEN", raising=False)
    command = DiscordCommand(build=never_built)  # type: ignore[arg-type]
    code = main(["--config", str(write_config(tmp_path, section)), "discord"], [command])
    assert code == 2
    assert expected in " ".join(capsys.readouterr().err.split())


async def test_a_rejected_token_exits_with_code_1_and_closes_the_application(
    tmp_path: Path,
    embedder: Embedder,
    fake_discord: FakeDiscord,
    capsys: pytest.CaptureFixture[str],
) -> None:
    closed: list[bool] = []

    async def build(config: Config) -> Application:
        application = (await open_harness(tmp_path, embedder, config=config)).app
        close = application.aclose

        async def recording_close() -> None:
            closed.append(True)
            await close()

        application.aclose = recording_close  # type: ignore[method-assign]
        return application

    config = make_config(tmp_path / "data").model_copy(
        update={"discord": Config().discord.model_copy(update={"token": "MTIz.wrong.token"})}
    )
    code = await DiscordCommand(build=build).run(argparse.Namespace(), config)

    assert code == 1
    assert "Reset Token" in " ".join(capsys.readouterr().err.split())
    assert closed == [True]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--shard-ids", "0,1"], "--shard-ids and --shard-count go together"),
        (["--shard-count", "4"], "--shard-ids and --shard-count go together"),
        (["--shard-ids", "0,4", "--shard-count", "4"], "--shard-ids 4 outside 0..3"),
        (["--shard-ids", "1,1", "--shard-count", "4"], "names a shard twice"),
        (["--shard-ids", "0", "--shard-count", "0"], "--shard-count must be at least 1"),
    ],
)
def test_shard_mistakes_exit_with_code_2_before_anything_is_built(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    expected: str,
) -> None:
    command = DiscordCommand(build=never_built)  # type: ignore[arg-type]
    config = write_config(tmp_path, 'token = "abc.def.ghi"')
    code = main(["--config", str(config), "discord", *arguments], [command])
    assert code == 2
    assert expected in " ".join(capsys.readouterr().err.split())


def test_shard_ids_that_are_not_numbers_are_refused_by_the_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = DiscordCommand(build=never_built)  # type: ignore[arg-type]
    config = write_config(tmp_path, 'token = "abc.def.ghi"')
    with pytest.raises(SystemExit) as exited:
        main(
            ["--config", str(config), "discord", "--shard-ids", "one", "--shard-count", "2"],
            [command],
        )
    assert exited.value.code == 2
    assert "'one' is not a list of shard numbers" in capsys.readouterr().err
