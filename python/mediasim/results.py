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
- ``link_capacity``: capacity offered and bytes carried per link direction
  and interval (links whose rate, delay or state changes).
- ``queue_classes``: per class of a class-based queue (drr, priority).
- ``trace``: per-hop packet events (if asked for).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import table_columns
from .plain import read_bytes

if TYPE_CHECKING:
    # Imported where a DataFrame is made or read: a run that only writes
    # its tables (``mediasim run --out``) never imports pandas, which took
    # more than half of that command's time.
    import pandas as pd

    from .errors import TableNotFound
from .table_columns import CATEGORICAL_TEXT  # noqa: F401 - part of this module's interface

# Every table a run can produce, with what it holds (docs/results.md has
# every column). Each is a property of Results, so tab completion lists it.
TABLES = {
    "flows": "one row per (flow, receiver): counts, losses by reason, throughput, delay, jitter, loss runs",
    "packets": "one row per delivered packet copy (with measure.packets)",
    "drops": "one row per dropped packet copy, with reason and site (with measure.packets)",
    "throughput": "per (flow, receiver) and window of measure.windows_s",
    "loss_runs": "histogram of runs of consecutive lost packets per (flow, receiver)",
    "links": "per link direction: rate, delay, packets and bytes sent, utilization, losses",
    "queues": "per link direction: arrivals, departures, drops, mean and max length",
    "queue_samples": "queue length over time (with measure.queue_sample_ms)",
    "link_capacity": "capacity offered and bytes carried per link direction and interval (changing links; "
                     "measure.capacity_interval_ms)",
    "queue_classes": "per class of a class-based queue (drr, priority, wred)",
    "trace": "per-hop packet events (with measure.trace)",
    "tcp": "one row per TCP flow: sender and receiver counters, goodput, SRTT",
    "tcp_series": "TCP window, ssthresh, RTT, SRTT, RTO and recovery over time (with measure.series)",
    "rtp": "one row per RTP session member: RTCP share, feedback, loss reports",
    "rtp_series": "the target rate of media under a rate controller over time (with measure.series)",
    "media": "one row per frame-based media stream: frames, pacer, per-packet feedback, playout, voice quality",
    "media_series": "target and codec rates, frame sizes and pacer queue over time (with measure.series)",
    "tfrc": "one row per TFRC flow: rate, RTT, loss event rate",
    "tfrc_series": "TFRC's allowed rate and loss event rate over time (with measure.series)",
    "paced": "one row per paced flow: packets sent and received, final target rate, feedback sent",
    "paced_series": "a paced flow's target rate over time (with measure.series)",
    "svc": "one row per scalable-video flow: layers offered, received, decodable, FEC",
    "svc_series": "SVC rate, operating point and available bandwidth over time (with measure.series)",
    "media_scaling": "one row per media-scaling flow: frames, scale, requests",
    "media_scaling_series": "the sender's and receiver's scale over time (with measure.series)",
    "rmtp": "one row per RMTP member: delivered, retransmissions, buffers",
    "rmtp_series": "the RMTP sender's window over time (with measure.series)",
}


META_KEY = b"mediasim"


def parquet_bytes(df: pd.DataFrame, meta: dict[str, Any]) -> bytes:
    """One table as Parquet, with the run's metadata embedded (key
    ``mediasim`` of the file's key-value metadata, without ``HOST_FACTS``),
    so that a file read on its own still says which run it came from."""
    return _parquet(_arrow_table(df), _meta_json(meta))


def parquet_tables(res: "Results") -> dict[str, bytes]:
    """Every table of ``res`` as ``parquet_bytes`` makes it, the same
    bytes; the engine's tables converted without making their DataFrames
    (``table_columns``)."""
    tables, meta = res.tables, _meta_json(res.meta)
    if isinstance(tables, Tables):
        return {name: _parquet(tables.arrow(name), meta) for name in tables}
    return {name: _parquet(_arrow_table(df), meta) for name, df in tables.items()}


# Facts of the host and the moment rather than of the run: in the
# metadata of the run just made (``Results.meta``, the printed summary),
# never written to a file, so that the same scenario and seed write the
# same bytes in every file, meta.json included.
HOST_FACTS = ("wall_s",)


