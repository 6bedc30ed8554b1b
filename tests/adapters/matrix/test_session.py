"""Store problems found before anything goes over the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.matrix import MatrixLoginError, log_in
from adapters.matrix.allowlist import AllowList
from adapters.matrix.session import SESSION_FILE
from adapters.matrix.settings import MatrixConnection, PasswordLogin


def connection(store: Path) -> MatrixConnection:
    # Port 9 (discard) on loopback: nothing answers, and these errors come before any request.
    return MatrixConnection(
        "http://127.0.0.1:9", "@mnemo:localhost", PasswordLogin("pw"), store, AllowList(())
    )


async def test_damaged_session_file_says_how_to_recover(tmp_path: Path) -> None:
    (tmp_path / SESSION_FILE).write_text("{not json")

    with pytest.raises(MatrixLoginError, match=r"is damaged .*delete it to log in as a new device"):
        await log_in(connection(tmp_path))


async def test_store_path_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")

    with pytest.raises(MatrixLoginError, match=r"matrix\.store_path .* cannot be created"):
        await log_in(connection(blocker / "store"))
