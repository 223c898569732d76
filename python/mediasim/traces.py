"""Delivery-opportunity traces for trace-driven links, in Mahimahi's
``mm-link`` format: one line per opportunity, a whole number of
milliseconds from the start, each opportunity worth 1504 bytes
(docs/models/links.md).

- ``read(path)`` / ``write(path, ms)`` read and write trace files.
- ``constant(rate_bps, ...)`` and ``markov(...)`` generate traces; the
  named ``BUILTIN`` traces are made by them with fixed parameters and
  seeds (``mediasim trace list``), so nothing generated is stored.
- ``resolve(scenario_dict)`` fills ``opportunities_ms`` of every link
  trace given by ``file`` or ``builtin``: the runner does it before a run,
  and run keys are computed from the result, so that a cached run stands
  for the trace's contents, not its name.

The generator draws only ``random.Random(seed).random()`` values and
compares them (no logarithms): a trace is the same on every platform and
Python version.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import plain
from .errors import ScenarioError

#: Bytes one Mahimahi opportunity carries (its MTU-sized PACKET_SIZE).
OPPORTUNITY_BYTES = 1504

#: The latest time a trace may hold, in ms: the engine's longest run
#: (1e8 s, `MAX_DURATION_S`), which refuses a longer trace too.
MAX_TRACE_MS = 10 ** 11

__all__ = ["BUILTIN", "OPPORTUNITY_BYTES", "Builtin", "builtin", "constant", "markov", "mean_rate_bps", "read",
           "resolve", "write"]


def whole_number(word: str, max_digits: int = 18) -> int | None:
    """``word`` as a whole number written in ASCII digits, at most
    ``max_digits`` of them (18 fit any 64-bit field); None otherwise.
    (``str.isdigit`` takes other scripts' digits and superscripts, which
    ``int`` then refuses, and ``int`` refuses thousands of digits.)"""
    if word.isascii() and word.isdigit() and len(word.lstrip("0")) <= max_digits:
        return int(word)
    return None


def _read_text(path: str | Path, field: str, what: str) -> str:
    """The text of the file at ``path``; a missing or unreadable file is a
    ScenarioError naming ``field``."""
    from .plain import not_utf8, read_bytes

    try:
        # Line ends as text mode reads them (\r\n and \r are \n).
        return read_bytes(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        raise ScenarioError.at(field, f"no such {what}: {path}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError.at(field, f"the {what} {path} is {not_utf8(e)}") from None
    except OSError as e:
        raise ScenarioError.at(field, f"cannot read the {what} {path}: {e.strerror or e}") from None


def read(path: str | Path, field: str = "trace.file") -> list[int]:
    """Reads a Mahimahi trace; every problem is a ScenarioError naming
    ``field`` and the line: a missing file, an empty trace, a line that is
    not a whole number of ms, times that go back, a trace of zero length."""
    text = _read_text(path, field, "trace file")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    ms: list[int] = []
    for i, line in enumerate(lines, 1):
        s = line.strip()
        # isdigit() alone takes other scripts' digits and superscripts.
        if not (s.isascii() and s.isdigit()):
            what = "an empty line" if not s else f"{s[:30]!r} is not a whole number of milliseconds"
            raise ScenarioError.at(field, f"{path}, line {i}: {what}")
        v = whole_number(s)  # None for a line of thousands of digits
        if v is None or v > MAX_TRACE_MS:
            raise ScenarioError.at(field, f"{path}, line {i}: {s[:30]} ms is beyond the longest run "
                                          f"({MAX_TRACE_MS:.0e} ms)")
        if ms and v < ms[-1]:
            raise ScenarioError.at(field, f"{path}, line {i}: the trace's times go back ({v} ms after {ms[-1]} ms)")
        ms.append(v)
    if not ms:
        raise ScenarioError.at(field, f"{path}: an empty trace (no opportunities)")
    if ms[-1] == 0:
        raise ScenarioError.at(field, f"{path}: the trace must last a positive time (its last line is 0)")
    return ms


def write(path: str | Path, ms: list[int]) -> Path:
    """Writes ``ms`` as a Mahimahi trace (one number per line), whole or not
    at all: a trace cut short would read as a shorter trace."""
    from .campaign.atomic import write_bytes

    write_bytes(path, "".join(f"{m}\n" for m in ms).encode())
    return Path(path)


def mean_rate_bps(ms: list[int], bytes_per_opportunity: int = OPPORTUNITY_BYTES) -> float:
    """The trace's mean capacity over one pass (its last timestamp)."""
    return len(ms) * bytes_per_opportunity * 8 / (ms[-1] / 1000)


