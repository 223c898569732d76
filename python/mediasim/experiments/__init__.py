"""The reference studies (shared/experiments/), one module each, all
behind one contract (``StudyModule``) and one driver (``reproduce``).

Each module defines a ``Params`` dataclass (every value the study did not
state is marked as chosen here, ``quick()`` gives the small version,
``with_overrides`` takes ``--set`` values), ``CASES`` (its case numbers,
``()`` for a study without cases), ``HAS_SENSITIVITY`` (whether it has
one-at-a-time sensitivity runs), ``reproduce(params, out, workers,
progress, *, overwrite, cache, **options)``, which writes its tables,
plots and report.md into ``out`` (staged: ``mediasim.outfolder``), and
``study_jobs(params, **options)``, every run that ``reproduce`` makes with
those options, made from the parameters alone (a study campaign counts and
checks them before it runs any: ``mediasim.campaign.study_plan``). The
command line, ``reproduce all`` and study campaigns all go through
``reproduce`` below, which checks the options against what the study
offers and adds the self-contained report.html.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

STUDIES = {
    "iw10": "iw10",
    "avpf": "avpf",
    "media-scaling": "media_scaling",
    "svc": "svc",
    "rmtp": "rmtp",
    "rmcat": "rmcat",
}


@runtime_checkable
class StudyModule(Protocol):
    """What every study module defines (a test holds each to it)."""

    Params: type
    CASES: tuple[int, ...]
    HAS_SENSITIVITY: bool

    def reproduce(self, p: Any, out: Path, workers: int | None = None, progress: bool = True, **options: Any
                  ) -> Path: ...

    def study_jobs(self, p: Any, **options: Any) -> list[Any]: ...


def get(name: str) -> StudyModule:
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r} (known: {', '.join(sorted(STUDIES))})")
    return import_module(f".{STUDIES[name]}", __name__)


class OptionError(ValueError):
    """A study does not offer an option asked of it; ``option`` is which
    (``cases`` or ``sensitivity``), for the caller to name its own field."""

    def __init__(self, option: str, message: str):
        super().__init__(message)
        self.option = option


def options(name: str, cases: tuple[int, ...] | list[int] | None = None, sensitivity: bool = False
            ) -> dict[str, Any]:
    """The study's keyword options for ``cases`` and ``sensitivity``; an
    ``OptionError`` if the study does not offer what is asked."""
    mod = get(name)
    out: dict[str, Any] = {}
    if cases:
        if not mod.CASES:
            raise OptionError("cases", f"study {name!r} has no cases")
        bad = [c for c in cases if c not in mod.CASES]
        if bad:
            raise OptionError("cases", f"{bad} not among {list(mod.CASES)}")
        out["cases"] = tuple(cases)
    if sensitivity:
        if not mod.HAS_SENSITIVITY:
            raise OptionError("sensitivity", f"study {name!r} has no sensitivity runs")
        out["sensitivity"] = True
    return out


def check_apart(runs: str | Path, out: str | Path) -> None:
    """A ValueError unless the runs' folder and the output folder are
    apart: one folder holding both would be a mix of a campaign and a
    study's output."""
    a, b = Path(runs).resolve(), Path(out).resolve()
    if a == b or a in b.parents or b in a.parents:
        raise ValueError(f"the runs' folder {runs} and the output folder {out} must be apart, neither inside the other")


def reproduce(name: str, params: Any, out: str | Path, *, workers: int | None = None, progress: bool = True,
              overwrite: bool = False, cache: Any = None, stamp: str | None = None,
              cases: tuple[int, ...] | list[int] | None = None, sensitivity: bool = False,
              scenarios_checked: bool = False, runs: str | Path | None = None) -> Path:
    """Runs study ``name`` with ``params`` into ``out`` and returns its
    report.md, with report.html beside it (``stamp``: the line saying what
    ran it; by default the engine's version and build, seed and
    replications). A ValueError, before anything runs, if some run
    cannot be made or its scenario is invalid; ``scenarios_checked``: the
    caller has checked them (a study campaign, for all its points before
    any runs). ``runs``: a campaign folder that stores every run as it
    finishes and serves those stored there (``campaign.stored_runs``), so
    that a study cut short, or failing after its runs, is resumed from
    them."""
    import contextlib

    from .. import _engine
    from ..campaign.study_plan import study_runs
    from ..reporting.html import report_html

    opts = options(name, cases, sensitivity)
    # Every scenario checked before the first run: a bad value that only a
    # sensitivity setting's runs reach is said now, not hours in.
    if not scenarios_checked:
        study_runs(name, params, opts)
    if runs is not None and cache is not None:
        raise ValueError("reproduce: give runs (a folder) or cache, not both")
    if runs is not None:
        check_apart(runs, out)
    store: Any = contextlib.nullcontext(cache)
    if runs is not None:
        from ..campaign.run import stored_runs

        store = stored_runs(runs, get(name).study_jobs(params, **opts), workers)
    with store as served:
        report = get(name).reproduce(params, Path(out), workers=workers, progress=progress, overwrite=overwrite,
                                     cache=served, **opts)
    if stamp is None:
        stamp = (f"mediasim {_engine.version()} (engine build {_engine.build_id()}); seed {params.seed}, "
                 f"{params.replications} replications")
    report_html(report, stamp)
    return report
