"""The pandas-free table printer (``mediasim run``) against md_table
(pandas and tabulate), on random columns with the awkward values: NaN,
infinities, whole floats, huge and tiny floats, negative numbers, text that
looks like a number, empty tables. (No booleans: engine columns are
numbers or text.)"""

import math
import random

import pandas as pd
import pytest

from mediasim.reporting.plain_table import plain_table
from mediasim.reporting.tables import md_table

FLOATS = [0.0, 1.0, -2.0, 0.1234567, 12.5, 123456.7, 1e-7, 3e15, -0.5, math.nan, math.inf, 2.0**60, 99.99999]
TEXT = ["voice", "bulk/ack", "1", "2.5", "n1->n2", "", "True", "False", "x y"]


def column(rng, kind, n):
    if kind == "float":
        return [rng.choice(FLOATS) * rng.choice([1, 1, 3, 1e-3]) for _ in range(n)]
    if kind == "whole":
        return [float(rng.randrange(-5, 10**6)) for _ in range(n)]
    if kind == "int":
        return [rng.randrange(0, 10**12) for _ in range(n)]
    return [rng.choice(TEXT) for _ in range(n)]


@pytest.mark.parametrize("cols", [
    {"x": [1e15, 2.0]},  # the whole-number rule stops just below 1e15
    {"x": [-math.inf, 1.5]}, {"x": ["nan", "1.5"]}, {"x": ["Infinity", "1.5"]},  # numbers in words, or text
    {"x": [1000000, 1.5]},  # an int among floats is reformatted with the column
    {},
], ids=["1e15", "-inf", "nan-text", "Infinity-text", "int-among-floats", "no-columns"])
def test_plain_table_prints_what_md_table_prints_at_the_edges(cols):
    assert plain_table(cols) == md_table(pd.DataFrame(cols)), cols


@pytest.mark.parametrize("seed", range(300))
def test_plain_table_prints_what_md_table_prints(seed):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 5])
    cols = {f"c{i}_{k}": column(rng, k, n)
            for i, k in enumerate(rng.choices(["float", "whole", "int", "text"], k=rng.randint(1, 6)))}
    # (an empty column's dtype in pandas is object: give it the engine's)
    frame = pd.DataFrame({k: pd.Series(v, dtype="float64" if ("float" in k or "whole" in k) and not v else None)
                          for k, v in cols.items()})
    assert plain_table(cols) == md_table(frame), cols


def test_a_run_summary_prints_the_same_either_way(examples):
    import mediasim

    res = mediasim.run(examples / "tcp_web_and_voice.toml", seed=1)
    for df in (res.summary(), res.tcp):
        assert plain_table({c: df[c].tolist() for c in df.columns}) == md_table(df, 4)
