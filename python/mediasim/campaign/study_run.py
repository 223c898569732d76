"""Running a study campaign (``mediasim.campaign.study``): each grid
point's study pipeline written under ``points/.partial/`` and renamed into
place with its marker, its runs served by the campaign folder."""

from __future__ import annotations

import os
import shutil
import time
import traceback
from pathlib import Path
from typing import Any

from ..log import get as _logger
from . import cache
from .atomic import remove, write_bytes, write_json
from .executors import make_executor
from .keys import engine_identity, package_build
from .store import RunStore
from .study import MARKER, Point, StudyCampaign, StudyCampaignReport, point_done
from .study_plan import plan_points

log = _logger("campaign")


def run_study_campaign(spec: StudyCampaign, progress: bool = True, executor: Any = None) -> StudyCampaignReport:
    """Runs every point of ``spec`` not already stored; returns what this
    invocation did. A point that fails is recorded in ``failed/`` and the
    others go on."""
    engine = engine_identity()
    points, options = spec.points(), spec.options()
    # Every scenario of the points to run is checked before anything runs
    # or is written: a campaign does not run its first points only to stop
    # at a later one's bad value.
    keys = plan_points(spec, RunStore.check(spec.out, engine), points).keys
    store = RunStore.open(spec.out, engine)
    root = store.root / "points"
    shutil.rmtree(root / ".partial", ignore_errors=True)
    write_json(store.root / "campaign.json", {
        **engine, "kind": "study", "study": spec.study, "aliases": spec.aliases, "options": options,
        "points": [{"name": pt.name, "key": keys[pt.name], "labels": pt.labels} for pt in points],
        "runs": [],
    })
    report = StudyCampaignReport(store.root, len(points))
    ex = executor or make_executor(spec.workers, spec.scheduler)
    try:
        # Every run_many of the study goes through the campaign folder.
        served = cache.RunCache(store, ex)
        for pt in points:
            if point_done(root / pt.name, keys[pt.name]):
                report.reused += 1
                continue
            log.info("%s: point %s", spec.study, pt.labels)
            error = _run_point(spec, pt, keys[pt.name], options, root, store, progress, served)
            if error:
                report.failed.append({"labels": pt.labels, "error": error})
            else:
                report.ran += 1
        report.runs_ran, report.runs_reused = served.ran, served.reused
    finally:
        if executor is None and hasattr(ex, "close"):
            ex.close()
    write_index(spec, points, keys, store.root)
    return report


def _run_point(spec: StudyCampaign, pt: Point, key: str, options: dict[str, Any], root: Path, store: RunStore,
               progress: bool, served: cache.RunCache) -> str:
    """One point into ``root/<name>``; returns the error, or ''."""
    from .. import experiments

    tmp = root / ".partial" / f"{pt.name}-{os.getpid()}"  # .partial was cleared as the campaign began
    t0 = time.perf_counter()
    try:
        experiments.reproduce(spec.study, pt.params, tmp, workers=spec.workers, progress=progress, cache=served,
                              stamp=f"mediasim {store.engine['engine_version']} (engine build "
                                    f"{store.engine['engine_build']}); {spec.study} at {pt.labels}",
                              cases=options.get("cases"), sensitivity=options.get("sensitivity", False),
                              scenarios_checked=True)  # every point's, by plan_points before any ran
    except Exception as e:  # noqa: BLE001 - recorded; the other points go on
        shutil.rmtree(tmp, ignore_errors=True)
        error = f"{type(e).__name__}: {e}"
        log.warning("%s point %s failed: %s", spec.study, pt.labels, error)
        write_json(store.failed / f"point-{pt.name}.json", {
            "labels": pt.labels, "key": key, **store.engine, "error": error, "traceback": traceback.format_exc()})
        return error
    files = {str(p.relative_to(tmp)): p.stat().st_size for p in sorted(tmp.rglob("*")) if p.is_file()}
    # No wall time in the marker: the same point writes the same bytes.
    write_json(tmp / MARKER, {"key": key, "study": spec.study, "labels": pt.labels, "options": options,
                              "params": _params_text(pt.params), **store.engine, "package_build": package_build(),
                              "files": files})
    log.info("%s point %s: %.1f s", spec.study, pt.labels, time.perf_counter() - t0)
    dest = root / pt.name
    remove(dest)
    os.rename(tmp, dest)
    (store.failed / f"point-{pt.name}.json").unlink(missing_ok=True)
    return ""


def _params_text(p: Any) -> dict[str, str]:
    import dataclasses

    return {k: str(v) for k, v in dataclasses.asdict(p).items()}


def write_index(spec: StudyCampaign, points: list[Point], keys: dict[str, str], folder: Path) -> Path:
    """index.md: one line per point with its status and report."""

    lines = [f"# Study campaign: {spec.study}", "", f"{len(points)} points over "
             f"{', '.join(spec.grid)}" + (" (quick parameters)" if spec.quick else "") + ".", "",
             "| " + " | ".join([*spec.grid, "status", "report"]) + " |",
             "|" + "---|" * (len(spec.grid) + 2)]
    for pt in points:
        done = point_done(folder / "points" / pt.name, keys[pt.name])
        link = f"[report](points/{pt.name}/report.md)" if done else ""
        lines.append("| " + " | ".join([*(str(v) for v in pt.labels.values()), "done" if done else "failed",
                                        link]) + " |")
    path = folder / "index.md"
    write_bytes(path, ("\n".join(lines) + "\n").encode())
    return path
