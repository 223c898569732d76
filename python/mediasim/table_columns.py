"""A run's table as the engine returns it, described once and made into
either a pandas DataFrame (what ``Results`` gives) or a pyarrow Table
(what a campaign stores), the two always alike: the arrow table is the
very one ``pa.Table.from_pandas`` makes from the DataFrame.

The description (``columns``) gives each column its final form: counters
as int64 (so that differences can go negative), an application table's
counts (``meta["integer_columns"]``) as nullable ``Int64`` (``Ints``:
missing where a flow's applications report none), text as ``Text``
(categorical when its values are codes such as a drop's reason),
integer-coded columns as ``Coded`` with the engine's names, and the
derived columns (``*_s`` from ``*_ns``, a packet's ``delay_ms``).

A campaign's runs convert a dozen tables each, and making their
DataFrames first cost more than a short run's simulation. The arrow
table's schema (with pandas' metadata) follows from the description's
signature alone (``signature``), so it is kept per signature, made the
first time through pandas, and the columns are converted to it
directly after that."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

# Text columns with few distinct values (codes): categoricals.
CATEGORICAL_TEXT = {"event", "reason", "site", "kind", "var", "role"}


@dataclass(frozen=True)
class Text:
    """A column of text; ``categorical`` for codes (``CATEGORICAL_TEXT``)."""

    values: list[str]
    categorical: bool

    def categories(self) -> list[str]:
        """The sorted distinct values, as ``pd.Categorical`` orders them."""
        return sorted(set(self.values))


@dataclass(frozen=True, eq=False)
class Names:
    """Text the engine gave as ``codes`` into ``names`` (row i is
    ``names[codes[i]]``): the column ``Text`` would be, made without a
    Python string per row (a drop log can have millions)."""

    codes: np.ndarray
    names: list[str]
    categorical: bool

    @cached_property
    def categories(self) -> tuple[list[str], np.ndarray]:
        """The sorted distinct values (as ``Text.categories``) and each
        row's index among them (worked out once: both the signature and
        the column need them)."""
        present = np.flatnonzero(np.bincount(self.codes, minlength=len(self.names)))
        cats = sorted({self.names[i] for i in present})
        at = {v: i for i, v in enumerate(cats)}
        # The narrowest type pandas would keep the codes in anyway: no
        # second pass to narrow them (a drop log has millions of rows).
        lut = np.zeros(len(self.names), np.int8 if len(cats) < 128 else np.int16 if len(cats) < 32768 else np.int32)
        lut[present] = [at[self.names[i]] for i in present]
        return cats, lut[self.codes]

    def objects(self) -> np.ndarray:
        """The rows' values, as an array of str objects."""
        return np.asarray(self.names, dtype=object)[self.codes]


@dataclass(frozen=True, eq=False)
class Ints:
    """A column of counts the engine gave as floats (NaN where a flow's
    applications report none): ``values`` with ``missing`` rows, a
    pandas nullable ``Int64`` column."""

    values: np.ndarray
    missing: np.ndarray

    @classmethod
    def of(cls, a: np.ndarray, name: str = "") -> "Ints":
        missing = np.isnan(a)
        values = np.where(missing, 0, a)
        if not np.array_equal(values, np.trunc(values)):
            # A model declared a measure a count: never round it silently.
            raise ValueError(f"column {name}: declared a count (integers) but holds fractions")
        return cls(values.astype(np.int64), missing)

    def array(self) -> Any:
        import pandas as pd

        return pd.arrays.IntegerArray(self.values, self.missing)


@dataclass(frozen=True)
class Coded:
    """An integer-coded column: ``codes`` into the engine's ``categories``."""

    codes: np.ndarray
    categories: list[str]


def _numbers(name: str, v: Any) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype == np.uint64:
        if a.size and a.max() > np.iinfo(np.int64).max:
            raise OverflowError(f"column {name}: a counter above 2^63")
        a = a.view(np.int64)  # the same bits, as every value is below 2^63: no copy
    return a


