"""Writes that are never seen half done: each file goes to a temporary
name in its folder first and is renamed into place (rename is atomic on
POSIX file systems), so a reader finds the old file, the new one, or
none."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..plain import read_bytes


def write_bytes(path: str | Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` whole or not at all. A link is written
    through (its target replaced); a device or a pipe is written where it
    is, as renaming a file over it would replace the device itself."""
    path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file():
        with open(path, "wb") as f:
            f.write(data)
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk or Ctrl-C: no half-written file left beside
        raise


def save_figure(fig: Any, path: str | Path, **savefig: Any) -> Path:
    """Saves a matplotlib figure to ``path`` as ``write_bytes`` writes, in
    the format its suffix names; returns ``path``."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix[1:].lower(), **savefig)
    write_bytes(path, buf.getvalue())
    return Path(path)


def write_new_files(folder: Path, files: dict[str, bytes]) -> None:
    """Writes ``files`` (name -> bytes) as new files in ``folder``, which
    nobody reads yet (it is renamed into place whole afterwards), so no
    temporary names; durably: every file's data is on disk on return.
    All are written first and synced after, so that the file system
    commits them together (with one sync per file as it is written, 16
    files took a third longer here, and a run's storing more than its
    simulation)."""
    fds = []
    try:
        for name, data in files.items():
            fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            fds.append(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        for fd in fds:
            os.fsync(fd)
    finally:
        for fd in fds:
            os.close(fd)


def write_json(path: Path, value: Any) -> None:
    # Insertion order kept: labels keep the order of the grid.
    write_bytes(path, (json.dumps(value, indent=2) + "\n").encode())


def read_json(path: Path) -> Any | None:
    """The JSON in ``path``, or None if it is missing, empty or damaged."""
    try:
        return json.loads(read_bytes(path))
    except (OSError, ValueError):
        return None


def remove(path: Path) -> None:
    """Removes whatever is at ``path``: a folder with its contents, or a
    file or link (a folder's place taken by either must be cleared before
    a new folder can be renamed there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
