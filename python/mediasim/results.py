"""Results of one run: pandas DataFrames plus run metadata.

Tables (see docs/results.md for every column):

- ``flows``: one row per (flow, receiver): counts, losses by reason,
  throughput, one-way delay statistics, RFC 3550 jitter, loss runs.
- ``packets``: one row per delivered packet (send/receive time, size, seq).
- ``drops``: one row per dropped packet copy, with reason and site.
- ``throughput``: per (flow, receiver) and measurement window.
- ``loss_runs``: histogram of runs of consecutive lost packets.
- ``links``, ``queues``: per link direction.
- ``queue_samples``: queue length over time (if sampling was asked for).
- ``queue_classes``: per class of a class-based queue (drr, priority).
- ``trace``: per-hop packet events (if asked for).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TABLES = ("flows", "packets", "drops", "throughput", "loss_runs", "links", "queues", "queue_samples", "trace", "tcp", "tcp_series")


META_KEY = b"mediasim"


def parquet_bytes(df: pd.DataFrame, meta: dict[str, Any]) -> bytes:
    """One table as Parquet, with the run's metadata embedded (key
    ``mediasim`` of the file's key-value metadata), so that a file read on
    its own still says which run it came from."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.Table.from_pandas(df, preserve_index=False)
    t = t.replace_schema_metadata({**(t.schema.metadata or {}), META_KEY: json.dumps(meta, sort_keys=True)})
    buf = io.BytesIO()
    pq.write_table(t, buf)
    return buf.getvalue()


def parquet_meta(path: str | Path) -> dict[str, Any] | None:
    """The run metadata embedded in a Parquet file written by mediasim."""
    import pyarrow.parquet as pq

    md = pq.read_schema(path).metadata or {}
    return json.loads(md[META_KEY]) if META_KEY in md else None


# Text columns with few distinct values (codes): categoricals.
CATEGORICAL_TEXT = {"event", "reason", "site", "kind", "var", "role"}


def _column(name: str, v: Any) -> Any:
    """Stable dtypes whether a table is full or empty: counters as int64
    (so that differences can go negative), text as str, coded text as
    categoricals."""
    if isinstance(v, list):
        text = pd.Series(v, dtype="str")
        return pd.Categorical(text) if name in CATEGORICAL_TEXT else text
    a = np.asarray(v)
    if a.dtype == np.uint64:
        if a.size and a.max() > np.iinfo(np.int64).max:
            raise OverflowError(f"column {name}: a counter above 2^63")
        a = a.astype(np.int64)
    return a


def _frame(name: str, cols: dict[str, Any], meta: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame({k: _column(k, v) for k, v in cols.items()})
    # Integer-coded columns become categoricals with the engine's names.
    coded = meta.get("coded_columns", {}).get(name, {})
    for col, code in coded.items():
        if col in df:
            # Names are unique (the engine validates them).
            df[col] = pd.Categorical.from_codes(df[col].to_numpy().astype("int64"), categories=meta["codes"][code])
    for col in [c for c in df.columns if c.endswith("_ns")]:
        df[col[:-3] + "_s"] = df[col].to_numpy() * 1e-9
    if name == "packets" and len(df.columns):
        df["delay_ms"] = (df["recv_ns"].to_numpy().astype("int64") - df["sent_ns"].to_numpy().astype("int64")) * 1e-6
    return df


@dataclass
class Results:
    """What one run produced."""

    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def from_engine(cls, raw: dict[str, dict[str, Any]], meta_json: str, extra: dict[str, Any] | None = None) -> "Results":
        meta = json.loads(meta_json)
        if extra:
            meta.update(extra)
        tables = {name: _frame(name, cols, meta) for name, cols in raw.items()}
        return cls(meta=meta, tables=tables)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        meta = self.__dict__.get("meta", {})
        if name in ("packets", "drops") and meta.get("packet_log") is False:
            raise AttributeError(f"{name}: not recorded (measure.packets is false; set it to true, "
                                 "or run with --packets)")
        if name.endswith("_series") and meta.get("series_log") is False:
            raise AttributeError(f"{name}: not recorded (measure.series is false; set it to true, "
                                 "or run with --series)")
        if name in TABLES:
            return pd.DataFrame()
        raise AttributeError(name)

    def summary(self) -> pd.DataFrame:
        """The per-flow table with the most-read columns, for printing."""
        cols = [
            "flow", "receiver", "sent", "received", "lost", "in_flight", "loss_rate",
            "throughput_bps", "delay_mean_ms", "delay_p99_ms", "jitter_ms",
        ]
        return self.flows[[c for c in cols if c in self.flows.columns]]

    def to_parquet(self, directory: str | Path) -> Path:
        """Writes every table as ``<name>.parquet`` and the metadata as
        ``meta.json`` into ``directory`` (created if needed)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        from .campaign.atomic import write_bytes, write_json

        for name, df in self.tables.items():
            write_bytes(d / f"{name}.parquet", parquet_bytes(df, self.meta))
        write_json(d / "meta.json", self.meta)
        return d

    @classmethod
    def read_parquet(cls, directory: str | Path) -> "Results":
        d = Path(directory)
        meta = json.loads((d / "meta.json").read_text())
        tables = {p.stem: pd.read_parquet(p) for p in sorted(d.glob("*.parquet"))}
        return cls(meta=meta, tables=tables)
