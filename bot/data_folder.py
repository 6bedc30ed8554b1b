"""The data folder: usable or one clear line, and one writing process at a time.

SQLite and LanceDB files are written by one process: a second writer on the same folder
gets "database is locked", LanceDB commit conflicts, and lost messages. Every command that
writes holds an exclusive ``fcntl.flock`` on ``<data_dir>/mnemo.lock`` (the file holds the
holder's PID) for as long as it runs; a second one stops at once and says who holds it.
Read-only commands (``mnemo doctor``) take no lock and open the files read-only.

The kernel drops the lock when the holder exits, however it exits (kill -9 included), so a
stale lock file never blocks a start: only a live holder does.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.config import Config

LOCK_FILE_NAME = "mnemo.lock"
SETTING = "storage.data_dir"
FIX_ELSEWHERE = f"or point {SETTING} (MNEMO_STORAGE__DATA_DIR) at a folder this user can write"


class DataAccess(enum.Enum):
    """What a ``mnemo`` command does with the data folder."""

    NONE = "none"
    READ_ONLY = "read-only"
    WRITE = "write"


class DataFolderError(Exception):
    """The data folder cannot be used; the message is one line with the fix."""


def needs_single_process(config: Config) -> bool:
    """Whether the backend allows one writing process per data folder.

    SQLite with LanceDB does; a database server (PostgreSQL, ``storage.database_url``)
    serves several processes, which share no files in the data folder.
    """
    return config.storage.database_url is None


def unusable_reason(path: Path, error: OSError) -> str:
    """``storage.data_dir (path) cannot be used: <why>; <what to do>``, one line."""
    code = error.errno
    if code in (errno.ENOTDIR, errno.EEXIST):
        why = "a file is in the way (it must be a folder)"
        fix = "move that file away"
    elif code == errno.EROFS:
        why = "it is on a read-only file system"
        fix = "mount it read-write"
    elif code in (errno.EACCES, errno.EPERM):
        why = f"this user (uid {os.getuid()}) may not write there"
        fix = "give this user write access to it"
    elif code == errno.ENOSPC:
        why = "the disk holding it is full"
        fix = "free some space on that disk"
    else:
        why = error.strerror or str(error)
        fix = "check the folder"
    return f"{SETTING} ({path}) cannot be used: {why}. Fix: {fix}, {FIX_ELSEWHERE}."


def ensure_writable(data_dir: Path) -> None:
    """Create the folder if needed and prove that a file can be written in it."""
    probe = data_dir / f".write-probe-{os.getpid()}"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise DataFolderError(unusable_reason(data_dir, error)) from error


def readable_problem(data_dir: Path) -> str | None:
    """Why a read-only command cannot use the folder (None: it can), creating nothing."""
    existing = data_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return unusable_reason(data_dir, OSError(errno.ENOTDIR, "Not a directory"))
    if not os.access(existing, os.W_OK):
        code = errno.EROFS if _read_only_mount(existing) else errno.EACCES
        return unusable_reason(data_dir, OSError(code, os.strerror(code)))
    return None


def _read_only_mount(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def holder_pid(lock_path: Path) -> int | None:
    try:
        text = lock_path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdecimal() else None


def running_holder(data_dir: Path) -> int | None:
    """The PID in the lock file if that process is alive: informational, it takes no lock."""
    pid = holder_pid(data_dir / LOCK_FILE_NAME)
    if pid is None:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def busy_message(data_dir: Path, pid: int | None) -> str:
    who = f"PID {pid}" if pid is not None else "PID unknown"
    return (
        f"{SETTING} ({data_dir}) is in use by another Mnemo process ({who}). Stop that "
        "process first, or use a read-only command beside it (mnemo doctor)."
    )


@contextmanager
def exclusive_data_folder(data_dir: Path) -> Iterator[None]:
    """Hold the folder's lock, with this process's PID in the lock file, while inside."""
    ensure_writable(data_dir)
    lock_path = data_dir / LOCK_FILE_NAME
    try:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise DataFolderError(unusable_reason(data_dir, error)) from error
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise DataFolderError(busy_message(data_dir, holder_pid(lock_path))) from error
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
    finally:
        # Closing the descriptor releases the lock.
        os.close(descriptor)


@contextmanager
def data_folder_access(config: Config, access: DataAccess) -> Iterator[None]:
    """What a command needs before it runs: the folder usable, and the lock if it writes.

    The one helper every command goes through (``bot.cli.main`` calls it with the command's
    ``data_access``); a new command that writes declares ``DataAccess.WRITE``.
    """
    data_dir = config.storage.data_dir
    if access is DataAccess.WRITE and needs_single_process(config):
        with exclusive_data_folder(data_dir):
            yield
        return
    if access is DataAccess.WRITE:
        ensure_writable(data_dir)
    yield
