"""Typed overrides of a study's parameter dataclass (``--set NAME=VALUE``)."""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any, ClassVar, TypeVar

from ..errors import likely_meant

P = TypeVar("P")

#: The engine's default ``limits.max_flows`` and ``limits.max_nodes``: a
#: study's scenario cannot hold more flows or nodes, so a count beyond it
#: is refused before the scenario is built (a mistyped 1e300 would
#: otherwise be looped on).
MAX_ITEMS = 200_000
#: chosen: far above any study's replications (3 to 50), so that a
#: mistyped count is refused rather than run.
MAX_REPLICATIONS = 10_000
#: chosen: the most values a list parameter holds, far above any study's
#: default (at most 11). Each value is one more configuration, or one
#: more analysis of every run: 1,000 flow counts made the IW10 study's
#: dry run take 83 s and 2 GB, 10,000 did not end.
MAX_VALUES = 100


class ParamsError(ValueError):
    """Study parameters that cannot be taken: ``problems`` lists each (an
    unknown name, a value its field cannot take, a check that fails), and
    the message says them all after the study's name, separated by ``;``."""

    def __init__(self, study: str, problems: list[str]):
        super().__init__(f"{study}: " + "; ".join(problems))
        self.problems = problems


def apply_overrides(params: P, overrides: dict[str, str], study: str) -> P:
    """Returns a copy of ``params`` with NAME=VALUE strings converted to
    each field's type: true/false (also yes/no, on/off, 1/0), a whole
    number, a number, text, a comma-separated list of one of these (in
    brackets or not), or groups of numbers separated by ``;`` for a field
    that holds tuples (``0.6,1,0.05;0.2,0.6,0.2``); raises ParamsError
    naming the study and, for every name or value it cannot take, the
    field and what it takes."""
    out, problems = read_overrides(params, overrides)
    if problems:  # the checks would judge values not given
        raise ParamsError(study, problems)
    out.check()  # type: ignore[attr-defined]
    return out


def read_overrides(params: P, overrides: dict[str, str]) -> tuple[P, list[str]]:
    """``params`` with every NAME=VALUE that reads applied, unchecked, and
    a problem for each name or value that does not (as ``apply_overrides``
    says it)."""
    fields = {f.name for f in dataclasses.fields(params)}  # type: ignore[arg-type]
    out = params
    problems = []
    for k, v in overrides.items():
        if k not in fields:
            close = likely_meant(k, sorted(fields))
            meant = f"; did you mean {close!r}?" if close else ""
            problems.append(f"unknown parameter {k!r}{meant} (known: {', '.join(sorted(fields))})")
            continue
        cur = getattr(params, k)
        try:
            val = _convert(str(v), cur)
        except (TypeError, ValueError, OverflowError):
            problems.append(f"{k}={v!r}: expected {_takes(cur)}")
            continue
        out = dataclasses.replace(out, **{k: val})  # type: ignore[type-var]
    return out, problems


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _convert(text: str, like: Any) -> Any:
    """``text`` as a value of ``like``'s type (its items' for a tuple)."""
    if isinstance(like, tuple):
        items = [x.strip() for x in text.strip("()[] ").split(";" if _nested(like) else ",") if x.strip()]
        return tuple(_convert(x, like[0] if like else "") for x in items)
    if isinstance(like, bool):
        word = text.strip().lower()
        if word not in _TRUE + _FALSE:  # a typo is not quietly false
            raise ValueError(text)
        return word in _TRUE
    if isinstance(like, int):
        return _whole(text)
    if isinstance(like, float):
        return float(text)
    return type(like)(text.strip())


def _nested(like: tuple) -> bool:
    return bool(like) and isinstance(like[0], tuple)


def _takes(like: Any) -> str:
    """What a field of ``like``'s type takes, in words, with an example
    from its value."""
    if isinstance(like, tuple):
        if _nested(like):
            groups = ";".join(",".join(f"{x:g}" for x in g) for g in like[:2])
            return f"groups of numbers separated by ';' (e.g. {groups})"
        kind = _takes(like[0] if like else "").split(" (")[0]
        return f"a comma-separated list, each {kind} (e.g. {','.join(str(x) for x in like[:3])})"
    if isinstance(like, bool):
        return "true or false"
    if isinstance(like, int):
        return "a whole number"
    if isinstance(like, float):
        return "a number"
    return "text"


def _whole(text: Any) -> int:
    """A whole number, exactly: as written ("18446744073709551615"), or a
    float that is one ("1e3"); a fraction ("2.7") or an infinity is a
    ValueError, where int(float(...)) cut the one and overflowed on the
    other, and rounded 20-digit seeds to other seeds."""
    t = str(text).strip()
    try:
        return int(t)
    except ValueError:
        x = float(t)
        if not x.is_integer():  # also nan and inf
            raise ValueError(f"{t!r} is not a whole number") from None
        return int(x)