def constant(rate_bps: float, duration_ms: int = 1000, bytes_per_opportunity: int = OPPORTUNITY_BYTES) -> list[int]:
    """N = round(duration_ms x c) opportunities evenly spread, c the
    opportunities per ms at ``rate_bps``: the k-th at ceil(k / c) ms. A pass
    lasts until the last one (ceil(N / c) ms, within 1 ms of
    ``duration_ms``), so the mean is ``rate_bps`` within 1 ms's share."""
    if rate_bps <= 0 or duration_ms < 1:
        raise ValueError("constant(): rate_bps and duration_ms must be positive")
    per_ms = rate_bps / (bytes_per_opportunity * 8 * 1000)
    n = max(1, round(duration_ms * per_ms))
    # k / c within a rounding error of a whole number counts as it.
    return [max(1, math.ceil(k / per_ms - 1e-9)) for k in range(1, n + 1)]


def markov(levels_bps: list[float], dwell_s: float, duration_s: float, seed: int,
           bytes_per_opportunity: int = OPPORTUNITY_BYTES) -> list[int]:
    """An LTE-like trace: the capacity moves between ``levels_bps`` as a
    birth-death Markov chain (each millisecond it leaves its level with
    probability 1 / (dwell_s x 1000), to the level above or below with
    equal odds, reflected at the ends: geometric dwell times of mean
    ``dwell_s``), starting from the middle level. In a millisecond at level
    r it offers floor(c) opportunities and one more with probability
    frac(c), c = r / (8 x 1504 x 1000): the mean is exact and the count
    varies by at most one. The last millisecond always has one, so that a
    pass lasts ``duration_s``."""
    if not levels_bps or min(levels_bps) < 0 or dwell_s <= 0 or duration_s <= 0:
        raise ValueError("markov(): levels must be non-negative, dwell_s and duration_s positive")
    rng = random.Random(seed)
    leave = 1.0 / (dwell_s * 1000)
    state = len(levels_bps) // 2
    n_ms = round(duration_s * 1000)
    ms: list[int] = []
    for k in range(1, n_ms + 1):
        if rng.random() < leave and len(levels_bps) > 1:
            up = rng.random() < 0.5
            if state == 0:
                up = True
            elif state == len(levels_bps) - 1:
                up = False
            state += 1 if up else -1
        c = levels_bps[state] / (bytes_per_opportunity * 8 * 1000)
        n = int(c) + (1 if rng.random() < c - int(c) else 0)
        ms.extend([k] * n)
    if not ms or ms[-1] != n_ms:
        ms.append(n_ms)
    return ms


@dataclass(frozen=True)
class Builtin:
    """A named trace and how it is made."""

    name: str
    description: str
    levels_bps: tuple[float, ...]
    dwell_s: float
    duration_s: float
    seed: int

    def make(self) -> list[int]:
        if len(self.levels_bps) == 1:
            return constant(self.levels_bps[0], round(self.duration_s * 1000))
        return markov(list(self.levels_bps), self.dwell_s, self.duration_s, self.seed)


#: The project's own traces, generated on demand (``mediasim trace list``).
BUILTIN: dict[str, Builtin] = {b.name: b for b in [
    Builtin("lte-walk", "LTE-like, a user walking: 1-12 Mbit/s, the level changing every 2 s on average, 120 s",
            (1e6, 2e6, 4e6, 8e6, 12e6), 2.0, 120.0, 1),
    Builtin("lte-drive", "LTE-like, a user driving: 0.3-20 Mbit/s, the level changing every 0.5 s on average, 120 s",
            (0.3e6, 1e6, 3e6, 6e6, 12e6, 20e6), 0.5, 120.0, 2),
    Builtin("lte-edge", "LTE-like at a cell edge: 0.2-3 Mbit/s with long deep fades, 120 s",
            (0.2e6, 0.5e6, 1e6, 2e6, 3e6), 3.0, 120.0, 3),
    Builtin("lte-2mbps", "LTE-like around 2 Mbit/s: 0.5-4 Mbit/s, the level changing every 1 s on average, 60 s "
            "(the IW10 study's cellular access)", (0.5e6, 1e6, 2e6, 3e6, 4e6), 1.0, 60.0, 4),
    Builtin("constant-12mbps", "12.032 Mbit/s, one opportunity per ms (Mahimahi's 12 Mbit/s trace), 1 s",
            (12.032e6,), 0.0, 1.0, 0),
    Builtin("constant-2mbps", "2 Mbit/s evenly spread, 1 s", (2e6,), 0.0, 1.0, 0),
]}

