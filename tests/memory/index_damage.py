"""Ways a real index folder gets broken, for the self-healing tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DAMAGE = ["zeroed", "random bytes", "deleted", "a file in its place"]


def damage(folder: Path, how: str) -> None:
    """Break the index folder the way a failing disk, a bad restore or a person would."""
    if how == "deleted":
        shutil.rmtree(folder)
        return
    if how == "a file in its place":
        shutil.rmtree(folder)
        folder.write_bytes(b"not an index")
        return
    for path in folder.rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            path.write_bytes(b"\0" * size if how == "zeroed" else os.urandom(size))


def moved_aside_copies(folder: Path) -> list[Path]:
    return sorted(folder.parent.glob(f"{folder.name}.broken-*"))
