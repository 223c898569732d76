"""Reading a campaign back: one table over all its runs as one DataFrame,
with a column per swept parameter (named by its alias), the seed and the
replication in front."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import CampaignError
from .atomic import read_json
from .keys import engine_identity
from .store import RunStore


def _store(folder: str | Path) -> tuple[RunStore, dict[str, Any]]:
    index = read_json(Path(folder) / "campaign.json")
    if not isinstance(index, dict) or ("runs" not in index and "points" not in index):
        raise CampaignError(f"{folder}: not a campaign folder (no readable campaign.json)")
    return RunStore(Path(folder), engine_identity()), index


def read_sweep(folder: str | Path, table: str = "flows", columns: list[str] | None = None) -> pd.DataFrame:
    """``table`` of every finished run of the campaign in ``folder``, as
    one DataFrame: the swept parameters (one column each, by alias), then
    ``seed`` and ``replication``, then the table's columns (only
    ``columns`` if given). Only that table's files are read. Runs not
    finished (failed, or never run) are left out with a warning.

    For a study campaign (``mediasim.campaign.study``), ``table`` is one
    of the study's tables (``summary``, say), over every finished point,
    with a column per grid parameter in front."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store, index = _store(folder)
    if index.get("kind") == "study":
        return _read_points(Path(folder), index, table, columns)
    parts, fronts, missing, checked = [], [], 0, False
    for run in index["runs"]:
        if store.status(run["key"]) != "done":
            missing += 1
            continue
        if not checked:  # the runs of one campaign record the same tables
            _check_table(store, run["key"], table, folder)
            checked = True
        try:
            # ParquetFile.read without its thread pool: 0.45 ms a run's
            # small file, against 1.0 ms through pq.read_table (the dataset
            # layer, for every file).
            path = os.path.join(store.runs, run["key"], f"{table}.parquet")
            t = _read_columns(pq.ParquetFile(path), table, columns)
        except FileNotFoundError:
            continue  # this run has no such table (no flow of that kind)
        parts.append(t)
        fronts.append({**run["labels"], "seed": run["seed"], "replication": run["replication"]})
    if missing:
        warnings.warn(f"{folder}: {missing} of {len(index['runs'])} runs are not finished (failed or not run); "
                      "they are left out", UserWarning, stacklevel=2)
    if not parts:
        return pd.DataFrame()
    return _with_front(pa.concat_tables(parts, promote_options="default"), parts, fronts).to_pandas()


def _check_table(store: RunStore, key: str, table: str, folder: str | Path) -> None:
    """A ``TableNotFound`` error if the stored run ``key`` did not record
    ``table``, or no run could (a misspelled name)."""
    from ..results import missing_table

    info = store.info(key) or {}
    recorded = info.get("tables")
    if recorded is not None and table not in recorded:
        raise missing_table(table, list(recorded), what=f"{folder}'s runs")


def _read_columns(f: Any, table: str, columns: list[str] | None) -> Any:
    """``columns`` of a stored table (all if None); a name it lacks is an
    error naming it (ParquetFile.read would leave it out unsaid)."""
    if columns is not None:
        names = f.schema_arrow.names
        unknown = [c for c in columns if c not in names]
        if unknown:
            raise CampaignError(f"table {table!r} has no column {', '.join(map(repr, unknown))} "
                                f"(its columns: {', '.join(names)})")
    return f.read(columns=columns, use_threads=False)


def _with_front(t: Any, parts: list[Any], fronts: list[dict[str, Any]]) -> Any:
    """``t`` (the ``parts`` concatenated) with a column in front per key of
    ``fronts`` (each part's labels; a run's seed and replication too), in the order
    the keys first appear; a part without a key has nulls there. Each
    column is made once, over every row: numbers of both kinds make a
    float column, and values of mixed kinds (``--vary x=10,auto``) a text
    column, where a column per part would not concatenate."""
    import pyarrow as pa

    names = list(dict.fromkeys(k for f in fronts for k in f))
    for i, name in enumerate(names):
        values = [v for f, p in zip(fronts, parts) for v in [f.get(name)] * p.num_rows]
        try:
            col = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            col = pa.array([None if v is None else str(v) for v in values], type=pa.string())
        t = t.add_column(i, name, col)
    return t.unify_dictionaries()


