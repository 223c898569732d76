"""`mediasim bench --calls --counts`: instructions, cache misses and
mispredicted branches per delivered media packet under valgrind's cache
and branch simulators.

scripts/setup installs valgrind where it can (root with apt-get). In CI the
end-to-end test requires it; elsewhere, without valgrind, it is reported as
not run, with the reason, never passed."""

import json

import pytest
from click.testing import CliRunner
from conftest import bench_calls_quick, require_tool

from mediasim.cli import main
from mediasim.validation.cache_counts import (
    Counts,
    instructions_by_part,
    parse_callgrind_self_instructions,
    parse_callgrind_totals,
    parts_per_media_packet,
    per_media_packet,
    row_of,
)

CALLGRIND_OUT = """# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  python -m mediasim.validation.bench calls 8 1 1
positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1000 400 300 20 30 10 2 5
fl=(1) x.rs
fn=(1) f
3 1000 400 300 20 30 10 2 5
totals: 1000 400 300 20 30 10 2 5
"""


def test_the_totals_are_read_by_their_names_and_missing_trailing_counts_are_zero():
    t = parse_callgrind_totals(CALLGRIND_OUT)
    assert t == {"Ir": 1000, "Dr": 400, "Dw": 300, "I1mr": 20, "D1mr": 30, "D1mw": 10, "ILmr": 2, "DLmr": 5,
                 "DLmw": 0}
    with pytest.raises(ValueError, match="not a callgrind output file"):
        parse_callgrind_totals("summary: 1 2 3\n")


# Compressed names, code inlined from another file (fi=, fe=), a call whose
# inclusive cost must not count in its caller, a relative position and a
# cost line whose trailing counts are left off.
CALLGRIND_FUNCTIONS = """# callgrind format
version: 1
positions: line
events: Dr Ir I1mr
summary: 0 1000 15
ob=(1) /x/mediasim/_engine.abi3.so
fl=(1) world/mod.rs
fn=(1) mediasim_engine::world::World::run_until
10 7 300 5
fi=(2) sim/heap.rs
12 0 100
fe=(1)
cfl=(3) app/media/playout.rs
cfn=(2) mediasim_engine::app::media::playout::Playout::on_packet
calls=4 20
14 9 500 9
fl=(3)
fn=(2)
20 1 450
+2 0 50 1
ob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(4) malloc.c
fn=(3) malloc
5 2 100
"""


def test_each_function_keeps_its_own_instructions_and_inlined_code_counts_where_it_was_inlined():
    own = parse_callgrind_self_instructions(CALLGRIND_FUNCTIONS)
    engine = "/x/mediasim/_engine.abi3.so"
    assert own == {(engine, "mediasim_engine::world::World::run_until"): 400,
                   (engine, "mediasim_engine::app::media::playout::Playout::on_packet"): 500,
                   ("/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc"): 100}
    # The functions' own counts add up to the total: nothing counted twice.
    assert sum(own.values()) == parse_callgrind_totals(CALLGRIND_FUNCTIONS)["Ir"]
    parts = instructions_by_part(own)
    assert (parts["network"], parts["receiver"], parts["libc"]) == (400, 500, 100)
    assert parts["sender"] == parts["feedback"] == parts["rtcp"] == parts["outside"] == 0
    with pytest.raises(ValueError, match=r"name id \(7\) used before"):
        parse_callgrind_self_instructions("events: Ir\nfn=(7)\n1 5\n")
    with pytest.raises(ValueError, match="no Ir event"):
        parse_callgrind_self_instructions("events: Dr\nfn=(1) f\n1 5\n")
    with pytest.raises(ValueError, match="before the 'events:' line"):
        parse_callgrind_self_instructions("fn=(1) f\n1 5\n")


def test_a_part_costs_the_difference_over_the_packets_between():
    short = Counts({}, 100, part_instructions={"network": 5_000, "sender": 1_000})
    long = Counts({}, 300, part_instructions={"network": 45_000, "sender": 21_000, "feedback": 200})
    assert parts_per_media_packet(short, long) == {"network": 200.0, "sender": 100.0, "feedback": 1.0}
    with pytest.raises(ValueError, match="no more media packets"):
        parts_per_media_packet(long, long)


