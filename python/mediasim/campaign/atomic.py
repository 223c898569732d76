"""Writes that are never seen half done: each file goes to a temporary
name in its folder first and is renamed into place (rename is atomic on
POSIX file systems), so a reader finds the old file, the new one, or
none."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, value: Any) -> None:
    # Insertion order kept: labels keep the order of the grid.
    write_bytes(path, (json.dumps(value, indent=2) + "\n").encode())


def read_json(path: Path) -> Any | None:
    """The JSON in ``path``, or None if it is missing, empty or damaged."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
