"""mediasim's messages go through the standard ``logging`` module, under
the logger ``mediasim`` (``mediasim.runner``, ``mediasim.campaign``, ...).
The engine's own warnings (a run stopped early by its budget, a trace or
pcap capture stopped at its limit) are Python warnings, which the command
line routes into logging too.

A library user configures logging as usual, e.g.
``logging.getLogger("mediasim").setLevel(logging.INFO)``; the command line
does it with ``-v`` / ``-vv`` / ``-q``.
"""

from __future__ import annotations

import logging
from typing import Any

LOGGER = "mediasim"


def get(name: str) -> logging.Logger:
    return logging.getLogger(f"{LOGGER}.{name}")


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Command-line logging: warnings by default, INFO with -v, DEBUG with
    -vv, errors only with -q; messages on stderr."""
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
    logging.captureWarnings(True)
    if quiet:
        import os

        os.environ["TQDM_DISABLE"] = "1"  # progress bars off in this process and its workers


def bar(total: int, desc: str, progress: bool = True, **kw: Any) -> Any:
    """A ``tqdm.auto`` progress bar (a widget in notebooks), off when
    ``progress`` is false or under ``mediasim -q`` (``TQDM_DISABLE``,
    which tqdm itself applies only to bars that do not say)."""
    import os

    from tqdm.auto import tqdm

    off = not progress or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true")
    return tqdm(total=total, desc=desc, disable=off, **{"unit": "run", **kw})
