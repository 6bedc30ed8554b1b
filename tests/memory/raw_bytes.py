"""Looking for a word in every byte of a folder: the proof that something forgotten is gone."""

from __future__ import annotations

from pathlib import Path


def files_containing(folder: Path, token: str) -> list[str]:
    """The files under ``folder`` (relative paths) whose bytes contain ``token`` (UTF-8)."""
    needle = token.encode("utf-8")
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and needle in path.read_bytes()
    )
