"""An output folder holds one run (or one study's outputs), never a mix.

Everything is written into a staging folder beside the destination
(``.NAME.partial-PID``) and moved into place whole once complete:

- a destination that is missing or empty is simply taken;
- one that holds files is refused unless ``overwrite`` is given, and even
  then only if mediasim wrote it (its marker file, or a run's
  ``meta.json``): ``--overwrite`` never deletes a folder of the user's own;
- with ``overwrite`` the old folder stays untouched until the new one is
  complete, then the two are swapped (two renames) and the old one is
  deleted; a run that fails leaves the old folder as it was.

A reader therefore never finds tables of two runs side by side, nor a
half-written run under the destination's name.

A process killed inside this leaves its folders beside the destination:
the next output written there puts them right first (`_recover`), touching
only those of processes that no longer run: a half-written staging folder
is removed, and an earlier output moved aside for a swap the kill cut
short goes back in place (then the rules above apply to it).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from .errors import OutputFolderError

# Written into every output folder: what wrote it (a run, a study, the demo).
MARKER = ".mediasim-output.json"


def _foreign(folder: Path) -> bool:
    """True if ``folder`` holds files mediasim did not write as one output."""
    return not ((folder / MARKER).is_file() or (folder / "meta.json").is_file())


FLAG = "--overwrite (overwrite=True from Python)"


def check_free(folder: str | Path, overwrite: bool, flag: str = FLAG) -> None:
    """Raises OutputFolderError if ``folder`` cannot take a new output:
    it is a file, or it holds files and ``overwrite`` is off, or it holds
    files mediasim did not write. ``flag`` is how the caller's user says
    overwrite (``--overwrite`` or ``overwrite=True``)."""
    d = Path(folder)
    if d.resolve() in (Path.cwd(), *Path.cwd().parents):
        # Replacing it whole would pull the folder from under this process.
        raise OutputFolderError(f"{d}: the current folder (or one above it) cannot be an output folder; "
                                "name a new folder inside it")
    if not d.exists():
        return
    if not d.is_dir():
        raise OutputFolderError(f"{d}: exists and is not a folder")
    if not any(d.iterdir()):
        return
    if _foreign(d):
        raise OutputFolderError(
            f"{d}: the folder holds files that are not a mediasim output; choose a new or empty folder "
            f"({flag} only replaces a folder mediasim wrote)")
    if not overwrite:
        raise OutputFolderError(
            f"{d}: the folder already holds an earlier output; choose a new folder, or pass {flag} to "
            "replace it whole (the old folder stays until the new output is complete)")


@contextmanager
def staged(folder: str | Path, kind: str, overwrite: bool = False, flag: str = FLAG) -> Iterator[Path]:
    """Yields a fresh staging folder; on a normal exit it becomes ``folder``
    (replacing an earlier output when ``overwrite``), on an exception it
    is removed and ``folder`` is left as it was. ``kind`` is recorded in
    the marker file (``run``, ``study``, ``demo``)."""
    final = Path(folder)
    _recover(final)
    check_free(final, overwrite, flag)
    stage = final.parent / f".{final.name}.partial-{os.getpid()}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
    except OSError as e:
        # Name the folder asked for, not the staging folder beside it.
        raise OutputFolderError(f"{final}: cannot create the output folder there ({e.strerror or e})") from None
    try:
        yield stage
        (stage / MARKER).write_text(json.dumps({"kind": kind}) + "\n")
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    _swap_in(stage, final)


def _left_by_dead(final: Path, kind: str) -> list[Path]:
    """``final``'s ``.NAME.<kind>-PID`` folders whose process no longer runs."""
    prefix = f".{final.name}.{kind}-"
    try:
        entries = list(final.parent.iterdir())
    except OSError:
        return []
    out = []
    for d in entries:
        pid = d.name[len(prefix):]
        if d.name.startswith(prefix) and pid.isdigit() and not _running(int(pid)):
            out.append(d)
    return out


def _running(pid: int) -> bool:
    if os.name != "posix":
        return True  # no way to ask without side effects: leave its folders
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it runs, as another user
    return True


def _recover(final: Path) -> None:
    """Puts right what processes killed inside `staged` left beside ``final``."""
    for old in _left_by_dead(final, "old"):
        if final.exists():
            # Killed after the swap, before deleting the earlier output.
            shutil.rmtree(old, ignore_errors=True)
        else:
            # Killed between the swap's two renames: the earlier output
            # goes back (its replacement never counted as complete).
            try:
                os.rename(old, final)
            except OSError as e:
                raise OutputFolderError(
                    f"{final}: the earlier output a killed run moved aside is at {old} and cannot be put back "
                    f"({e.strerror or e}); move it back or remove it") from None
    for stage in _left_by_dead(final, "partial"):
        shutil.rmtree(stage, ignore_errors=True)


def _swap_in(stage: Path, final: Path) -> None:
    if final.exists() and any(final.iterdir()):
        old = final.parent / f".{final.name}.old-{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(final, old)
        os.rename(stage, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        # rename() replaces an empty folder in one step (POSIX).
        if final.exists():
            final.rmdir()
        os.rename(stage, final)


def moved(path: Path, stage: Path, final: Path) -> Path:
    """Where ``path`` (written under ``stage``) is once ``stage`` became ``final``."""
    return Path(final) / Path(path).relative_to(stage)


F = TypeVar("F", bound=Callable[..., Path])


def one_output(kind: str) -> Callable[[F], F]:
    """Makes a function that writes a study's outputs into its ``out``
    argument (and returns the path of its report) write them staged: it
    writes into a staging folder and returns where the report is once that
    folder became ``out``. The function declares ``overwrite: bool = False``
    (so its signature, and a type checker, show it); the staging reads it,
    the body need not."""

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)
        if "overwrite" not in sig.parameters or "out" not in sig.parameters:
            raise TypeError(f"{fn.__qualname__}: one_output needs parameters 'out' and 'overwrite'")

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Path:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            final = Path(bound.arguments["out"])
            with staged(final, kind, bool(bound.arguments["overwrite"])) as stage:
                bound.arguments["out"] = stage
                path = fn(*bound.args, **bound.kwargs)
            return moved(path, stage, final)

        return cast(F, run)

    return wrap