_made: dict[str, list[int]] = {}


def builtin(name: str, field: str = "trace.builtin") -> list[int]:
    """The opportunities of builtin trace ``name``."""
    if name not in BUILTIN:
        raise ScenarioError.at(field, f"no builtin trace {name!r} (known: {', '.join(sorted(BUILTIN))})")
    if name not in _made:
        _made[name] = BUILTIN[name].make()
    return list(_made[name])


# Files read, by (path, modification time, size): a sweep resolves the
# same trace once per run.
_read_cache: dict[tuple[str, int, int], list[int]] = {}


def _read_cached(path: str, field: str) -> list[int]:
    try:
        st = os.stat(path)
    except OSError:
        return read(path, field)  # raises with the field's name
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key not in _read_cache:
        _read_cache[key] = read(path, field)
    return list(_read_cache[key])


#: A frame source's type, and the field its file fills.
_FRAME_TRACE_FIELDS = {"trace": "frames_bytes", "svc_trace": "nal_units"}


def _frame_traces(data: dict[str, Any]):
    """(path, source dict) of every RTP member's frame-trace or SVC-trace
    source."""
    for i, sess in enumerate(_list(data.get("rtp_sessions"))):
        if not isinstance(sess, dict):
            continue
        for j, m in enumerate(_list(sess.get("members"))):
            src = m.get("source") if isinstance(m, dict) else None
            if isinstance(src, dict) and isinstance(src.get("type"), str) and src["type"] in _FRAME_TRACE_FIELDS:
                yield f"rtp_sessions[{i}].members[{j}].source", src


