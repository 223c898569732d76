"""Run one scenario."""

from __future__ import annotations

from pathlib import Path

from . import _engine
from .errors import ScenarioError
from .results import Results
from .scenario import Scenario, as_scenario


def run(
    scenario: Scenario | dict | str | Path,
    seed: int = 0,
    replication: int = 0,
    out: str | Path | None = None,
    pcap: bool = False,
    trace: bool = False,
) -> Results:
    """Runs ``scenario`` (a Scenario, a dict, or a file path) once.

    ``seed`` and ``replication`` select the random streams: the same pair
    gives bit-identical results. With ``out``, tables are written there as
    Parquet (and pcap files under ``out/pcap`` when ``pcap`` is on or the
    scenario asks for it).
    """
    sc = as_scenario(scenario)
    if seed < 0 or replication < 0:
        raise ValueError("seed and replication must be non-negative integers")
    if out is None and (pcap or (sc.data.get("measure") or {}).get("pcap") is True):
        raise ScenarioError("measure.pcap: pcap files need an output folder (run(..., out=FOLDER) or --out)",
                            [("measure.pcap", "pcap files need an output folder (out=FOLDER or --out)")])
    pcap_dir = str(Path(out) / "pcap") if out is not None else None
    raw, meta = _engine.run(sc.to_json(), seed=seed, replication=replication, pcap_dir=pcap_dir, pcap=pcap, trace=trace)
    res = Results.from_engine(raw, meta)
    if out is not None:
        res.to_parquet(out)
    return res
