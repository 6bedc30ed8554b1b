"""``mnemo migrate`` and the doctor's schema line, run in-process on a copy of an old database."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from adapters.main import main
from memory.store.migrations import BASELINE, head_revision
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.memory.test_migrations import OLD_DATABASE, stored_revision
from tests.servers.postgres import PostgresServer


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    path = tmp_path / "mnemo.toml"
    model_path = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    path.write_text(f'[storage]\ndata_dir = "data"\n[embedding]\n{model_path}\n', encoding="utf-8")
    return path


@pytest.fixture
def old_database(config_file: Path) -> Path:
    """The database of commit 3844196 in the config's data folder."""
    path = config_file.parent / "data" / "mnemo.sqlite3"
    path.parent.mkdir()
    shutil.copyfile(OLD_DATABASE, path)
    return path


def run(config_file: Path, *arguments: str) -> int:
    return main(["--config", str(config_file), *arguments])


def test_migrate_sql_prints_the_statements_and_changes_nothing(
    config_file: Path, old_database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = old_database.read_bytes()
    assert run(config_file, "migrate", "--sql") == 0
    output = capsys.readouterr().out
    assert f"INSERT INTO alembic_version (version_num) VALUES ('{BASELINE}')" in output
    assert "CREATE TABLE facts" not in output  # its tables are there already
    assert old_database.read_bytes() == content


def test_migrate_sql_for_a_new_database_creates_no_file(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config_file, "migrate", "--sql") == 0
    output = capsys.readouterr().out
    assert "CREATE TABLE facts" in output
    assert "ON DELETE SET NULL" in output
    assert not (config_file.parent / "data").exists()


def test_migrate_upgrades_once_then_has_nothing_to_do(
    config_file: Path, old_database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config_file, "migrate") == 0
    first = capsys.readouterr().out
    assert f"from schema revision {BASELINE} (made before migrations" in first
    assert stored_revision(old_database) == head_revision()
    assert run(config_file, "migrate") == 0
    assert f"is at schema revision {head_revision()}: nothing to do" in capsys.readouterr().out
    assert run(config_file, "migrate", "--sql") == 0
    assert "the schema is current: nothing to do" in capsys.readouterr().out


def test_migrate_refuses_a_newer_database_in_one_line(
    config_file: Path, old_database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config_file, "migrate") == 0
    with closing(sqlite3.connect(old_database)) as connection, connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    capsys.readouterr()
    assert run(config_file, "migrate") == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: the database ")
    assert "schema revision 9999, newer than this Mnemo" in error
    assert "Traceback" not in error


def test_start_up_upgrades_an_old_database(
    config_file: Path, old_database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Any command that opens the memory starts it up as the bot does.
    assert run(config_file, "reconcile", "--dry-run") == 0
    assert "would repair: 5 missing" in capsys.readouterr().out
    assert stored_revision(old_database) == head_revision()


def doctor_line(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if line[5:].startswith(f"{name}:"))


def test_doctor_reports_the_revision_and_whether_it_is_current(
    config_file: Path, old_database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checks = ["doctor"]
    run(config_file, *checks)
    output = capsys.readouterr().out
    line = doctor_line(output, "database")
    assert line.startswith("warn database:")
    assert f"schema revision {BASELINE} (made before migrations)" in line
    assert "run `mnemo migrate`" in line
    assert doctor_line(output, "vector index").startswith("skip")
    assert stored_revision(old_database) is None  # the doctor changed nothing

    run(config_file, "migrate")
    run(config_file, *checks)
    line = doctor_line(capsys.readouterr().out, "database")
    assert line.startswith("ok   database:")
    assert f"schema revision {head_revision()} (current), 2 messages waiting" in line

    with closing(sqlite3.connect(old_database)) as connection, connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    run(config_file, *checks)
    line = doctor_line(capsys.readouterr().out, "database")
    assert line.startswith("FAIL database:")
    assert "schema revision 9999 is newer than this Mnemo" in line


def test_migrate_and_doctor_on_postgresql(
    config_file: Path,
    postgres: PostgresServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = asyncio.run(postgres.create_database(empty=True))
    monkeypatch.setenv("MNEMO_STORAGE__DATABASE_URL", url.render_as_string(hide_password=False))
    assert run(config_file, "migrate", "--sql") == 0
    assert "CREATE EXTENSION IF NOT EXISTS vector" in capsys.readouterr().out
    run(config_file, "doctor")
    assert "none yet; the bot makes it at start-up" in doctor_line(
        capsys.readouterr().out, "database"
    )
    assert run(config_file, "migrate") == 0
    assert f"at schema revision {head_revision()}" in capsys.readouterr().out
    run(config_file, "doctor")
    output = capsys.readouterr().out
    line = doctor_line(output, "database")
    assert line.startswith(f"ok   database: postgresql+asyncpg://postgres@/{url.database}")
    assert f"schema revision {head_revision()} (current), 0 messages waiting" in line
    assert doctor_line(output, "vector index").startswith("ok   vector index: in step")
    data = config_file.parent / "data"
    assert not (data / "mnemo.sqlite3").exists()  # nothing of SQLite or LanceDB made
    assert not (data / "index").exists()