def _read_points(folder: Path, index: dict[str, Any], table: str, columns: list[str] | None) -> pd.DataFrame:
    """One study table over the finished points of a study campaign."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .study import point_done

    parts, fronts, missing, known = [], [], 0, set()
    for pt in index["points"]:
        d = folder / "points" / pt["name"]
        if not point_done(d, pt["key"]):
            missing += 1
            continue
        known |= {p.stem for p in d.glob("*.parquet")}
        if not (d / f"{table}.parquet").exists():
            continue
        parts.append(_read_columns(pq.ParquetFile(d / f"{table}.parquet"), table, columns))
        fronts.append(pt["labels"])
    if missing:
        warnings.warn(f"{folder}: {missing} of {len(index['points'])} points are not finished (failed or not run); "
                      "they are left out", UserWarning, stacklevel=3)
    if not parts and known:
        from ..errors import TableNotFound

        raise TableNotFound(f"{folder}: the study wrote no table {table!r} (its tables: {', '.join(sorted(known))})")
    if not parts:
        return pd.DataFrame()
    return _with_front(pa.concat_tables(parts, promote_options="default"), parts, fronts).to_pandas()


def parameters(folder: str | Path) -> list[str]:
    """The swept parameters of a campaign (their aliases), in order."""
    _, index = _store(folder)
    runs = index["points"] if index.get("kind") == "study" else index["runs"]
    return list(runs[0]["labels"]) if runs else []


def summary(df: pd.DataFrame, by: list[str], metrics: list[str], level: float = 0.95) -> pd.DataFrame:
    """Mean and Student-t confidence interval of each metric per
    configuration (``by``: the parameters, and e.g. flow and receiver),
    over replications: columns ``<metric>_mean``, ``_ci_low``, ``_ci_high``
    and ``n``. A column ``by`` or ``metrics`` names that the table does
    not have, a metric that is not numeric, or a ``level`` outside (0, 1)
    is a ValueError saying so."""
    from ..stats import summarize

    by, metrics = _columns(df, "by", by), _columns(df, "metrics", metrics, numeric=True)
    if not (isinstance(level, float | int) and 0 < level < 1):
        raise ValueError(f"level: a confidence level between 0 and 1, such as 0.95 (got {level!r})")
    return summarize(df, by, metrics, level=level)


def _columns(df: pd.DataFrame, argument: str, names: Any, numeric: bool = False) -> list[str]:
    """``names`` (a list of column names, or one) checked against ``df``'s
    columns, as a list."""
    names = [names] if isinstance(names, str) else list(names)
    if missing := [n for n in names if n not in df.columns]:
        raise ValueError(f"{argument}: no column {', '.join(map(repr, missing))} in the table "
                         f"(its columns: {', '.join(map(str, df.columns))})")
    if numeric and (text := [n for n in names if not pd.api.types.is_numeric_dtype(df[n])]):
        raise ValueError(f"{argument}: {', '.join(map(repr, text))} not numeric: a metric is a number per row")
    return names


def to_xarray(df: pd.DataFrame, dims: list[str], metrics: list[str] | None = None) -> Any:
    """A grid campaign's table as an ``xarray.Dataset`` with one dimension
    per name in ``dims`` (the parameters, ``replication``, ...)."""
    try:
        import xarray  # noqa: F401
    except ImportError as e:
        raise ImportError("to_xarray needs xarray: pip install 'mediasim[xarray]'") from e
    dims = _columns(df, "dims", dims)
    metrics = _columns(df, "metrics", metrics, numeric=True) if metrics is not None else None
    data = df.set_index(dims)
    if data.index.has_duplicates:
        raise ValueError(f"{dims} do not identify the rows: add the columns that do (e.g. flow, receiver)")
    return data[metrics or [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]].to_xarray()