def without_host_facts(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` as it is written to files: without ``HOST_FACTS``."""
    return {k: v for k, v in meta.items() if k not in HOST_FACTS}


def _meta_json(meta: dict[str, Any]) -> str:
    return json.dumps(without_host_facts(meta), sort_keys=True)


def _parquet(t: Any, meta_json: str) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = t.replace_schema_metadata({**(t.schema.metadata or {}), META_KEY: meta_json})
    # An arrow buffer, not io.BytesIO: the same bytes, without a call back
    # into Python for every write (15% of a small table's time).
    buf = pa.BufferOutputStream()
    pq.write_table(t, buf)
    return buf.getvalue().to_pybytes()


def _arrow_table(df: pd.DataFrame) -> Any:
    """``pa.Table.from_pandas(df, preserve_index=False)``, the same table,
    through a schema kept per (names, dtypes) (``through_kept_schema``).
    Columns of Python objects are typed by their values (an empty or
    all-None one is ``null``), so frames with any take the long way."""
    import pyarrow as pa

    dtypes = tuple(df.dtypes)
    if any(d == object for d in dtypes) or not df.columns.is_unique:
        return pa.Table.from_pandas(df, preserve_index=False)
    return table_columns.through_kept_schema(
        ("frame", tuple(df.columns), dtypes), len(df) == 0, lambda: df,
        lambda schema: [_arrow_array(col, f.type) for (_, col), f in zip(df.items(), schema)])


def _arrow_array(col: pd.Series, type_: Any) -> Any:
    """A column as from_pandas converts it: numbers and booleans through
    their numpy array (a Series' attribute look-ups cost more than the
    conversion of a short column), the rest as pyarrow converts a Series."""
    import pyarrow as pa

    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iufb":
        return pa.array(col.to_numpy(), type=type_, from_pandas=True)
    return pa.array(col, type=type_, from_pandas=True)


def parquet_meta(path: str | Path) -> dict[str, Any] | None:
    """The run metadata embedded in a Parquet file written by mediasim."""
    import pyarrow.parquet as pq

    md = pq.read_schema(path).metadata or {}
    return json.loads(md[META_KEY]) if META_KEY in md else None


def _frame(name: str, cols: dict[str, Any], meta: dict[str, Any]) -> pd.DataFrame:
    """A table the engine returned as a DataFrame (``table_columns``)."""
    return table_columns.to_frame(table_columns.columns(name, cols, meta))


class _Unbuilt:
    """A table not made into a DataFrame yet (see ``Tables``)."""

    def make(self) -> pd.DataFrame:
        raise NotImplementedError


class _EngineColumns(_Unbuilt):
    """A table as the engine returned it, made into a DataFrame when read."""

    def __init__(self, name: str, cols: dict[str, Any], meta: dict[str, Any]):
        self.name, self.cols, self.meta = name, cols, meta

    def make(self) -> pd.DataFrame:
        return _frame(self.name, self.cols, self.meta)

    def arrow(self) -> Any:
        """``_arrow_table(self.make())``, the same table, without making
        the DataFrame once its signature is known (``table_columns``)."""
        return table_columns.to_arrow(self.name, table_columns.columns(self.name, self.cols, self.meta))


def _with_codes(df: pd.DataFrame, name: str, meta: dict[str, Any]) -> pd.DataFrame:
    """An integer-coded column read back with every one of the engine's
    names as its categories, as the run gave it: a Parquet file keeps none
    when the table has no rows."""
    import pandas as pd

    for col, kind in meta.get("coded_columns", {}).get(name, {}).items():
        names = meta.get("codes", {}).get(kind)
        if col in df and isinstance(df[col].dtype, pd.CategoricalDtype) and names is not None \
                and len(df[col].cat.categories) != len(names):
            df[col] = pd.Categorical.from_codes(np.full(len(df), -1) if not len(df) else
                                                pd.Index(names).get_indexer(df[col].astype(str)),
                                                categories=pd.Index(names, dtype=str))
    return df


class _ParquetBytes(_Unbuilt):
    """A stored table, read when asked for."""

    def __init__(self, data: bytes, name: str = "", meta: dict[str, Any] | None = None):
        self.data, self.name, self.meta = data, name, meta or {}

    def make(self) -> pd.DataFrame:
        import io

        import pandas as pd

        return _with_codes(pd.read_parquet(io.BytesIO(self.data)), self.name, self.meta)


class _ParquetFile(_Unbuilt):
    """A table in a Parquet file, read when asked for. Pickled (sent from
    a helper process, or a Dask worker whose disk the receiver may not
    see) it carries the file's bytes, not its path."""

    def __init__(self, path: Path, name: str = "", meta: dict[str, Any] | None = None):
        self.path, self.name, self.meta = path, name, meta or {}

    def make(self) -> pd.DataFrame:
        import pandas as pd
        import pyarrow as pa

        try:
            df = pd.read_parquet(self.path)
        except pa.ArrowException as e:
            # A file changed or cut after the run wrote it (runs write
            # whole files only): say which, not Arrow's message alone.
            raise ValueError(f"{self.path}: not a readable Parquet table ({e}); the run folder is damaged") from None
        return _with_codes(df, self.name, self.meta)

    def __reduce__(self) -> tuple[Any, ...]:
        return _ParquetBytes, (self.path.read_bytes(), self.name, self.meta)


class Tables(MutableMapping):
    """A run's tables by name, each made into a DataFrame the first time
    it is read (then kept). A run returns a dozen tables; a sweep that
    reads one of each run's (its flows) no longer pays for building the
    other eleven, which took twice as long as the run itself for short
    runs. Otherwise a dict of DataFrames: ``name in tables`` does not
    build the table, iteration and ``items()`` build each in turn."""

    def __init__(self, items: dict[str, Any] | None = None):
        self._items: dict[str, Any] = dict(items or {})

    @classmethod
    def from_engine(cls, raw: dict[str, dict[str, Any]], meta: dict[str, Any]) -> "Tables":
        return cls({name: _EngineColumns(name, cols, meta) for name, cols in raw.items()})

    @classmethod
    def from_parquet_bytes(cls, raw: dict[str, bytes], meta: dict[str, Any] | None = None) -> "Tables":
        return cls({name: _ParquetBytes(b, name, meta) for name, b in raw.items()})

    def __getitem__(self, name: str) -> pd.DataFrame:
        v = self._items[name]
        if isinstance(v, _Unbuilt):
            v = self._items[name] = v.make()
        return v

    def columns(self, name: str) -> dict[str, np.ndarray]:
        """Table ``name``'s columns as read-only numpy arrays, as its
        DataFrame's ``to_numpy()`` gives them (text as str objects), made
        without building the DataFrame when it is not built yet."""
        v = self._items[name]
        if isinstance(v, _EngineColumns):
            return _read_only(table_columns.to_numpy(table_columns.columns(v.name, v.cols, v.meta)))
        return _read_only(table_columns.frame_to_numpy(self[name]))

    def plain(self, name: str) -> dict[str, list[Any]]:
        """Table ``name``'s columns as lists: the engine's values as it
        gives them to the command line's lean path (text as str, numbers
        as the engine counted them, NaN for none), or the DataFrame's
        ``tolist()`` for a table built otherwise. ``mediasim run --out``
        prints from these, without importing pandas."""
        v = self._items[name]
        if isinstance(v, _EngineColumns):
            return {k: _plain(c) for k, c in v.cols.items()}
        df = self[name]
        return {str(k): df[k].tolist() for k in df.columns}

    def arrow(self, name: str) -> Any:
        """Table ``name`` as a pyarrow Table (as ``pa.Table.from_pandas``
        makes it from the DataFrame, without the index)."""
        v = self._items[name]
        return v.arrow() if isinstance(v, _EngineColumns) else _arrow_table(self[name])

    def __setitem__(self, name: str, df: pd.DataFrame) -> None:
        self._items[name] = df

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Tables({list(self._items)})"


@dataclass
class Results:
    """What one run produced."""

    meta: dict[str, Any]
    tables: MutableMapping[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def from_engine(cls, raw: dict[str, dict[str, Any]], meta_json: str, extra: dict[str, Any] | None = None) -> "Results":
        meta = json.loads(meta_json)
        if extra:
            meta.update(extra)
        return cls(meta=meta, tables=Tables.from_engine(raw, meta))

    def table(self, name: str) -> pd.DataFrame:
        """Table ``name``; empty if the run has none of its kind (no TCP
        flow, say). A table the run did not record (the packet log when
        ``measure.packets`` was off) or a name that is no table is a
        ``TableNotFound`` error saying which, and listing the run's tables."""
        if not isinstance(name, str):
            raise TypeError(f"a table's name is text, such as 'flows' (got {name!r})")
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise missing_table(name, list(tables))

    def columns(self, name: str) -> dict[str, np.ndarray]:
        """Table ``name``'s columns as read-only numpy arrays (numbers as
        in the DataFrame, text as str objects, a missing code as NaN):
        ``{c: res.table(name)[c].to_numpy()}``, without pandas when the
        table came from the engine and was not read as a DataFrame yet.
        For a sweep's analysis of small tables, where building the
        DataFrames cost more than the run. Errors as ``table``."""
        tables = self.__dict__.get("tables", {})
        if isinstance(tables, Tables) and name in tables:
            return tables.columns(name)
        return _read_only(table_columns.frame_to_numpy(self.table(name)))

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_"):  # copy, pickle and IPython probe these
            raise AttributeError(name)
        return self.table(name)

    def __repr__(self) -> str:
        m = self.meta
        shapes = ", ".join(f"{n} {df.shape[0]}x{df.shape[1]}" for n, df in self.tables.items())
        early = f"; stopped early: {m['stopped_early']}" if m.get("stopped_early") else ""
        return (f"Results({m.get('scenario')!r}, seed {m.get('seed')}, replication {m.get('replication')}: "
                f"{m.get('duration_s')} s simulated, {m.get('delivered', 0):,} delivered, "
                f"{m.get('dropped', 0):,} dropped, {m.get('in_flight', 0):,} in flight{early}; tables: {shapes})")

    def _repr_html_(self) -> str:
        import html

        m = self.meta
        wall = f" in {m['wall_s']:.3g} s" if "wall_s" in m else ""
        head = html.escape(f"{m.get('scenario')}: seed {m.get('seed')}, replication {m.get('replication')}, "
                           f"{m.get('duration_s')} s simulated, {m.get('events', 0):,} events{wall}; "
                           f"{m.get('delivered', 0):,} delivered, "
                           f"{m.get('dropped', 0):,} dropped, {m.get('in_flight', 0):,} in flight")
        tables = ", ".join(f"<code>{n}</code> ({len(df):,} rows)" for n, df in self.tables.items())
        return (f"<div><b>mediasim Results</b> {head}<br>tables: {tables}"
                f"{self.summary().to_html(index=False, max_rows=20)}</div>")

    def summary(self) -> pd.DataFrame:
        """The per-flow table with the most-read columns, for printing."""
        cols = [
            "flow", "receiver", "sent", "received", "lost", "in_flight", "loss_rate",
            "throughput_bps", "delay_mean_ms", "delay_p99_ms", "jitter_ms",
        ]
        return self.flows[[c for c in cols if c in self.flows.columns]]

    def to_parquet(self, directory: str | Path, overwrite: bool = False) -> Path:
        """Writes every table as ``<name>.parquet`` and the metadata as
        ``meta.json`` into ``directory``, which then holds this run only:
        a folder holding an earlier output is refused unless ``overwrite``
        (then replaced whole once this one is written;
        ``mediasim.outfolder``)."""
        from .outfolder import staged

        with staged(directory, "run", overwrite) as stage:
            self.write_tables(stage)
        return Path(directory)

    def write_tables(self, d: str | Path) -> None:
        """Every table and ``meta.json`` (listing the tables written) into
        the new folder ``d``."""
        from .campaign.atomic import write_new_files

        d = Path(d)
        files = {f"{name}.parquet": data for name, data in parquet_tables(self).items()}
        meta = {**without_host_facts(self.meta), "tables": sorted(self.tables)}
        files["meta.json"] = (json.dumps(meta, indent=2) + "\n").encode()
        write_new_files(d, files)

    @classmethod
    def read_parquet(cls, directory: str | Path) -> "Results":
        """The run ``to_parquet`` wrote into ``directory``; each table is
        read when first asked for (reading a dozen took three times as
        long as a short run, where an analysis reads one or two). Only
        the tables the run's ``meta.json`` lists are read: a file it does
        not list is not this run's."""
        d = Path(directory)
        try:
            meta = json.loads(read_bytes(d / "meta.json"))
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(f"{d}: not a run folder ({'a file' if d.is_file() else 'no meta.json'})") from None
        except IsADirectoryError:
            raise ValueError(f"{d / 'meta.json'}: a folder, not a run's metadata; the run folder is damaged") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{d / 'meta.json'}: not JSON ({e}); the run folder is damaged") from None
        except OSError as e:  # larger than any run's metadata, or unreadable
            raise ValueError(f"{d / 'meta.json'}: cannot read ({e.strerror or e}); the run folder is damaged") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("tables", []), list):
            raise ValueError(f"{d / 'meta.json'}: not a run's metadata (a table with a list of tables); "
                             "the run folder is damaged")
        names = meta.get("tables")
        if names is None:  # written before runs listed their tables
            names = [p.stem for p in sorted(d.glob("*.parquet")) if _recorded(p.stem, meta)]
        missing = [n for n in names if not (d / f"{n}.parquet").is_file()]
        if missing:
            raise FileNotFoundError(f"{d}: table file(s) {', '.join(f'{n}.parquet' for n in missing)} listed in "
                                    "meta.json are missing; the folder is damaged")
        return cls(meta=meta, tables=Tables({n: _ParquetFile(d / f"{n}.parquet", n, meta) for n in names}))


# Why a known table can be absent: the measure option that records it.
_RECORDED_BY = {"packets": ("packet_log", "measure.packets", "--packets"),
                "drops": ("packet_log", "measure.packets", "--packets"),
                "trace": (None, "measure.trace", "--trace")}


def _recorded_by(name: str) -> tuple[str | None, str, str] | None:
    if name in _RECORDED_BY:
        return _RECORDED_BY[name]
    if name.endswith("_series") and name in TABLES:
        return ("series_log", "measure.series", "--series")
    return None


def _recorded(name: str, meta: dict[str, Any]) -> bool:
    """False if ``meta`` says table ``name`` was not recorded."""
    how = _recorded_by(name)
    return how is None or how[0] is None or meta.get(how[0]) is not False


def missing_table(name: str, available: list[str], what: str = "the run") -> "TableNotFound":
    """The error for asking ``what`` (a run, a campaign) for a table it
    does not have: not recorded (and how to record it), or no such table
    (with the closest names), listing the tables it has."""
    import difflib

    from .errors import TableNotFound

    have = f"{what} has: {', '.join(available) or 'no tables'}"
    how = _recorded_by(name)
    if how is not None:
        return TableNotFound(f"{name}: not recorded ({how[1]} was off; set it to true in the scenario, or run "
                             f"with {how[2]}); {have}")
    if name in TABLES:
        return TableNotFound(f"{name}: {what} has no such table; {have}")
    close = difflib.get_close_matches(name, [*available, *TABLES], n=3)
    hint = f" (did you mean {', '.join(map(repr, dict.fromkeys(close)))}?)" if close else ""
    return TableNotFound(f"{name!r} is not a mediasim table{hint}; {have}")


def _plain(c: Any) -> list[Any]:
    """One of the engine's columns (a list, a numpy array, or codes into
    names) as a list."""
    if isinstance(c, tuple):
        codes, names = c
        return [names[i] for i in codes.tolist()]
    return list(c) if isinstance(c, list) else c.tolist()


def _read_only(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Views of the columns that cannot be written: a DataFrame (built
    before or after) may share their memory."""
    out = {}
    for k, a in cols.items():
        out[k] = v = a.view()
        v.flags.writeable = False
    return out


def _table_property(name: str, doc: str) -> property:
    return property(lambda self: self.table(name), doc=doc)


for _name, _doc in TABLES.items():
    setattr(Results, _name, _table_property(_name, _doc))
