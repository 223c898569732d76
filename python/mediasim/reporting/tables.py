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


def ci_table(t: "pd.DataFrame", keys: list[str], metrics: list[str],
             scale: dict[str, float] | None = None) -> "pd.DataFrame":
    """A summary (``stats.summarize``'s columns) with each metric as
    'mean ± half-width' of its interval, scaled (e.g. ratios in %)."""
    import numpy as np

    scale = scale or {}
    out = t[keys + ["n"]].copy()
    for m in metrics:
        k = scale.get(m, 1.0)
        half = (t[f"{m}_ci_high"] - t[f"{m}_ci_low"]) / 2 * k
        out[m] = [f"{a:.3g} ± {h:.2g}" if np.isfinite(a) else "-" for a, h in zip(t[f"{m}_mean"] * k, half)]
    return out
