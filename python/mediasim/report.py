"""Rendering tables for reports."""

from __future__ import annotations

import pandas as pd


def md_table(df: pd.DataFrame, digits: int = 4) -> str:
    """Markdown table; float columns get `digits` significant digits,
    integer columns stay integers."""
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].map(lambda x: "" if pd.isna(x) else f"{x:.{digits}g}")
    return out.to_markdown(index=False)
