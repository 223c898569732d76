"""Scenarios: load them from JSON, TOML or YAML files, or build them in code.

A scenario is plain data (a dict) whose schema lives in the engine
(``mediasim schema`` prints it); this module only reads files, offers a
builder, and applies overrides. It never re-implements the engine's rules:
validation happens in the engine and names the offending field.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from . import _engine, plain
from ._budget import made
from .errors import ScenarioError, likely_meant

if TYPE_CHECKING:
    from pathlib import Path


class Scenario:
    """A scenario as plain data, with a small builder API.

    >>> sc = Scenario("two-hosts", duration_s=10)
    >>> sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=10)
    >>> sc.flow("f", "cbr", src="a", dst="b", payload_bytes=160, interval_ms=20)
    """

    def __init__(self, name: str = "", duration_s: float = 10.0, **fields: Any):
        made("scenarios")
        self.data: dict[str, Any] = {"name": name, "duration_s": duration_s, "nodes": [], "links": []}
        self.data.update(fields)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        if not isinstance(data, dict):
            raise TypeError(f"a scenario is a table of fields (a dict), not {type(data).__name__}")
        made("scenarios")
        sc = cls.__new__(cls)
        sc.data = plain.copy_of(data)
        return sc

    def to_dict(self) -> dict[str, Any]:
        return plain.copy_of(self.data)

    def to_json(self) -> str:
        # Only plain data within the limits goes to the engine (a date or a
        # set from Python code is named here, not a TypeError from json).
        plain.check(self.data, self.name)
        # Link traces given by file or name go to the engine as their
        # opportunities (mediasim.traces, imported only when a link may
        # have one: `mediasim run` stays quick to start).
        data = self.data
        problems: list[tuple[str, str]] = []
        left_empty: set[str] = set()
        if _may_have_traces(data):
            from . import traces

            data, problems, left_empty = traces.read_in(data)
        # JSON has no NaN/Infinity: send them as strings so that the engine
        # rejects them with the field's path ("must be a finite number").
        text = json.dumps(_finite_or_str(data), allow_nan=False)
        if problems:
            raise _with_the_engines_checks(text, data, problems, left_empty)
        return text

    def __repr__(self) -> str:
        d = self.data
        count = {k: len(d.get(k) or []) for k in ("nodes", "links", "flows", "rtp_sessions", "rmtp_sessions")}
        parts = [f"{v} {k.replace('_', ' ')}" for k, v in count.items() if v or k in ("nodes", "links", "flows")]
        return f"Scenario({self.name!r}, {d.get('duration_s')} s, {', '.join(parts)})"

    @property
    def name(self) -> str:
        return self.data.get("name") or "scenario"

    # -- builder ---------------------------------------------------------
    def node(self, name: str, **fields: Any) -> "Scenario":
        self.data.setdefault("nodes", []).append({"name": name, **fields})
        return self

    def link(self, a: str, b: str, rate_bps: float | list | dict | None, delay_ms: float | list | dict,
             **fields: Any) -> "Scenario":
        """Adds a full-duplex link. ``rate_bps`` and ``delay_ms`` are numbers
        or steps ``[[t_s, value], ...]`` (or ``{"steps": [...], "repeat_s": P}``);
        ``rate_bps=None`` with ``trace={"file": ...}`` or ``{"builtin": ...}``
        for a trace-driven link; ``outages``, ``jitter``, ``queue``,
        ``loss``, ``ab``/``ba`` as keywords (docs/models/links.md)."""
        link = {"a": a, "b": b, "delay_ms": delay_ms, **fields}
        if rate_bps is not None:
            link["rate_bps"] = rate_bps
        self.data.setdefault("links", []).append(link)
        return self

    def group(self, name: str, members: list[str]) -> "Scenario":
        self.data.setdefault("groups", []).append({"name": name, "members": list(members)})
        return self

    def flow(self, name: str, type: str, src: str, **fields: Any) -> "Scenario":
        self.data.setdefault("flows", []).append({"name": name, "type": type, "src": src, **fields})
        return self

    def rtp_session(self, name: str, members: list[dict[str, Any]], session_bw_bps: float,
                    media_payload_bytes: int, **fields: Any) -> "Scenario":
        """Adds an RTP/RTCP session (docs/models/rtp.md): ``members`` as
        ``[{"node": name, "media": bool, "profile": "avpf"|"avp"}]``; further fields
        (``transport``, ``avpf``, ``newpred``, ``start_s``, ...) as keywords."""
        self.data.setdefault("rtp_sessions", []).append(
            {"name": name, "members": list(members), "session_bw_bps": session_bw_bps,
             "media_payload_bytes": media_payload_bytes, **fields})
        return self

    def rmtp_session(self, name: str, sender: str, subgroups: list[dict[str, Any]], **fields: Any) -> "Scenario":
        """Adds a reliable multicast session (docs/models/rmtp.md):
        ``subgroups`` as ``[{"dr": node, "receivers": [...], "parent": dr?}]``."""
        self.data.setdefault("rmtp_sessions", []).append(
            {"name": name, "sender": sender, "subgroups": subgroups, **fields})
        return self

    def measure(self, **fields: Any) -> "Scenario":
        self.data.setdefault("measure", {}).update(fields)
        return self

    # -- checks and overrides ---------------------------------------------
    def validate(self) -> "Scenario":
        """Raises ScenarioError naming every invalid field; issues an
        ``ImplausibleValue`` warning for each value that is valid but
        probably a unit slip."""
        from .runner import warn_implausible

        text = self.to_json()
        _engine.validate(text)
        warn_implausible(text, stacklevel=3)
        return self

    def set(self, path: str, value: Any) -> "Scenario":
        """Sets one field by path, e.g. ``set("links[0].rate_bps", 2e6)`` or
        ``set("flows[name=voice].start_s", 3)`` (select list items by name)."""
        if not isinstance(path, str):
            raise TypeError(f"a field path is text, such as 'links[0].rate_bps' (got {path!r})")
        keys = _parse_path(path)
        cur: Any = self.data
        for i, k in enumerate(keys[:-1]):
            cur = _step(cur, k, path, create=not isinstance(keys[i + 1], int))
        last = keys[-1]
        if isinstance(last, int):
            if not isinstance(cur, list) or last >= len(cur):  # indices are never negative (_parse_path)
                raise ScenarioError.at(path, _no_item(cur, last))
            cur[last] = value
        elif isinstance(last, tuple):
            raise ScenarioError.at(path, "cannot replace a selected item")
        else:
            if not isinstance(cur, dict):
                raise ScenarioError.at(path, "not a table")
            cur[last] = value
        return self

    def get(self, path: str) -> Any:
        """The value of one field by path, as `set` takes it (``get("links[0].rate_bps")``,
        ``get("flows[name=voice].start_s")``); a ScenarioError names the
        part of the path that leads nowhere."""
        return _walk(self.data, path)[0]

    def indexed_path(self, path: str) -> str:
        """``path`` with each item selected by name written as its index
        (``links[name=bottleneck].rate_bps`` -> ``links[3].rate_bps``), the
        form in which warnings and the engine's errors name a field; a
        ScenarioError if the path leads nowhere."""
        return _walk(self.data, path)[1]

    def with_overrides(self, overrides: dict[str, Any]) -> "Scenario":
        """A copy with each ``path: value`` of ``overrides`` set (as `set`
        does); one ScenarioError names every path that leads nowhere."""
        sc = Scenario.from_dict(self.data)
        errors: list[tuple[str, str]] = []
        for k, v in overrides.items():
            try:
                sc.set(k, v)
            except ScenarioError as e:
                errors += e.errors
        if errors:
            raise ScenarioError("; ".join(f"{p}: {m}" for p, m in errors), errors)
        return sc


def _with_the_engines_checks(text: str, data: dict[str, Any], problems: list[tuple[str, str]],
                             left_empty: set[str]) -> ScenarioError:
    """Trace files that cannot be read, said with the rest of what is wrong
    in the scenario (``data``, those traces left empty, as ``text``), in the
    order the fields are written: every problem at once, as the engine says
    its own."""
    try:
        _engine.validate(text)
        found: list[tuple[str, str]] = []
    except ScenarioError as e:
        # The traces' fields left empty are not the user's to fill.
        found = [(p, m) for p, m in e.errors if p not in left_empty]
    for path, msg in problems:
        place = _document_place(data, path)
        # Before the first error written after it, or the one where the
        # engine's checks stopped (which stays last).
        at = next((i for i, (p, m) in enumerate(found) if STOPPED in m or _document_place(data, p) > place),
                  len(found))
        found.insert(at, (path, msg))
    return ScenarioError("invalid scenario", found)


#: How the engine's error ends where its checks stopped early.
STOPPED = "(the checks stop here"


def _document_place(data: Any, path: str) -> tuple[int, ...]:
    """Where the field at ``path`` is written in ``data`` (whose tables keep
    the file's key order), as positions step by step: a field that is not
    there sorts after what its table holds, as the engine orders a field
    left out."""
    try:
        keys = _parse_path(path)
    except ScenarioError:
        return ()
    place: list[int] = []
    cur = data
    for k in keys:
        if isinstance(k, int) and isinstance(cur, list):
            place.append(min(k, len(cur)))
            cur = cur[k] if k < len(cur) else None
        elif isinstance(k, str) and isinstance(cur, dict):
            names = list(cur)
            place.append(names.index(k) if k in cur else len(names))
            cur = cur.get(k)
        else:
            break
    return tuple(place)


def _finite_or_str(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _finite_or_str(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite_or_str(v) for v in x]
    return x


# ASCII digits only: re's \d takes any script's.
_TOKEN = re.compile(r"([^.\[\]]+)|\[([0-9]+)\]|\[name=([^\]]+)\]")

#: An index of more digits than this is no list's (and int() refuses
#: thousands of digits).
_MAX_INDEX_DIGITS = 18


def _parse_path(path: str) -> list[Any]:
    keys: list[Any] = []
    pos = 0
    while pos < len(path):
        if path[pos] == ".":
            pos += 1
            continue
        m = _TOKEN.match(path, pos)
        if not m:
            raise ScenarioError.at(path, "cannot parse this path")
        if m.group(1) is not None:
            keys.append(m.group(1))
        elif m.group(2) is not None:
            if len(m.group(2).lstrip("0")) > _MAX_INDEX_DIGITS:
                shown = path[:60] + "..."
                raise ScenarioError.at(shown, f"an index of more than {_MAX_INDEX_DIGITS} digits")
            keys.append(int(m.group(2)))
        else:
            keys.append(("name", m.group(3)))
        pos = m.end()
    if not keys:
        raise ScenarioError.at(path, "empty path")
    return keys


#: Most names an override's error lists (a scenario may have thousands of flows).
_MAX_LISTED = 10


def _listing(names: list[str]) -> str:
    """``names`` quoted and joined, the first ``_MAX_LISTED`` of them."""
    shown = ", ".join(repr(n) for n in names[:_MAX_LISTED])
    return shown + (f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else "")


def _no_item(cur: Any, key: int) -> str:
    """Why list item ``key`` of ``cur`` is not there: not a list, or the
    items it has."""
    if not isinstance(cur, list):
        return f"no list item {key} (not a list)"
    if not cur:
        return f"no list item {key} (the list is empty)"
    return f"no list item {key} (the list has {len(cur)} item{'s' if len(cur) > 1 else ''}: 0 to {len(cur) - 1})"


def _no_field(cur: dict, key: str) -> str:
    """A field absent from a table: the fields it has, led by the one
    likely meant."""
    have = [k for k, v in cur.items() if v is not None]
    close = likely_meant(key, have)
    meant = f"did you mean {close!r}? " if close else ""
    return f"no field {key!r} ({meant}the table has {_listing(have) or 'no fields'})"


def _walk(data: Any, path: str) -> tuple[Any, str]:
    """The value at ``path`` in ``data`` and the path with indices for names."""
    if not isinstance(path, str):
        raise TypeError(f"a field path is text, such as 'links[0].rate_bps' (got {path!r})")
    cur, parts = data, list[str]()
    for k in _parse_path(path):
        item = cur
        cur = _step(cur, k, path, create=False)
        if isinstance(k, tuple):
            k = next(i for i, x in enumerate(item) if x is cur)
        parts.append(f"[{k}]" if isinstance(k, int) else f".{k}" if parts else k)
    return cur, "".join(parts)


def _step(cur: Any, key: Any, path: str, create: bool) -> Any:
    if isinstance(key, int):
        if not isinstance(cur, list) or key >= len(cur):
            raise ScenarioError.at(path, _no_item(cur, key))
        return cur[key]
    if isinstance(key, tuple):
        if isinstance(cur, list):
            for item in cur:
                if isinstance(item, dict) and item.get("name") == key[1]:
                    return item
            names = [str(i["name"]) for i in cur if isinstance(i, dict) and "name" in i]
            raise ScenarioError.at(path, f"no item named {key[1]!r} (the items are named {_listing(names)})"
                                   if names else f"no item named {key[1]!r} (no item has a name)")
        raise ScenarioError.at(path, f"no item named {key[1]!r} (not a list)")
    if not isinstance(cur, dict):
        raise ScenarioError.at(path, "not a table")
    if key not in cur or cur[key] is None:
        if not create:
            raise ScenarioError.at(path, _no_field(cur, key))
        cur[key] = {}
    return cur[key]


def split_override(text: str) -> tuple[str, str]:
    """Splits ``PATH=VALUE`` at the first ``=`` outside brackets, so that
    ``flows[name=voice].start_s=3`` works."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "=" and depth == 0:
            return text[:i].strip(), text[i + 1 :].strip()
    raise ScenarioError.at(text, "expected PATH=VALUE")


def parse_value(text: str, field: str | None = None) -> Any:
    """Parses a command-line override value: JSON if it parses, else a
    string; JSON nested deeper than a scenario may be, or a number Python
    will not read, is a ScenarioError at ``field`` (at the value's start
    if no field is given)."""
    # Only a value of thousands of characters gets an error (the JSON
    # parser's recursion limit, Python's limit on a number's digits).
    shown = field or text[:40] + "..."
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
    except RecursionError:
        msg = f"nested too deeply (at most {plain.MAX_DEPTH} levels)"
        raise ScenarioError.at(shown, msg) from None
    except ValueError as e:  # a whole number of thousands of digits
        msg = plain.parse_problem(e)
        raise ScenarioError.at(shown, msg) from None


def load_scenario(path: str | Path) -> Scenario:
    """Loads a scenario from a .json, .toml, .yaml or .yml file; every
    problem with the file is a ScenarioError naming it (mediasim.plain)."""
    data = plain.read_file(path)
    if _may_have_traces(data):
        from pathlib import Path

        from . import traces

        # A trace file named in the scenario is found beside it.
        traces.anchor_files(data, Path(path).parent)
    return Scenario.from_dict(data)


def _may_have_traces(data: dict[str, Any]) -> bool:
    """Whether a link or a direction of one gives a trace, or an RTP member
    a frame trace (cheap: no look inside)."""
    links = data.get("links")
    sessions = data.get("rtp_sessions")
    if isinstance(sessions, list) and any(
            isinstance(m, dict) and isinstance(m.get("source"), dict) and "file" in m["source"]
            for s in sessions if isinstance(s, dict) and isinstance(s.get("members"), list) for m in s["members"]):
        return True
    if not isinstance(links, list):
        return False
    dirs = [d for link in links if isinstance(link, dict) for d in (link, link.get("ab"), link.get("ba"))]
    return any(isinstance(d, dict) and "trace" in d for d in dirs)


def as_scenario(x: "Scenario | dict | str | Path") -> Scenario:
    import os

    if isinstance(x, Scenario):
        return x
    if isinstance(x, dict):
        return Scenario.from_dict(x)
    if not isinstance(x, (str, os.PathLike)):
        raise TypeError(f"a scenario is a Scenario, a dict or a file's path (got {type(x).__name__})")
    return load_scenario(x)
