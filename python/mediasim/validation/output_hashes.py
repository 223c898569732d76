"""Hashes of every output table of the examples and of the studies' quick
runs: a regression check that a change meant to keep results (a refactor,
a speed-up) keeps them bit for bit.

``scripts/output-hashes`` compares the current code with the stored
baseline (``tests/data/output_hashes.json``); ``--update`` rewrites the
baseline after a change that is meant to alter results (say why in the
commit). ``tests/test_output_hashes.py`` runs the same comparison in CI.

What is hashed:
- each example in ``examples/`` run with seed 1, per-hop trace, pcap, the
  per-packet tables and the series on:
  every engine table (column names, dtypes and raw bytes), the run
  metadata except wall time and the engine build, and every pcap file's bytes;
- each study in quick mode and the demo with 2 replications: every table
  the study writes (its Parquet files, read back and written as CSV text,
  so that Parquet's own metadata does not count).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
BASELINE = ROOT / "tests" / "data" / "output_hashes.json"
EXAMPLE_SEED = 1
DEMO_REPLICATIONS = 2


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()[:32]


def table_hash(cols: dict[str, Any]) -> str:
    """Hash of one engine table: names, dtypes and bytes of its columns."""
    parts: list[bytes] = []
    for name in sorted(cols):
        v = cols[name]
        parts.append(name.encode())
        if isinstance(v, tuple):  # (codes, names): the same strings, hashed alike
            codes, names = v
            v = [names[c] for c in codes]
        if isinstance(v, list):
            parts.append(b"str")
            parts.append("\x00".join(v).encode())
        else:
            a = np.ascontiguousarray(v)
            parts.append(str(a.dtype).encode())
            parts.append(a.tobytes())
    return _digest(parts)


def example_hashes(examples: Path = EXAMPLES) -> dict[str, str]:
    from .. import _engine
    from ..scenario import load_scenario

    out: dict[str, str] = {}
    for path in sorted(p for p in examples.iterdir() if p.suffix in (".toml", ".yaml", ".json")):
        with tempfile.TemporaryDirectory() as tmp:
            sc = load_scenario(path).measure(packets=True, series=True)
            raw, meta_json = _engine.run(sc.to_json(), seed=EXAMPLE_SEED, replication=0,
                                         pcap_dir=tmp, pcap=True, trace=True)
            for table, cols in raw.items():
                out[f"example:{path.name}:{table}"] = table_hash(cols)
            meta = json.loads(meta_json)
            meta.pop("wall_s", None)
            meta.pop("engine_build", None)  # changes with every edit of the engine's sources
            out[f"example:{path.name}:meta"] = _digest([json.dumps(meta, sort_keys=True).encode()])
            for pcap in sorted(Path(tmp).glob("*.pcap")):
                out[f"example:{path.name}:pcap:{pcap.name}"] = _digest([pcap.read_bytes()])
    return out


def folder_hashes(label: str, folder: Path) -> dict[str, str]:
    """Hashes of the tables a study wrote into ``folder``."""
    import pandas as pd

    out = {}
    for p in sorted(folder.glob("*.parquet")):
        text = pd.read_parquet(p).to_csv(index=False)
        out[f"{label}:{p.stem}"] = _digest([text.encode()])
    if not out:
        raise RuntimeError(f"{label}: no tables found in {folder}")
    return out


def run_studies(root: Path, workers: int | None = 2) -> dict[str, Path]:
    """Runs every study in quick mode and the demo; returns their folders."""
    from .. import experiments
    from ..experiments.demo import run_demo

    folders = {}
    for name in sorted(experiments.STUDIES):
        mod = experiments.get(name)
        folders[f"study:{name}"] = root / name
        mod.reproduce(mod.Params().quick(), root / name, workers=workers, progress=False)
    run_demo(root / "demo", replications=DEMO_REPLICATIONS, seed=1, workers=workers)
    folders["demo"] = root / "demo"
    return folders


def compute(study_folders: dict[str, Path] | None = None, workers: int | None = 2) -> dict[str, str]:
    hashes = example_hashes()
    with tempfile.TemporaryDirectory() as tmp:
        folders = study_folders if study_folders is not None else run_studies(Path(tmp), workers)
        for label, folder in folders.items():
            hashes.update(folder_hashes(label, folder))
    return dict(sorted(hashes.items()))


def differences(current: dict[str, str], baseline: dict[str, str]) -> list[str]:
    """What differs, one line per table: changed, new or missing."""
    lines = []
    for k in sorted(set(current) | set(baseline)):
        if k not in baseline:
            lines.append(f"new:     {k}")
        elif k not in current:
            lines.append(f"missing: {k}")
        elif current[k] != baseline[k]:
            lines.append(f"changed: {k}")
    return lines


def load_baseline(path: Path = BASELINE) -> dict[str, str]:
    return json.loads(path.read_text())["hashes"]


def save_baseline(hashes: dict[str, str], path: Path = BASELINE) -> None:
    doc = {
        "about": "Hashes of every output table of the examples and the quick studies; "
                 "see python/mediasim/validation/output_hashes.py. Update with scripts/output-hashes --update.",
        "hashes": hashes,
    }
    path.write_text(json.dumps(doc, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="output-hashes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the stored baseline")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    current = compute(workers=args.workers)
    if args.update:
        save_baseline(current)
        print(f"baseline written: {len(current)} hashes in {BASELINE.relative_to(ROOT)}")
        return 0
    diff = differences(current, load_baseline())
    for line in diff:
        print(line)
    print(f"{len(current)} tables hashed; {len(diff)} differ from the baseline")
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
