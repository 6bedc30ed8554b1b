"""Small tmpfs mounts for the tests of a full or read-only disk: they need root, and are
skipped with the reason where they cannot be made."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def tmpfs(mount_point: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted with ``options`` (e.g. ``size=4m``, ``size=1m,ro``) at a new folder."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        # Lazy: a killed bot process may not have let go of its files yet.
        subprocess.run(["umount", "--lazy", str(mount_point)], check=True)
