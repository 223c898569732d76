"""Exceptions raised by mediasim."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario is invalid. ``errors`` lists every problem as
    ``(path, message)``, e.g. ``("links[2].rate_bps", "must be a positive number (got 0)")``."""

    def __init__(self, message: str, errors: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.errors: list[tuple[str, str]] = [tuple(e) for e in (errors or [])]

    def __str__(self) -> str:  # one problem per line, paths first
        if not self.errors:
            return super().__str__()
        lines = [f"  {p}: {m}" for p, m in self.errors]
        return "invalid scenario:\n" + "\n".join(lines)


class RunStoppedEarly(UserWarning):
    """A run reached one of its budgets (max_events, max_wall_s,
    max_memory_mb) and ended there; its results cover the simulated time
    up to that point (``meta["stopped_early"]`` says why)."""


class OutputTruncated(UserWarning):
    """The per-hop trace or the pcap capture reached its limit
    (``limits.max_trace_rows``, ``limits.max_pcap_bytes``) and stopped
    there; the rest of the run's tables are complete."""


class EngineFailure(RuntimeError):
    """The engine could not finish a run it had accepted: simulated time
    stopped advancing, a conservation check failed, or an internal error
    (a bug). ``time_s`` is the simulated time reached (None if unknown)
    and ``component`` what was involved (a link, an application's node)."""

    def __init__(self, message: str, time_s: float | None = None, component: str | None = None):
        super().__init__(message)
        self.time_s = time_s
        self.component = component


class CampaignError(RuntimeError):
    """A campaign cannot go on as asked: a folder holding another engine's
    runs, a campaign file with a bad field."""
