"""A limit on the runs and scenarios that code makes from parameters (a
study's), checked as each is made: parameters that would make millions
are stopped as they pass the limit, before all are held in memory.

``Job`` and ``Scenario`` count themselves (``made``) while a limit is in
force (``making_at_most``); outside one, nothing is counted.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator


class TooMany(ValueError):
    """More runs or scenarios made within ``making_at_most`` than it
    allows; ``kind`` says which and ``most`` its limit."""

    def __init__(self, kind: str, most: int):
        super().__init__(f"more than {most:,} {kind}")
        self.kind, self.most = kind, most


#: What may still be made, by kind, within the limit in force (None: none).
_LEFT: contextvars.ContextVar[dict[str, list[int]] | None] = contextvars.ContextVar("mediasim_budget", default=None)


@contextlib.contextmanager
def making_at_most(runs: int, scenarios: int) -> Iterator[None]:
    """Within it, making a run (``Job``) beyond the ``runs``-th or a
    ``Scenario`` beyond the ``scenarios``-th raises TooMany."""
    token = _LEFT.set({"runs": [runs, runs], "scenarios": [scenarios, scenarios]})
    try:
        yield
    finally:
        _LEFT.reset(token)


def made(kind: str) -> None:
    """Counts one more of ``kind`` ("runs" or "scenarios") against the
    limit in force, if any."""
    left = _LEFT.get()
    if left is not None:
        count = left[kind]
        count[0] -= 1
        if count[0] < 0:
            raise TooMany(kind, count[1])
