"""Exceptions raised by mediasim, and the hint their messages give for a
misspelt name."""

from __future__ import annotations


def likely_meant(name: str, names: list[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely misspells (difflib's
    closest, at a likeness of 0.6 or more), or None."""
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    return close[0] if close else None


class ScenarioError(ValueError):
    """A scenario is invalid. ``errors`` lists every problem as
    ``(path, message)``, e.g. ``("links[2].rate_bps", "must be a positive number (got 0)")``."""

    def __init__(self, message: str, errors: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.errors: list[tuple[str, str]] = [(p, m) for p, m in (errors or [])]

    @classmethod
    def at(cls, path: str, msg: str) -> "ScenarioError":
        """One problem, ``msg``, at the field (or file) ``path``."""
        return cls(f"{path}: {msg}", [(path, msg)])

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
    """The per-hop trace, the queue samples, a time series or the pcap
    capture reached its limit (``limits.max_trace_rows``,
    ``limits.max_queue_sample_rows``, ``limits.max_series_rows``,
    ``limits.max_pcap_bytes``) and stopped there (``meta`` says which:
    ``trace_truncated``, ``queue_samples_truncated``, ``series_truncated``,
    ``pcap_truncated``);
    the rest of the run's tables are complete."""


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


class OutputFolderError(FileExistsError):
    """An output folder cannot take a new run: it already holds an earlier
    output (pass ``overwrite=True`` / ``--overwrite`` to replace it whole),
    or files mediasim did not write."""


class TableNotFound(KeyError, AttributeError):
    """A run or a campaign has no table of that name: it was not recorded
    (the message says which option records it) or the name is no table
    (the message lists the tables there are). A KeyError for
    ``results.table(name)`` and an AttributeError for ``results.name``."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ImplausibleValue(UserWarning):
    """A valid value that is probably a unit slip (a link below 10 kbit/s,
    a delay below 0.1 ms, a link that cannot send one full packet in the
    run). The message starts with the field's path, so one field is
    silenced with ``warnings.filterwarnings("ignore", message=re.escape(path))``
    (``mediasim run --allow PATH``), all with
    ``warnings.simplefilter("ignore", ImplausibleValue)`` (``--allow all``)."""