class StudyParams:
    """What every study's ``Params`` dataclass shares: ``--set`` overrides
    and the replication count check. A subclass names its study in
    ``study`` and adds its own checks in ``check_more``."""

    study: ClassVar[str]
    #: Fields that count the flows or nodes the study's scenarios create.
    count_fields: ClassVar[tuple[str, ...]] = ()
    #: Fields that hold probabilities or fractions: from 0 to 1.
    fractions: ClassVar[tuple[str, ...]] = ()
    #: Fields that are above 0 (a size, a timer, a count the scenario
    #: cannot take at 0), besides the rates, which all are.
    positive: ClassVar[tuple[str, ...]] = ()
    #: List fields that may be empty (a part of the study left out); any
    #: other list holds at least one value.
    may_be_empty: ClassVar[tuple[str, ...]] = ()
    replications: int

    def with_overrides(self: P, overrides: dict[str, str]) -> P:
        """Applies name=value strings, converted to each field's type."""
        return apply_overrides(self, overrides, self.study)  # type: ignore[attr-defined]

    def check(self) -> None:
        named: dict[str, str] = {}  # field: its problem
        if not 1 <= self.replications <= MAX_REPLICATIONS:
            named["replications"] = f"must be from 1 to {MAX_REPLICATIONS:,} (got {self.replications})"
        seed = getattr(self, "seed", 0)
        if not 0 <= seed < 2 ** 64:
            named["seed"] = f"must be from 0 to 2**64 - 1 (got {seed})"
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, tuple) and len(v) > MAX_VALUES:
                named[f.name] = f"must hold at most {MAX_VALUES} values (got {len(v):,})"
        for name in self.count_fields:
            v = getattr(self, name)
            if name not in named and any(x > MAX_ITEMS for x in (v if isinstance(v, tuple) else (v,))):
                named[name] = f"must be at most {MAX_ITEMS:,} (the engine's limit on flows and nodes)"
        problems = [f"{k} {m}" for k, m in named.items()] + self._value_problems(named=set(named))
        if problems:  # check_more may build on the counts
            raise ParamsError(self.study, problems)
        problems = self.check_more()
        if problems:
            raise ParamsError(self.study, problems)

    def check_more(self) -> list[str]:
        return []

    def _value_problems(self, named: set[str]) -> list[str]:
        """Every list holds a value (but those in ``may_be_empty``) and a
        pair or a group its length; every number is finite and at least 0
        (no study has a parameter below 0), a whole number below 2**64 (the
        engine's widest integers), a rate (a name ending in ``_bps``) at
        least 1 bit/s (the engine's least link rate), a field in
        ``positive`` above 0, a fraction at most 1. Checked here,
        before any scenario is made from them, so that a campaign does not
        run its first points and fail at the one a value reaches. Fields in
        ``named`` have a problem said already."""
        problems = []
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.name in named:
                continue
            value = getattr(self, f.name)
            if value == () and f.name not in self.may_be_empty:
                problems.append(f"{f.name} must hold at least one value")
            elif wrong := _length_problem(value, hints[f.name]):
                problems.append(f"{f.name} {wrong}")
            values = _numbers(value)
            bad: float | None  # an int is one too
            if (bad := next((x for x in values if isinstance(x, int) and abs(x) >= 2 ** 64), None)) is not None:
                problems.append(f"{f.name} must be below 2**64 (got a number of {len(str(abs(bad)))} digits)")
            elif (bad := next((x for x in values if isinstance(x, float) and not math.isfinite(x)), None)) is not None:
                problems.append(f"{f.name} must be a finite number (got {bad})")
            elif f.name.endswith("_bps"):
                if (bad := next((x for x in values if x < 1), None)) is not None:
                    problems.append(f"{f.name} must be at least 1 bit/s (got {bad:g})")
            elif (bad := next((x for x in values if x < 0), None)) is not None:
                problems.append(f"{f.name} must be at least 0 (got {bad:g})")
            elif f.name in self.positive and 0 in values:
                problems.append(f"{f.name} must be above 0 (got 0)")
            elif f.name in self.fractions and (bad := next((x for x in values if x > 1), None)) is not None:
                problems.append(f"{f.name} must be from 0 to 1 (got {bad:g})")
        return problems


def _length_problem(value: Any, hint: Any) -> str | None:
    """What is wrong with the length of ``value`` (or of its groups) for a
    field typed ``hint``: ``tuple[float, float]`` holds two values,
    ``tuple[tuple[float, float, float], ...]`` groups of three."""
    if typing.get_origin(hint) is not tuple or not isinstance(value, tuple):
        return None
    args = typing.get_args(hint)
    if len(args) == 2 and args[1] is Ellipsis:
        if typing.get_origin(args[0]) is tuple:
            n = len(typing.get_args(args[0]))
            if bad := next((g for g in value if len(g) != n), None):
                return f"must be groups of {n} values (got one of {len(bad)})"
        return None
    return None if len(value) == len(args) else f"must hold {len(args)} values (got {len(value)})"


def _numbers(value: Any) -> list[float]:
    """The numbers in a field's value (a number, or tuples of them); not
    true/false."""
    if isinstance(value, tuple):
        return [x for v in value for x in _numbers(v)]
    return [value] if isinstance(value, int | float) and not isinstance(value, bool) else []


def parameters_section(p: Any) -> list[str]:
    """The report's closing section: every parameter and its value."""
    import pandas as pd

    from ..reporting.tables import md_table

    table = pd.DataFrame([{"parameter": k, "value": str(v)} for k, v in dataclasses.asdict(p).items()])
    return ["## Parameters", "", md_table(table), ""]
