"""Typed overrides of a study's parameter dataclass (``--set NAME=VALUE``)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

P = TypeVar("P")

#: The engine's default ``limits.max_flows`` and ``limits.max_nodes``: a
#: study's scenario cannot hold more flows or nodes, so a count beyond it
#: is refused before the scenario is built (a mistyped 1e300 would
#: otherwise be looped on).
MAX_ITEMS = 200_000
#: chosen: far above any study's replications (3 to 50), so that a
#: mistyped count is refused rather than run.
MAX_REPLICATIONS = 10_000


def apply_overrides(params: P, overrides: dict[str, str], study: str) -> P:
    """Returns a copy of ``params`` with NAME=VALUE strings converted to
    each field's type (tuples from comma-separated lists); raises
    ValueError naming the study, the field and the problem."""
    fields = {f.name for f in dataclasses.fields(params)}  # type: ignore[arg-type]
    out = params
    for k, v in overrides.items():
        if k not in fields:
            raise ValueError(f"{study}: unknown parameter {k!r} (known: {', '.join(sorted(fields))})")
        cur = getattr(params, k)
        try:
            val: Any
            if isinstance(cur, tuple):
                items = [x for x in str(v).strip("()[] ").split(",") if x.strip()]
                val = tuple(_whole(x) if isinstance(cur[0], int) else type(cur[0])(x) for x in items)
            elif isinstance(cur, bool):
                val = str(v).lower() in ("1", "true", "yes")
            elif isinstance(cur, int):
                val = _whole(v)
            else:
                val = type(cur)(v)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{study}: {k}={v!r} is not a valid {type(cur).__name__}") from None
        out = dataclasses.replace(out, **{k: val})  # type: ignore[type-var]
    out.check()  # type: ignore[attr-defined]
    return out


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
    replications: int

    def with_overrides(self: P, overrides: dict[str, str]) -> P:
        """Applies name=value strings, converted to each field's type."""
        return apply_overrides(self, overrides, self.study)  # type: ignore[attr-defined]

    def check(self) -> None:
        problems = []
        if not 1 <= self.replications <= MAX_REPLICATIONS:
            problems.append(f"replications must be from 1 to {MAX_REPLICATIONS:,} (got {self.replications})")
        seed = getattr(self, "seed", 0)
        if not 0 <= seed < 2 ** 64:
            problems.append(f"seed must be from 0 to 2**64 - 1 (got {seed})")
        for name in self.count_fields:
            v = getattr(self, name)
            if any(x > MAX_ITEMS for x in (v if isinstance(v, tuple) else (v,))):
                problems.append(f"{name} must be at most {MAX_ITEMS:,} (the engine's limit on flows and nodes)")
        if problems:  # check_more may build on the counts
            raise ValueError(f"{self.study}: " + "; ".join(problems))
        problems += self.check_more()
        if problems:
            raise ValueError(f"{self.study}: " + "; ".join(problems))

    def check_more(self) -> list[str]:
        return []


def parameters_section(p: Any) -> list[str]:
    """The report's closing section: every parameter and its value."""
    import pandas as pd

    from ..reporting.tables import md_table

    table = pd.DataFrame([{"parameter": k, "value": str(v)} for k, v in dataclasses.asdict(p).items()])
    return ["## Parameters", "", md_table(table), ""]