def test_a_packet_costs_the_difference_over_the_packets_between():
    def events(k: int, ir: int) -> dict[str, int]:
        return {"Ir": ir, "I1mr": 10 * k, "D1mr": 20 * k, "D1mw": 4 * k, "ILmr": 0, "DLmr": 3 * k, "DLmw": k,
                "Bcm": 7 * k, "Bim": 2 * k}

    # The longer run delivers 200 more media packets; what both runs share
    # (start-up) drops out of the difference.
    short, long = Counts(events(1, 1500), 100), Counts(events(3, 3000), 300)
    per = per_media_packet(short, long)
    assert per["Ir"] == pytest.approx(1500 / 200) and per["D1mr"] == pytest.approx(40 / 200)
    row = row_of("calls-8", 8, (1.0, 2.0), per, 200)
    assert row["first_level_misses"] == pytest.approx((20 + 40 + 8) / 200, abs=0.01)
    assert row["ll_misses"] == pytest.approx((6 + 2) / 200, abs=0.01) and row["sim_s"] == "1-2"
    assert row["mispredicts"] == pytest.approx((14 + 4) / 200, abs=0.01)
    with pytest.raises(ValueError, match="no more media packets"):
        per_media_packet(long, long)


def test_the_instruction_cache_may_differ_from_the_data_cache(monkeypatch):
    import subprocess
    from types import SimpleNamespace

    from mediasim.validation import cache_counts

    seen = []

    def fake_run(cmd, **_):
        seen.append(cmd)
        out = next(a.split("=", 1)[1] for a in cmd if a.startswith("--callgrind-out-file="))
        with open(out, "w") as fh:
            fh.write(CALLGRIND_OUT)
        return SimpleNamespace(returncode=0, stdout=json.dumps({"media_delivered": 10, "workload": "calls-8"}),
                               stderr="")

    monkeypatch.setattr(cache_counts, "valgrind_path", lambda: "valgrind")
    monkeypatch.setattr(subprocess, "run", fake_run)
    c = cache_counts.count_run("calls", 8, 1.0, i1_bytes=65536)
    assert c.events["Ir"] == 1000 and c.media_delivered == 10
    assert "--I1=65536,8,64" in seen[0] and "--D1=32768,8,64" in seen[0] and "--branch-sim=yes" in seen[0]
    cache_counts.count_run("calls", 8, 1.0)
    assert "--I1=32768,8,64" in seen[1]


def test_counts_goes_with_calls():
    r = CliRunner().invoke(main, ["bench", "--counts"])
    assert r.exit_code != 0 and "--counts goes with --calls" in r.output


def test_bench_calls_counts_quick_counts_each_workload():
    require_tool("valgrind")
    calls, rtp, cbr = bench_calls_quick("--counts")
    # The RTP session sends the CBR flows' packets, one every interval: the
    # same media packets between 1 and 2 s.
    assert rtp["media_packets"] == cbr["media_packets"] > 8 * 90
    # A CBR packet's work is part of an RTP packet's, and an RTP packet's
    # part of a call's (frames, pacer, feedback, playout on top).
    assert cbr["instructions"] < rtp["instructions"] < calls["instructions"]
    assert cbr["instructions_x_cbr"] == 1.0
    assert calls["instructions_x_cbr"] == pytest.approx(calls["instructions"] / cbr["instructions"], abs=0.01)
    # Eight CBR flows' state and code stay in the first-level caches.
    assert cbr["first_level_misses"] < 1 and cbr["misses_x_cbr"] is None
    assert calls["first_level_misses"] > rtp["first_level_misses"] > cbr["first_level_misses"]
    # A call's branches depend on its data (frame sizes, the pacer's
    # waits, feedback timing) where a CBR flow's repeat.
    assert calls["mispredicts"] > rtp["mispredicts"] > cbr["mispredicts"] > 0
    assert calls["mispredicts_x_cbr"] == pytest.approx(calls["mispredicts"] / cbr["mispredicts"], abs=0.01)
    # The parts add up to the instructions (each rounded to 0.1), and a
    # CBR flow runs no RTCP or feedback code where a call runs both.
    parts = ("network", "sender", "receiver", "rtcp", "feedback", "libc", "outside")
    for row in (calls, rtp, cbr):
        assert sum(row[f"{p}_instructions"] for p in parts) == pytest.approx(row["instructions"], abs=0.5)
    assert cbr["rtcp_instructions"] == cbr["feedback_instructions"] == 0
    assert calls["feedback_instructions"] > 0 and calls["rtcp_instructions"] > 0 and rtp["rtcp_instructions"] > 0
    assert calls["sender_instructions"] > rtp["sender_instructions"] > cbr["sender_instructions"] > 0
