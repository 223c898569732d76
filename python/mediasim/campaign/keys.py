"""What identifies a run: the canonical scenario (after every override),
the seed, the replication and the engine build. Two runs with the same
key give bit-identical tables, so a stored run may stand in for a new one;
anything that could change a result changes the key."""

from __future__ import annotations

import hashlib
import json
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


def run_key(scenario: dict[str, Any], seed: int, replication: int, engine_build: str) -> str:
    return canonical_run_key(canonical(scenario), seed, replication, engine_build)


def canonical_run_key(text: str, seed: int, replication: int, engine_build: str) -> str:
    """``run_key`` of a scenario already made ``canonical`` (``text``)."""
    blob = json.dumps([text, int(seed), int(replication), engine_build])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]
