"""Markdown tables from plain columns (lists), without pandas: the same
text as ``tables.md_table`` (pandas' ``to_markdown``, i.e. tabulate's
"pipe" format) gives for the same data, so that ``mediasim run`` can print
its tables without importing pandas (about 0.3 s and 90 MiB), numpy or
tabulate. ``tests/test_plain_table.py`` holds it to md_table's text.

Rules, as md_table and tabulate apply them: a float column holding only
whole numbers below 1e15 prints as integers, other floats with ``digits``
significant digits and then as Python's ``g`` format of that; NaN prints
empty; numeric columns align right (floats on their decimal point), text
left; each column is at least its header plus two wide.
"""

from __future__ import annotations

import math
from typing import Any


def _float_cells(vals: list[float], digits: int) -> list[str]:
    finite = [v for v in vals if not math.isnan(v)]
    whole = bool(finite) and all(v % 1 == 0 and abs(v) < 1e15 for v in finite)
    if whole:
        return ["" if math.isnan(v) else f"{int(v)}" for v in vals]
    return ["" if math.isnan(v) else f"{v:.{digits}g}" for v in vals]


def _kind(cell: str) -> int:
    """tabulate's type of a cell, in its order of generality: 0 empty,
    1 bool, 2 int, 3 float, 4 text."""
    if cell == "":
        return 0
    if cell in ("True", "False"):
        return 1
    try:
        int(cell)
        return 2
    except ValueError:
        pass
    try:
        x = float(cell)
    except ValueError:
        return 4
    if math.isinf(x) or math.isnan(x):
        return 3 if cell.lower() in ("inf", "-inf", "nan") else 4
    return 3


def _after_point(cell: str, kind: int) -> int:
    if kind != 3:
        return -1
    pos = cell.rfind(".")
    pos = cell.lower().rfind("e") if pos < 0 else pos
    return len(cell) - pos - 1 if pos >= 0 else -1


def _column(header: str, cells: list[str]) -> tuple[list[str], str, str]:
    """The column's cells and header padded to its width, and its
    separator segment."""
    kind = max((_kind(c) for c in cells), default=1)
    if kind == 3:  # tabulate reformats the numbers of a float column with "g"
        cells = [format(float(c), "g") if _kind(c) in (2, 3) else c for c in cells]
        points = [_after_point(c, _kind(c)) for c in cells]
        most = max(points)
        cells = [c + " " * (most - p) for c, p in zip(cells, points)]
    width = max([len(header) + 2, *(len(c) for c in cells)])
    if kind in (2, 3):
        return [c.rjust(width) for c in cells], header.rjust(width), "-" * (width + 1) + ":"
    return [c.ljust(width) for c in cells], header.ljust(width), ":" + "-" * (width + 1)


def plain_table(columns: dict[str, list[Any]], digits: int = 4) -> str:
    """``columns`` (name -> values: floats, ints, bools or text) as the
    Markdown table md_table prints for the same DataFrame."""
    names = list(columns)
    if not names:
        return ""  # as md_table (tabulate) prints a frame without columns
    texts = []
    for name in names:
        vals = columns[name]
        if vals and all(isinstance(v, float) for v in vals):
            texts.append(_float_cells(vals, digits))
        else:
            texts.append(["" if v is None else str(v) for v in vals])
    cols = [_column(n, t) for n, t in zip(names, texts)]
    rows = len(texts[0])
    # Without rows, tabulate marks no alignment.
    rules = [c[2] if rows else "-" * len(c[2]) for c in cols]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "|".join(rules) + "|"]
    lines += ["| " + " | ".join(c[0][i] for c in cols) + " |" for i in range(rows)]
    return "\n".join(lines)
