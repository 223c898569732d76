"""Frame traces for the media-scaling MPEG_APP and each scale's rate; SVC
NAL-unit traces; the residual loss of an FEC block code.

Trace format (text, one frame per line, in sending order)::

    # comment lines and blank lines are ignored
    I 11000
    B 2000
    B 2000
    P 8000

Each line is a frame type (I, P or B) and the frame's size in bytes of
payload (RTP/UDP/IP headers come on top, per packet after fragmentation).
The first frame must be an I frame (a GOP starts at each I). A trace is
made for the highest scale's frame rate and is read as a loop.
"""

from __future__ import annotations

import json
import operator
from numbers import Real
from pathlib import Path
from typing import Any

from . import _engine
from .errors import ScenarioError
from .plain import not_utf8, read_bytes
from .traces import read_nal_units, whole_number

Trace = list[list[Any]]  # [[type, bytes], ...], as a flow's "frames" field

STUDY_SIZES = {"I": 11000, "P": 8000, "B": 2000}


def study_trace(gop: str = "IBBPBBPBB", sizes: dict[str, int] | None = None, gops: int = 1) -> Trace:
    """The media-scaling study's trace: every frame of a type has that
    type's mean size (I 11000, P 8000, B 2000 bytes)."""
    sizes = sizes or STUDY_SIZES
    return [[t, int(sizes[t])] for _ in range(gops) for t in gop]


def read_trace(path: str | Path) -> Trace:
    """Reads a trace file; a bad line raises ScenarioError naming the file
    and line."""
    path = Path(path)
    frames: Trace = []
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError.at(str(path), "no such trace file") from None
    except UnicodeDecodeError as e:
        raise ScenarioError.at(str(path), not_utf8(e)) from None
    except OSError as e:
        raise ScenarioError.at(str(path), f"cannot read the trace: {e.strerror or e}") from None
    for no, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        size = whole_number(parts[1]) if len(parts) == 2 and parts[0] in ("I", "P", "B") else None
        if size is None:
            raise ScenarioError.at(f"{path}:{no}", f"expected '<I|P|B> <bytes>', got {line[:60]!r}")
        frames.append([parts[0], size])
    if not frames:
        raise ScenarioError.at(str(path), "the trace holds no frames")
    if frames[0][0] != "I":
        raise ScenarioError.at(f"{path}:1", "the first frame must be an I frame")
    return frames


def write_trace(path: str | Path, frames: Trace) -> Path:
    path = Path(path)
    lines = ["# mediasim MPEG frame trace: <type> <payload bytes>, one frame per line"]
    lines += [f"{t} {b}" for t, b in frames]
    path.write_text("\n".join(lines) + "\n")
    return path


def scale_rates(**fields: Any) -> list[dict[str, float]]:
    """Each scale's average rate of a media-scaling flow with these fields
    (``app="mpeg"``, ``frames=...`` or ``gop=...``; ``app="mm"``,
    ``rates_bps=...``): payload and on-the-wire kbit/s, as the sender
    produces them."""
    try:
        rates = _engine.media_scaling_rates(json.dumps(fields))
    except ValueError as e:
        where, _, msg = str(e).partition(": ")
        raise ScenarioError.at(where, msg) from None
    return [{"scale": s, "payload_kbps": p / 1e3, "wire_kbps": w / 1e3} for s, (p, w) in enumerate(rates)]


SvcTrace = list[list[Any]]  # [[time_s, bytes, spatial, temporal, quality], ...], an svc flow's "nal_units"


def read_svc_trace(path: str | Path) -> SvcTrace:
    """Reads an SVC NAL-unit trace: one unit per line, ``time_s bytes
    spatial temporal quality`` in decoding order, ``#`` comments. A bad
    line raises ScenarioError naming the file and line; the engine checks
    the values (layers, order in time) when the flow is validated."""
    return read_nal_units(path, str(path))


def write_svc_trace(path: str | Path, units: SvcTrace) -> Path:
    path = Path(path)
    lines = ["# mediasim SVC trace: time_s bytes spatial temporal quality, one NAL unit per line"]
    lines += [f"{t!r} {b} {s} {tl} {q}" for t, b, s, tl, q in units]
    path.write_text("\n".join(lines) + "\n")
    return path


def fec_residual_loss(code: str, k: int, n: int, p_media: float, p_repair: float) -> float:
    """The media loss an FEC block code leaves after decoding (the svc
    flow's ``fec``: ``code`` "rs" or "xor", ``k`` media and ``n`` packets
    per block), media packets lost independently with ``p_media`` and
    repair packets with ``p_repair`` (they travel at another precedence).
    docs/models/svc.md, "Residual loss model"."""
    for name, v in (("k", k), ("n", n)):
        try:
            ok = 0 <= operator.index(v) < 2 ** 32 and not isinstance(v, bool)
        except TypeError:
            ok = False
        if not ok:
            raise ScenarioError.at(name, f"must be a whole number from 0 to 4294967295 (got {v!r})")
    for name, x in (("p_media", p_media), ("p_repair", p_repair)):
        if not isinstance(x, Real) or isinstance(x, bool):
            raise ScenarioError.at(name, f"must be a number (got {x!r})")
    if not isinstance(code, str):
        raise ScenarioError.at("code", f"must be text, rs or xor (got {code!r})")
    try:
        return _engine.fec_residual_loss(code, operator.index(k), operator.index(n), float(p_media), float(p_repair))
    except ValueError as e:
        where, _, msg = str(e).partition(": ")
        raise ScenarioError.at(where, msg) from None
