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
DataFrames first cost more than a short run's simulation; importing
pandas at all costs a ``mediasim run --out`` more than half its time.
The arrow table's schema, pandas' metadata included, follows from the
description's signature alone (``signature``): ``arrow_schema`` writes
it as pyarrow's ``from_pandas`` would (its type for each kind of column,
and pandas' metadata in pyarrow's layout, with the installed pandas'
version), without importing pandas, and the columns are converted to it
directly. Tests hold the two equal to the byte (tests/test_campaign.py,
tests/test_api.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
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
        # The type pandas keeps the codes in: no second pass to narrow
        # them (a drop log has millions of rows).
        lut = np.zeros(len(self.names), codes_dtype(len(cats)))
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
    same table, made without pandas (``arrow_schema``)."""
    import pyarrow as pa

    kinds = signature(name, cols)[1]
    schema = _SCHEMAS.get(kinds)
    if schema is None:
        schema = arrow_schema(kinds)
        if len(_SCHEMAS) < _SCHEMAS_MAX:
            _SCHEMAS[kinds] = schema
    return pa.Table.from_arrays([_arrow(v, f.type) for v, f in zip(cols.values(), schema)], schema=schema)


def codes_dtype(categories: int) -> np.dtype:
    """The type pandas keeps a categorical's codes in: the narrowest
    signed integer whose maximum exceeds the number of categories."""
    for t in (np.int8, np.int16, np.int32):
        if categories < np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


@cache
def _pandas_version() -> str:
    from importlib.metadata import version

    return version("pandas")


def arrow_schema(kinds: tuple[tuple[str, Any], ...]) -> Any:
    """The schema ``pa.Table.from_pandas(df, preserve_index=False)`` gives
    the DataFrame of columns of these kinds (``signature``): text as
    large_string (pandas' ``str`` dtype), a categorical as a dictionary of
    large_string (of null with no categories) on its codes' type, counts
    (``Int64``) as int64, numbers as their numpy type; and pandas'
    metadata as pyarrow writes it: no index, each column's logical type,
    its pandas dtype and a categorical's size."""
    import pyarrow as pa

    fields, described = [], []
    for name, kind in kinds:
        extra = None
        if kind == "text":
            type_, dtype = pa.large_string(), "str"
        elif kind == "Int64":
            type_, dtype = pa.int64(), "Int64"
        elif isinstance(kind, tuple):
            n = kind[1] if kind[0] == "category" else len(kind[1])
            codes = codes_dtype(n)
            type_ = pa.dictionary(pa.from_numpy_dtype(codes), pa.large_string() if n else pa.null(), ordered=False)
            dtype, extra = codes.name, {"num_categories": n, "ordered": False}
        else:
            numbers = np.dtype(kind)
            type_, dtype = pa.from_numpy_dtype(numbers), numbers.name
        fields.append(pa.field(name, type_))
        described.append({"name": name, "field_name": name, "pandas_type": _logical_type(type_),
                          "numpy_type": dtype, "metadata": extra})
    pandas_meta = {"index_columns": [], "column_indexes": [], "columns": described, "attributes": {},
                   "creator": {"library": "pyarrow", "version": pa.__version__},
                   "pandas_version": _pandas_version()}
    return pa.schema(fields, metadata={b"pandas": json.dumps(pandas_meta).encode()})


def _logical_type(type_: Any) -> str:
    """pyarrow's name in pandas' metadata for a column of arrow type
    ``type_`` (of the types ``arrow_schema`` gives)."""
    import pyarrow as pa

    if pa.types.is_dictionary(type_):
        return "categorical"
    if pa.types.is_large_string(type_):
        return "object"  # not in pyarrow's table of logical types
    if pa.types.is_boolean(type_):
        return "bool"
    if pa.types.is_floating(type_):
        return f"float{type_.bit_width}"
    if pa.types.is_integer(type_):
        return str(type_)
    raise TypeError(f"no logical type kept for arrow type {type_}")


# Schemas made: ``to_arrow``'s by their columns' kinds, ``through_kept_schema``'s
# by their frame's key and emptiness.
_SCHEMAS: dict[Any, Any] = {}
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
    """One column as from_pandas converts it (a float NaN becomes null),
    made from its buffers: ``pa.array`` imports pandas whatever it is
    given."""
    import pyarrow as pa

    if isinstance(c, Text) and not c.categorical:
        return _strings(c.values)
    if isinstance(c, Names) and not c.categorical:
        return pa.DictionaryArray.from_arrays(_fixed(pa.int64(), c.codes.astype(np.int64)),
                                              _strings(c.names)).dictionary_decode()
    if isinstance(c, Text):
        cats = c.categories()
        at = {v: i for i, v in enumerate(cats)}
        indices = _fixed(type_.index_type, np.array([at[v] for v in c.values], type_.index_type.to_pandas_dtype()))
    elif isinstance(c, Names):
        cats, codes = c.categories
        indices = _fixed(type_.index_type, codes.astype(type_.index_type.to_pandas_dtype(), copy=False))
    elif isinstance(c, Coded):
        # -1: none (no link, say), missing in pandas and null in arrow.
        cats = c.categories
        indices = _fixed(type_.index_type, c.codes.astype(type_.index_type.to_pandas_dtype()), valid=c.codes >= 0)
    elif isinstance(c, Ints):
        return _fixed(type_, c.values, valid=~c.missing)
    else:
        a = np.asarray(c)
        return _fixed(type_, a, valid=~np.isnan(a) if a.dtype.kind == "f" else None)
    values = _strings(cats) if cats else pa.Array.from_buffers(type_.value_type, 0, [None])
    return pa.DictionaryArray.from_arrays(indices, values, ordered=type_.ordered)


def _fixed(type_: Any, a: np.ndarray, valid: np.ndarray | None = None) -> Any:
    """An arrow array of fixed-width ``type_`` over numpy's ``a`` (a
    boolean's bits packed), null where ``valid`` is False."""
    import pyarrow as pa

    a = np.ascontiguousarray(a)
    data = pa.py_buffer(np.packbits(a, bitorder="little") if a.dtype == np.bool_ else a)
    if valid is None or valid.all():
        return pa.Array.from_buffers(type_, len(a), [None, data], null_count=0)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(type_, len(a), [bitmap, data], null_count=int(len(a) - valid.sum()))


def _strings(values: list[str]) -> Any:
    """A large_string array of ``values`` (UTF-8, as arrow keeps text)."""
    import pyarrow as pa

    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))], null_count=0)
