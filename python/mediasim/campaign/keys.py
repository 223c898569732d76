"""What identifies a run: the canonical scenario (after every override),
the seed, the replication and the engine build. Two runs with the same
key give bit-identical tables, so a stored run may stand in for a new one;
anything that could change a result changes the key."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any


def canonical(scenario: dict[str, Any]) -> str:
    """The scenario as JSON text with sorted keys and no spaces: equal
    scenarios give equal text whatever order their fields were set in.
    Link traces given by file or name are read in first (``traces.resolve``):
    the key covers a trace's contents."""
    from ..traces import resolve

    return json.dumps(resolve(scenario), sort_keys=True, separators=(",", ":"), allow_nan=False)


def engine_identity() -> dict[str, str]:
    """The engine's version and build (a hash of its sources)."""
    from .. import _engine

    return {"engine_version": _engine.version(), "engine_build": _engine.build_id()}


@functools.cache
def package_build(root: Path | None = None) -> str:
    """A hash of the mediasim package's own files: its Python code and
    data, but not the compiled engine (``engine_build`` covers that). A
    study campaign's point is the study's analysis of its runs, so its key
    covers this too: a changed analysis makes the point again, from its
    stored runs. ``root``: the package's folder (by default this one)."""
    root = root or Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".so", ".pyd", ".pyc"):
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def run_key(scenario: dict[str, Any], seed: int, replication: int, engine_build: str) -> str:
    return canonical_run_key(canonical(scenario), seed, replication, engine_build)


def run_keys(jobs: list[Any], engine_build: str) -> list[str]:
    """``run_key`` of each job, each scenario made ``canonical`` once
    however many jobs share it (a grid's replications share their
    point's)."""
    texts: dict[int, str] = {}  # by id: the jobs hold their scenarios alive meanwhile
    out = []
    for j in jobs:
        text = texts.get(id(j.scenario))
        if text is None:
            text = texts[id(j.scenario)] = canonical(j.scenario)
        out.append(canonical_run_key(text, j.seed, j.replication, engine_build))
    return out


def canonical_run_key(text: str, seed: int, replication: int, engine_build: str) -> str:
    """``run_key`` of a scenario already made ``canonical`` (``text``)."""
    blob = json.dumps([text, int(seed), int(replication), engine_build])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]