def read_frames(path: str | Path, field: str = "source.file") -> tuple[list[int], list[int]]:
    """Reads a frame-size trace: one frame per line, its payload bytes and
    optionally its type (``I`` marks a key frame; any other word is kept
    as a non-key frame); blank lines and ``#`` comments are skipped. Returns
    (sizes, key frame indices); every problem is a ScenarioError naming
    ``field`` and the line."""
    text = _read_text(path, field, "frame trace")
    sizes: list[int] = []
    keys: list[int] = []
    for i, line in enumerate(text.split("\n"), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        size = whole_number(words[0])
        if not size or len(words) > 2:
            raise ScenarioError.at(field, f"{path}, line {i}: expected a positive frame size in bytes and an optional "
                                f"frame type, got {line.strip()[:40]!r}")
        if len(words) == 2 and words[1].upper() == "I":
            keys.append(len(sizes))
        sizes.append(size)
    if not sizes:
        raise ScenarioError.at(field, f"{path}: no frames")
    return sizes, keys


def read_nal_units(path: str | Path, field: str = "source.file") -> list[list[Any]]:
    """Reads an SVC NAL-unit trace: one unit per line, ``time_s bytes
    spatial temporal quality`` in decoding order; blank lines and ``#``
    comments are skipped. A line of the wrong shape is a ScenarioError
    naming ``field`` and the line; the engine checks the values (layers,
    times in order, the GOP structure)."""
    text = _read_text(path, field, "NAL-unit trace")
    units: list[list[Any]] = []
    for i, line in enumerate(text.split("\n"), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            if len(words) != 5:
                raise ValueError
            units.append([float(words[0]), int(words[1]), int(words[2]), int(words[3]), int(words[4])])
        except ValueError:
            raise ScenarioError.at(field, f"{path}, line {i}: expected 'time_s bytes spatial temporal quality', "
                                f"got {line.strip()[:60]!r}") from None
    if not units:
        raise ScenarioError.at(field, f"{path}: the trace holds no NAL units")
    return units


def _list(x: Any) -> list:
    """``x`` if it is a list, else nothing: a field of the wrong type is
    left for validation to name."""
    return x if isinstance(x, list) else []


def _traces(data: dict[str, Any]):
    """(path, trace dict) of every link and direction trace in a scenario."""
    for i, link in enumerate(_list(data.get("links"))):
        if not isinstance(link, dict):
            continue
        for where, holder in [("", link), (".ab", link.get("ab")), (".ba", link.get("ba"))]:
            if isinstance(holder, dict) and isinstance(holder.get("trace"), dict):
                yield f"links[{i}]{where}.trace", holder["trace"]


def needs_resolving(data: dict[str, Any]) -> bool:
    return any(("file" in t or "builtin" in t) and not t.get("opportunities_ms") for _, t in _traces(data)) or any(
        "file" in s and not s.get(_FRAME_TRACE_FIELDS[s["type"]]) for _, s in _frame_traces(data))


def resolve(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``opportunities_ms`` filled for every trace given by
    ``file`` (relative to the working directory) or ``builtin``; the
    input is not changed, and returned as is when nothing needs it.
    Raises ScenarioError naming every trace that cannot be read."""
    out, problems, _ = read_in(data)
    if problems:
        raise ScenarioError("traces that cannot be read", problems)
    return out


def read_in(data: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]], set[str]]:
    """``data`` with every trace that can be read filled in (the input is
    not changed); the problems of those that cannot, together; and the
    fields those leave empty, which the engine's checks then name as
    empty, for the caller to leave out (the trace's problem is the one
    to say)."""
    if not needs_resolving(data):
        return data, [], set()
    out = plain.copy_of(data)
    problems: list[tuple[str, str]] = []
    left_empty: set[str] = set()
    for path, t in _traces(out):
        try:
            _resolve_link_trace(path, t)
        except ScenarioError as e:
            problems += e.errors
            left_empty.add(f"{path}.opportunities_ms")
    for path, src in _frame_traces(out):
        try:
            _resolve_frame_trace(path, src)
        except ScenarioError as e:
            problems += e.errors
            # An unread SVC trace leaves its units empty; a frame trace its
            # sizes, which its key frames (if given) are then checked against.
            left_empty |= {f"{path}.nal_units"} if src["type"] == "svc_trace" else {
                f"{path}.frames_bytes", f"{path}.key_frames"}
    return out, problems, left_empty


def _resolve_link_trace(path: str, t: dict[str, Any]) -> None:
    """Fills a link's trace (at ``path``) from its file or builtin."""
    if t.get("opportunities_ms"):
        return
    if "file" in t and "builtin" in t:
        raise ScenarioError.at(path, "give file or builtin, not both")
    if "file" in t:
        t["opportunities_ms"] = _read_cached(str(t["file"]), f"{path}.file")
    elif "builtin" in t:
        t["opportunities_ms"] = builtin(str(t["builtin"]), f"{path}.builtin")


def _resolve_frame_trace(path: str, src: dict[str, Any]) -> None:
    """Fills a media source's frames (at ``path``) from its trace file."""
    if src["type"] == "svc_trace":
        if "file" in src and not src.get("nal_units"):
            src["nal_units"] = read_nal_units(str(src["file"]), f"{path}.file")
    elif "file" in src and not src.get("frames_bytes"):
        problems = []
        if src.get("key_frames"):
            problems.append((f"{path}.key_frames", "with `file`, key frames come from the trace (type I)"))
        try:  # the file is read even so: its own problem is said with that one
            frames = read_frames(str(src["file"]), f"{path}.file")
        except ScenarioError as e:
            problems += e.errors
        if problems:
            raise ScenarioError("a frame trace that cannot be read", problems)
        src["frames_bytes"], src["key_frames"] = frames


def anchor_files(data: dict[str, Any], base: Path) -> None:
    """Makes relative trace file paths in ``data`` relative to ``base`` (a
    scenario file's folder), in place."""
    for _, t in [*_traces(data), *_frame_traces(data)]:
        f = t.get("file")
        if isinstance(f, str) and not os.path.isabs(f):
            t["file"] = str((base / f).resolve())
