"""mediasim's messages go through the standard ``logging`` module, under
the logger ``mediasim`` (``mediasim.runner``, ``mediasim.campaign``, ...).
The engine's own warnings (a run stopped early by its budget, a trace or
pcap capture stopped at its limit) are Python warnings, which the command
line routes into logging too.

A library user configures logging as usual, e.g.
``logging.getLogger("mediasim").setLevel(logging.INFO)``; the command line
does it with ``-v`` / ``-vv`` / ``-q``.

``logging`` itself is imported on the first message or warning, not
before: a command that has nothing to say (``mediasim -q run``) does not
pay the ~4 ms its import costs.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

LOGGER = "mediasim"

# The command line's (verbose, quiet), applied once logging is imported.
_pending: tuple[int, bool] | None = None


# Message methods by the lowest command-line verbosity that shows them
# (-q counts as -1).
_SHOWN_FROM = {"debug": 2, "info": 1, "warning": 0}


def _ignore(*args: Any, **kw: Any) -> None:
    pass


class _Logger:
    """A ``logging.Logger`` made on first use. Until then, a message the
    command line's level would drop is dropped here, without importing
    logging (every run logs a line at INFO)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if _pending is not None and "logging" not in sys.modules:
            verbose, quiet = _pending
            if (-1 if quiet else verbose) < _SHOWN_FROM.get(attr, -9):
                return _ignore
        _ready()
        import logging

        return getattr(logging.getLogger(self._name), attr)


def get(name: str) -> Any:
    return _Logger(f"{LOGGER}.{name}")


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Command-line logging: warnings by default, INFO with -v, DEBUG with
    -vv, errors only with -q; messages on stderr."""
    global _pending
    _pending = (verbose, quiet)
    # On the command line a warning is its category and message (the
    # source line that issued it means nothing to the user).
    warnings.formatwarning = lambda message, category, *_a, **_k: f"{category.__name__}: {message}"
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"  # progress bars off in this process and its workers
    if "logging" in sys.modules:
        _ready()
    else:
        warnings.showwarning = _first_warning


def _first_warning(*args: Any, **kw: Any) -> None:
    _ready()  # captureWarnings has replaced showwarning with logging's
    warnings.showwarning(*args, **kw)


def _ready() -> None:
    """Applies the pending command-line configuration, once."""
    global _pending
    if _pending is None:
        return
    import logging

    (verbose, quiet), _pending = _pending, None
    level = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger(LOGGER)
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    warnings_log = logging.getLogger("py.warnings")
    warnings_log.handlers[:] = [handler]
    warnings_log.setLevel(level)
    warnings_log.propagate = False  # shown once, also where the root logger has handlers of its own
    logging.captureWarnings(True)


def bar(total: float, desc: str, progress: bool = True, **kw: Any) -> Any:
    """A ``tqdm.auto`` progress bar (a widget in notebooks), off when
    ``progress`` is false or under ``mediasim -q`` (``TQDM_DISABLE``,
    which tqdm itself applies only to bars that do not say). A bar that is
    off is a ``_NoBar``: importing tqdm.auto took 30 ms of every quiet
    campaign command."""
    off = not progress or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true")
    if off:
        return _NoBar(total)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, **{"unit": "run", **kw})


class _NoBar:
    """A progress bar that is off: counts, shows nothing (the part of
    tqdm's interface mediasim uses)."""

    def __init__(self, total: float):
        self.total, self.n = total, 0.0

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass
