"""A property-based fuzzer of the scenario loader, validator and engine.

    python -m mediasim.validation.fuzz --inputs 100000 [--seed 1] [--workers 2] [--save DIR]

Inputs are the example scenarios and one scenario of every model from the
reference studies (``bases``), mutated by Hypothesis strategies: a value
replaced by anything JSON, YAML or TOML can hold (huge, tiny, negative,
NaN, text, lists, tables), a number scaled (its type kept; half the
inputs have only these, which mostly stay valid), a field deleted or
added, a list item duplicated; a third of them go through a file (JSON,
YAML or TOML text, some with bytes flipped). Each input is loaded,
validated, and if valid run under a budget. The property: every input
ends in a ScenarioError or a finished run. Counted as failures: a Rust
panic, any other exception (a raw traceback), a run over its memory
budget, a run that does not end within its wall budget (a hang), an input
that `validate` accepts but that does not build, and a run that, made
again with the same seed, gives other results (one in ``RERUN_EVERY`` of
those that finish). With ``--save`` the failing inputs are written there
(tests/data/fuzz_corpus keeps those fixed since as regression tests).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
MAX_EVENTS = 200_000
MAX_WALL_S = 2.0
MAX_MEMORY_MB = 3000.0
HANG_S = 20.0

#: Factors of the "scale" mutation: a number made much smaller or larger,
#: zero or negative, its type kept, so that most such inputs stay valid and
#: reach the engine with values at the edges of what it accepts.
SCALES = [0, -1, 1e-9, 1e-3, 0.1, 0.5, 0.9, 1.1, 2, 10, 1e3, 1e6, 1e9]

INTERESTING = [0, -1, 1, 2 ** 31, 2 ** 63, 2 ** 64, 1e-300, 1e300, 0.5, 1e-9, 1e15, -0.0, "", "a", "a/b", "nan",
               "inf", "1e6", [], {}, None, True]


def _strategies():
    from hypothesis import strategies as st

    leaf = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats(allow_nan=True)
            | st.text(max_size=16) | st.sampled_from(INTERESTING))
    value = st.recursive(leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c,
                                                                                    max_size=3), max_leaves=6)
    scale = st.tuples(st.just("scale"), st.integers(0, 10 ** 6), st.sampled_from(SCALES))
    mutation = st.one_of(
        st.tuples(st.just("set"), st.integers(0, 10 ** 6), value),
        scale,
        st.tuples(st.just("delete"), st.integers(0, 10 ** 6), st.none()),
        st.tuples(st.just("dup"), st.integers(0, 10 ** 6), st.none()),
        st.tuples(st.just("add"), st.integers(0, 10 ** 6), st.tuples(st.text(max_size=10), value)),
    )
    as_file = st.sampled_from([None, None, "json", "yaml", "toml"])
    flips = st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), max_size=3)
    # Half the inputs only scale numbers: most of those stay valid and run.
    mutations = st.lists(mutation, min_size=1, max_size=4) | st.lists(scale, min_size=1, max_size=4)
    return st.tuples(st.integers(0, 10 ** 6), mutations, as_file, flips)


# Simulated seconds of a study scenario used as a fuzzing base: long
# enough for every model to act, short enough for thousands of runs.
STUDY_BASE_S = 5.0


def bases() -> list[dict[str, Any]]:
    """The example scenarios, then one scenario of each model the
    examples lack, from the reference studies (shortened to
    ``STUDY_BASE_S``): TCP with IW10, every AVPF case, media scaling
    through RED, SVC over TFRC and over PPACC with FEC, RMTP, and the RMCAT
    cases' controllers (GCC, NADA, SCReAM and SCReAMv2 with L4S) over
    capacity steps in both directions, a cellular trace (its viewers
    asking for retransmissions), libwebrtc's video timing, FQ-CoDel, short
    TCP transfers and a paused flow."""
    from ..plain import read_file

    return ([read_file(p) for p in sorted(EXAMPLES.iterdir()) if p.suffix in (".toml", ".yaml", ".json")]
            + study_bases())


def study_bases() -> list[dict[str, Any]]:
    from ..experiments import avpf, iw10, media_scaling, rmcat, rmtp, svc

    scenarios = [iw10.scenario(iw10.Params().quick(), 2, 10), media_scaling.scenario(media_scaling.Params().quick()),
                 svc.scenario(svc.Params().quick(), "tfrc", 20), svc.scenario(svc.Params().quick(), "ppacc", 20, 1),
                 rmtp.scenario(rmtp.Params().quick(), 3, STUDY_BASE_S)]
    out = [s.to_dict() for s in scenarios] + rmcat_bases(rmcat)
    seen = set()
    for job in avpf.build_jobs(avpf.Params().quick(), avpf.CASES):
        case = job.labels.get("case")
        if case not in seen:
            seen.add(case)
            out.append(job.scenario)
    for d in out:
        d["duration_s"] = min(float(d["duration_s"]), STUDY_BASE_S)
        for f in d.get("flows", []):  # starts after the shortened end would only be refused
            for k in ("start_s", "stop_s"):
                if isinstance(f.get(k), (int, float)) and f[k] >= STUDY_BASE_S:
                    f.pop(k)
    return out


#: RMCAT cases (RFC 8867 numbering, 9 the first cellular trace) and the
#: controller and queue each base runs: together every controller, both
#: capacity schedules, the trace, FQ-CoDel and a pause.
RMCAT_BASES = ((1, "gcc", "droptail"), (3, "nada", "fq_codel"), (7, "nada", "droptail"), (8, "scream", "droptail"),
               (9, "gcc", "droptail"))


def rmcat_bases(rmcat: Any) -> list[dict[str, Any]]:
    p = rmcat.Params().quick()
    # Case 8's times x 0.1: its flows start at 0, 2 and 4 s and the first
    # pauses from 4 s, within the shortened run.
    out = [rmcat.scenario(p if n != 8 else dataclasses.replace(p, time_scale=0.1), n, ctrl, 50.0, aqm, 0).to_dict()
           for n, ctrl, aqm in RMCAT_BASES]
    # SCReAMv2 with L4S marks: case 1 again, its queue marking.
    v2 = rmcat.scenario(p, 1, "scream", 50.0, "fq_codel", 0).to_dict()
    for s in v2["rtp_sessions"]:
        s["members"][0]["cc"].update(version="v2", l4s=True)
    # The cellular trace's viewers ask for lost packets again (NACK and
    # retransmission), decoding by reference, over a bottleneck that
    # reorders; case 3's use libwebrtc's video timing; case 7's first
    # sender plays a frame trace that answers key-frame requests, its
    # viewer asking only after libwebrtc's wait for a decodable frame,
    # through outages of the sender's access link: 1.5 s from the
    # session's start at 2 s (the first key frames lost: requests every
    # 200 ms until one is decoded) and 9 s later on (the wait runs out with
    # nothing arriving, then with nothing for over 5 s).
    for s in out[-1]["rtp_sessions"]:
        for m in s["members"]:
            if "playout" in m:
                m["playout"].update(nack=True, decode="reference")
    out[-1]["links"][0]["jitter"] = {"std_ms": 5.0, "reorder": True}
    first = out[2]["rtp_sessions"][0]["members"]
    first[0]["source"] = {"type": "trace", "fps": 30, "frames_bytes": [9000] + [3000] * 29, "key_frames": [0],
                          "key_on_request": True}
    first[1]["playout"].update(decode="reference", key_frame_wait_ms=3000.0)
    access = next(x for x in out[2]["links"] if x["a"] == first[0]["node"])
    access["outages"] = {"down_s": [[2.0, 3.5], [30.0, 39.0]], "queued": "drop"}
    for s in out[1]["rtp_sessions"]:
        for m in s["members"]:
            if "playout" in m:
                m["playout"].update(estimator="webrtc", decode_ms=2.0)
    return out + [v2]


def _places(x: Any, out: list) -> list:
    """Every (container, key) in ``x``, depth first."""
    if isinstance(x, dict):
        for k in list(x):
            out.append((x, k))
            _places(x[k], out)
    elif isinstance(x, list):
        for i in range(len(x)):
            out.append((x, i))
            _places(x[i], out)
    return out


def mutate(base: dict[str, Any], mutations: list) -> dict[str, Any]:
    import copy

    data = copy.deepcopy(base)
    for op, at, arg in mutations:
        places = _places(data, [])
        if op == "scale":  # among the numbers only
            places = [(c, k) for c, k in places if _number(c[k])]
            if not places:
                continue
        if not places:
            break
        cont, key = places[at % len(places)]
        # Values are copied in: Hypothesis may hand the same object to two
        # mutations, and one inside the other would make a cycle.
        if op == "set":
            cont[key] = copy.deepcopy(arg)
        elif op == "scale":
            cont[key] = _scaled(cont[key], arg)
        elif op == "delete":
            del cont[key]
        elif op == "dup" and isinstance(cont, list):
            cont.insert(key, copy.deepcopy(cont[key]))
        elif op == "add" and isinstance(cont[key], dict):
            cont[key][arg[0]] = copy.deepcopy(arg[1])
    return data


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _scaled(x: Any, factor: float) -> Any:
    """A number times ``factor``; a whole number stays whole, rounded but
    not to 0 unless it was 0 or the factor is (a count of 3 times 0.1 is
    1)."""
    if not _number(x):
        return x
    try:
        y = x * factor
    except OverflowError:  # a whole number beyond any float
        return x
    if isinstance(x, int):
        if not math.isfinite(y):
            return x
        return round(y) or (0 if y == 0 else int(math.copysign(1, y)))
    return y


def _text(data: dict[str, Any], fmt: str) -> bytes:
    if fmt == "json":
        return json.dumps(data, default=str).encode()
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(data, allow_unicode=True).encode()
    return _toml(data).encode()


def _toml(data: dict[str, Any]) -> str:
    """A rough TOML writer (inline tables): enough to feed the parser."""
    def v(x: Any) -> str:
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, dict):
            return "{" + ", ".join(f"{json.dumps(str(k))} = {v(y)}" for k, y in x.items() if y is not None) + "}"
        if isinstance(x, list):
            return "[" + ", ".join(v(y) for y in x if y is not None) + "]"
        if isinstance(x, float) and x != x:
            return "nan"
        if isinstance(x, (int, float)):
            return repr(x)
        return json.dumps(str(x))
    return "\n".join(f"{json.dumps(str(k))} = {v(x)}" for k, x in data.items() if x is not None) + "\n"


def probe(case: tuple, base_list: list[dict[str, Any]]) -> tuple[str, str]:
    """(outcome, detail) of one input: ok, rejected, stopped (a budget
    ended the run, cleanly), or a failure: panic, traceback, memory, hang,
    unbuildable."""
    import mediasim
    from mediasim import _engine
    from mediasim.errors import ScenarioError

    idx, mutations, fmt, flips = case
    data = mutate(base_list[idx % len(base_list)], mutations)
    try:
        if fmt is None:
            sc = mediasim.Scenario.from_dict(data)
        else:
            raw = bytearray(_text(data, fmt))
            for at, b in flips:
                if raw:
                    raw[at % len(raw)] = b
            with tempfile.NamedTemporaryFile(suffix="." + fmt, delete=False) as fh:
                fh.write(raw)
            try:
                sc = mediasim.load_scenario(fh.name)
            except ScenarioError as e:
                return _rejected(e)
            finally:
                os.unlink(fh.name)
        try:
            sc.validate()
        except ScenarioError as e:
            return _rejected(e)
        t0 = time.monotonic()
        try:
            res = mediasim.run(sc, seed=1, max_events=MAX_EVENTS, max_wall_s=MAX_WALL_S, max_memory_mb=MAX_MEMORY_MB)
        except ScenarioError as e:
            return "unbuildable", str(e)[:300]
        wall = time.monotonic() - t0
        if wall > HANG_S:
            return "hang", f"{wall:.1f} s"
        if (res.meta.get("stopped_early") or "").startswith("max_memory_mb"):
            return "memory", res.meta["stopped_early"]
        if res.meta.get("stopped_early"):
            return "stopped", ""
        if (idx // len(base_list)) % RERUN_EVERY == 0:
            again = mediasim.run(sc, seed=1, max_events=MAX_EVENTS, max_wall_s=HANG_S, max_memory_mb=MAX_MEMORY_MB)
            if digest(again) != digest(res):
                return "nondeterministic", "the same scenario and seed gave other results"
        return "ok", ""
    except BaseException as e:  # noqa: BLE001 - classifying every way out is the point
        kind = "panic" if type(e).__name__ == "PanicException" else "traceback"
        return kind, f"{type(e).__name__}: {str(e)[:300]}"


#: One in this many inputs that run to their end runs again, and must give
#: the same results to the bit.
RERUN_EVERY = 4


def digest(res: Any) -> str:
    """A hash of everything a run's results hold but its wall time: the
    metadata and every column of every table, bytes and dtype."""
    import numpy as np

    h = hashlib.sha256(json.dumps({k: v for k, v in res.meta.items() if k != "wall_s"}, sort_keys=True,
                                  default=repr).encode())
    for name in sorted(res.tables):
        for col, arr in sorted(res.columns(name).items()):
            h.update(f"{name}.{col}:{arr.dtype}:".encode())
            h.update(arr.tobytes() if arr.dtype != np.dtype(object) else repr(arr.tolist()).encode())
    return h.hexdigest()


#: The reader's own words for a wrong type, a wrong name, an unknown or an
#: absent field, which a message must not show (the engine says what the
#: field must be in the scenario's words).
JARGON = re.compile(r"\b(?:invalid type|invalid value|invalid length|unknown variant|f32|f64|"
                    r"[iu](?:8|16|32|64|128|size)|struct [A-Z]\w*|a sequence|a map)\b"
                    r"|unknown field `|there are no fields|missing field")


def _rejected(e: Any) -> tuple[str, str]:
    """A refusal is an outcome only if each problem names its field and
    says what is wrong without the reader's jargon."""
    for path, msg in e.errors:
        if not path or JARGON.search(msg):
            return "jargon", f"{path}: {msg}"[:300]
    return "rejected", ""


FAILURES = ("panic", "traceback", "memory", "hang", "unbuildable", "jargon", "nondeterministic")


def _chunk(args: tuple[int, int, int]) -> tuple[Counter, list]:
    """Runs ``count`` Hypothesis-generated inputs from ``seed``."""
    import warnings

    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings

    seed, count, _ = args
    warnings.simplefilter("ignore")
    base_list = bases()
    counts: Counter = Counter()
    failed: list = []

    @hseed(seed)
    @settings(max_examples=count, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(_strategies())
    def one(case):
        outcome, detail = probe(case, base_list)
        counts[outcome] += 1
        if outcome in FAILURES and len(failed) < 50:
            failed.append((outcome, detail, repr(case)[:2000]))

    one()
    return counts, failed


def fuzz(inputs: int, seed: int = 1, workers: int = 1, chunk: int = 1000) -> tuple[Counter, list]:
    """Runs ``inputs`` inputs over ``workers`` processes."""
    jobs = [(seed * 1_000_003 + i, min(chunk, inputs - i * chunk), i) for i in range(-(-inputs // chunk))]
    total: Counter = Counter()
    failed: list = []
    parts: Iterable[tuple[Counter, list]]
    if workers == 1:
        parts = map(_chunk, jobs)
    else:
        pool = ProcessPoolExecutor(max_workers=workers)
        parts = pool.map(_chunk, jobs)
    for c, f in parts:
        total += c
        failed += f
    return total, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--save", type=Path, default=None, help="write failing inputs here")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    counts, failed = fuzz(a.inputs, a.seed, a.workers)
    print(f"{sum(counts.values())} inputs in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("failures: " + ", ".join(f"{k} {counts.get(k, 0)}" for k in FAILURES))
    for outcome, detail, case in failed[:20]:
        print(f"- {outcome}: {detail}\n  {case[:300]}")
    if a.save and failed:
        a.save.mkdir(parents=True, exist_ok=True)
        (a.save / f"failures-{a.seed}.json").write_text(json.dumps(failed, indent=1))
    return 1 if any(counts.get(k) for k in FAILURES) else 0


if __name__ == "__main__":
    raise SystemExit(main())
