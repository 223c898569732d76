"""Rendering tables for reports."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def md_table(df: pd.DataFrame, digits: int = 4) -> str:
    """Markdown table; float columns get `digits` significant digits,
    integer columns (and float columns holding only whole numbers, such as
    counters) stay integers."""
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            vals = out[c].dropna()
            whole = len(vals) > 0 and bool(((vals % 1 == 0) & (vals.abs() < 1e15)).all())
            fmt = (lambda x: f"{int(x)}") if whole else (lambda x: f"{x:.{digits}g}")
            out[c] = out[c].map(lambda x, f=fmt: "" if pd.isna(x) else f(x))
    return out.to_markdown(index=False)