def columns(name: str, cols: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """Table ``name``'s columns in order: numpy arrays, ``Text``, ``Names``
    or ``Coded``."""
    coded = meta.get("coded_columns", {}).get(name, {})
    counts = meta.get("integer_columns", {}).get(name, ())
    out: dict[str, Any] = {}
    for k, v in cols.items():
        if k in counts and not isinstance(v, (list, tuple)):
            out[k] = Ints.of(np.asarray(v, dtype=np.float64), f"{name}.{k}")
        elif isinstance(v, list):
            out[k] = Text(v, k in CATEGORICAL_TEXT)
        elif isinstance(v, tuple):
            codes, names = v
            out[k] = Names(np.asarray(codes), names, k in CATEGORICAL_TEXT)
        elif k in coded:
            # Names are unique (the engine validates them).
            out[k] = Coded(_numbers(k, v).astype("int64"), meta["codes"][coded[k]])
        else:
            out[k] = _numbers(k, v)
    for k in [c for c, v in out.items() if c.endswith("_ns") and isinstance(v, np.ndarray)]:
        out[k[:-3] + "_s"] = out[k] * 1e-9
    if name == "packets" and out:
        out["delay_ms"] = (out["recv_ns"].astype("int64") - out["sent_ns"].astype("int64")) * 1e-6
    return out


def to_frame(cols: dict[str, Any]) -> Any:
    import pandas as pd

    # copy=False: each column its own block, as made (consolidating a
    # drop log's millions of rows into 2-D blocks copied them all).
    return pd.DataFrame({k: _pandas(v) for k, v in cols.items()}, copy=False)


def to_numpy(cols: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each column as ``to_frame(cols)[name].to_numpy()`` gives it, without
    pandas: numbers as they are, text (categorical or not) as an object
    array of str, a coded column's missing values (code -1) as NaN. A
    sweep's analysis that reads a few columns of small tables spent more
    time building their DataFrames than the run took."""
    return {k: _numpy(v) for k, v in cols.items()}


def _numpy(c: Any) -> np.ndarray:
    if isinstance(c, Text):
        out = np.empty(len(c.values), dtype=object)
        out[:] = c.values
        return out
    if isinstance(c, Names):
        return c.objects()
    if isinstance(c, Coded):
        # -1 (none) picks the NaN put after the names, as pandas gives it.
        return np.asarray([*c.categories, float("nan")], dtype=object)[c.codes]
    if isinstance(c, Ints):
        import pandas as pd

        return pd.Series(c.array(), copy=False).to_numpy()
    return c


def frame_to_numpy(df: Any) -> dict[str, np.ndarray]:
    """``to_numpy``'s columns from a DataFrame (a table already built, or
    read from Parquet)."""
    return {str(k): df[k].to_numpy() for k in df.columns}


def _pandas(c: Any) -> Any:
    import pandas as pd

    if isinstance(c, Names) and not len(c.codes):
        c = Text([], c.categorical)  # no rows: the categories' type as Text's (none)
    if isinstance(c, Text):
        text = pd.Series(c.values, dtype="str")
        return pd.Categorical(text) if c.categorical else text
    if isinstance(c, Names) and c.categorical:
        cats, codes = c.categories
        # validate=False: every code indexes ``cats`` by construction.
        return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(pd.Index(cats, dtype="str")), validate=False)
    if isinstance(c, Names):
        return pd.Series(c.objects(), dtype="str")
    if isinstance(c, Coded):
        return pd.Categorical.from_codes(c.codes, categories=c.categories)
    if isinstance(c, Ints):
        return c.array()
    return c


def signature(name: str, cols: dict[str, Any]) -> tuple[Any, ...]:
    """What the arrow schema of ``to_frame(cols)`` follows from, besides
    whether the table is empty: the table, each column's name and kind,
    a categorical's number of categories (in pandas' metadata, and its
    codes' width) and a coded column's names."""
    return (name, tuple((k, _kind(v)) for k, v in cols.items()))


def _rows(cols: dict[str, Any]) -> int:
    for v in cols.values():
        return len(v.values if isinstance(v, (Text, Ints)) else v.codes if isinstance(v, (Coded, Names)) else v)
    return 0


def _kind(c: Any) -> Any:
    if isinstance(c, Text):
        return ("category", len(set(c.values))) if c.categorical else "text"
    if isinstance(c, Names):
        return ("category", len(c.categories[0])) if c.categorical else "text"
    if isinstance(c, Coded):
        return ("coded", tuple(c.categories))
    if isinstance(c, Ints):
        return "Int64"
    return c.dtype.str


def to_arrow(name: str, cols: dict[str, Any]) -> Any:
    """``pa.Table.from_pandas(to_frame(cols), preserve_index=False)``, the
    same table; through pandas only for a signature not seen before."""
    return through_kept_schema(signature(name, cols), _rows(cols) == 0, lambda: to_frame(cols),
                               lambda schema: [_arrow(v, f.type) for v, f in zip(cols.values(), schema)])


_SCHEMAS: dict[tuple[Any, ...], Any] = {}
_SCHEMAS_MAX = 512


def through_kept_schema(key: tuple[Any, ...], empty: bool, frame: Callable[[], Any],
                        arrays: Callable[[Any], list[Any]]) -> Any:
    """``pa.Table.from_pandas(frame(), preserve_index=False)`` the first
    time ``key`` (whatever the arrow schema, pandas' metadata included,
    follows from) is seen with ``empty``; after that the kept schema's
    empty table, or ``arrays(schema)``, the columns as from_pandas converts
    them, made into a table of that schema. from_pandas works out each
    column's type and pandas' metadata anew, about 30 us a column."""
    import pyarrow as pa

    schema = _SCHEMAS.get((key, empty))
    if schema is None:
        t = pa.Table.from_pandas(frame(), preserve_index=False)
        if len(_SCHEMAS) < _SCHEMAS_MAX:
            _SCHEMAS[(key, empty)] = t.schema
        return t
    if empty:
        return schema.empty_table()
    return pa.Table.from_arrays(arrays(schema), schema=schema)


def _arrow(c: Any, type_: Any) -> Any:
    """One column as from_pandas converts it (a float NaN becomes null)."""
    import pyarrow as pa

    if isinstance(c, Text) and not c.categorical:
        return pa.array(c.values, type=type_)
    if isinstance(c, Names) and not c.categorical:
        return pa.array(c.objects(), type=type_)
    if isinstance(c, Text):
        cats = c.categories()
        at = {v: i for i, v in enumerate(cats)}
        indices = pa.array([at[v] for v in c.values], type=type_.index_type)
    elif isinstance(c, Names):
        cats, codes = c.categories
        indices = pa.array(codes, type=type_.index_type)
    elif isinstance(c, Coded):
        # -1: none (no link, say), missing in pandas and null in arrow.
        cats, indices = c.categories, pa.array(c.codes, type=type_.index_type, mask=c.codes < 0)
    elif isinstance(c, Ints):
        return pa.array(c.values, type=type_, mask=c.missing)
    else:
        return pa.array(c, type=type_, from_pandas=True)
    return pa.DictionaryArray.from_arrays(indices, pa.array(cats, type=type_.value_type), ordered=type_.ordered)
