"""The trace files and generators of mediasim.traces, alone: each reader's
whole message for each problem (the field, the file, the line, what is
wrong), and the generators against their models (a chain whose levels
are whole opportunities per millisecond shows its level in every
millisecond, so dwell times and the starting level can be read off)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mediasim import ScenarioError, traces

ONE_PER_MS = traces.OPPORTUNITY_BYTES * 8 * 1000  # bit/s of one opportunity a millisecond


def said(f, *args) -> tuple[str, str]:
    with pytest.raises(ScenarioError) as e:
        f(*args)
    [(field, msg)] = e.value.errors
    assert str(e.value) == f"invalid scenario:\n  {field}: {msg}"
    return field, msg


def write(tmp_path: Path, text: str | bytes, name: str = "t.txt") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_a_mahimahi_trace_is_read_or_each_problem_named(tmp_path):
    assert traces.read(write(tmp_path, "1\n1\n5\n")) == [1, 1, 5]
    assert traces.read(write(tmp_path, "1\n5")) == [1, 5]  # no newline at the end
    p = write(tmp_path, "1\n\n5\n")
    assert said(traces.read, p) == ("trace.file", f"{p}, line 2: an empty line")
    p = write(tmp_path, "1\n" + "x" * 40 + "\n")
    assert said(traces.read, p, "links[0].trace.file") == (
        "links[0].trace.file", f"{p}, line 2: {'x' * 30!r} is not a whole number of milliseconds")
    p = write(tmp_path, "0\n0\n")
    assert said(traces.read, p) == ("trace.file", f"{p}: the trace must last a positive time (its last line is 0)")
    # Only the last line decides: opportunities at 0 ms before others are fine.
    assert traces.read(write(tmp_path, "0\n0\n3\n")) == [0, 0, 3]
    p = write(tmp_path, "3\n2\n")
    assert said(traces.read, p)[1] == f"{p}, line 2: the trace's times go back (2 ms after 3 ms)"
    p = write(tmp_path, "")
    assert said(traces.read, p)[1] == f"{p}: an empty trace (no opportunities)"
    assert said(traces.read, tmp_path / "gone")[1] == f"no such trace file: {tmp_path / 'gone'}"
    p = write(tmp_path, b"1\n\xff\n")
    assert said(traces.read, p) == ("trace.file", f"the trace file {p} is not UTF-8 text (byte 2: b'\\xff')")
    assert said(traces.read, tmp_path) == ("trace.file", f"cannot read the trace file {tmp_path}: Is a directory")


def test_whole_numbers_have_at_most_eighteen_digits_unless_told():
    assert traces.whole_number("9" * 18) == int("9" * 18)
    assert traces.whole_number("0" * 5 + "9" * 18) == int("9" * 18)  # leading zeros are not digits that count
    assert traces.whole_number("9" * 19) is None
    assert traces.whole_number("9" * 19, max_digits=19) == int("9" * 19)
    assert traces.whole_number("\u00b2") is None and traces.whole_number("-1") is None


def test_builtin_traces_are_named_made_once_and_handed_out_as_copies(monkeypatch):
    monkeypatch.setattr(traces, "_made", {})  # made here, not by an earlier test
    field, msg = said(traces.builtin, "nope")
    assert (field, msg) == ("trace.builtin", f"no builtin trace 'nope' (known: {', '.join(sorted(traces.BUILTIN))})")
    a = traces.builtin("constant-2mbps")
    a.append(-1)
    assert traces.builtin("constant-2mbps") == traces.BUILTIN["constant-2mbps"].make()
    assert list(traces._made) == ["constant-2mbps"]
    # Each one is what its description says: made by its generator.
    for b in traces.BUILTIN.values():
        ms = b.make()
        expect = (traces.constant(b.levels_bps[0], round(b.duration_s * 1000)) if len(b.levels_bps) == 1
                  else traces.markov(list(b.levels_bps), b.dwell_s, b.duration_s, b.seed))
        assert ms == expect and abs(ms[-1] - b.duration_s * 1000) <= 1, b.name  # constant: within 1 ms
    steady = traces.Builtin("steady", "", (ONE_PER_MS,), 0.0, 2.5, 0).make()  # one level: its whole duration
    assert steady == list(range(1, 2501))


def test_a_frame_size_trace_is_read_or_each_problem_named(tmp_path):
    p = write(tmp_path, "# size type\n1200 I # a key frame # with a second mark\n\n300 P\n  250\n")
    assert traces.read_frames(p) == ([1200, 300, 250], [0])
    bad = "1 P x " + "y" * 60
    p = write(tmp_path, f"10\n{bad}\n")
    assert said(traces.read_frames, p) == ("source.file", f"{p}, line 2: expected a positive frame size in bytes and "
                                                          f"an optional frame type, got {bad[:40]!r}")
    for line in ("0 I", "1200 I extra"):  # no bytes; a word past the type
        p = write(tmp_path, f"{line}\n")
        assert said(traces.read_frames, p, "m.file") == (
            "m.file", f"{p}, line 1: expected a positive frame size in bytes and an optional frame type, got {line!r}")
    p = write(tmp_path, "# nothing\n")
    assert said(traces.read_frames, p) == ("source.file", f"{p}: no frames")
    assert said(traces.read_frames, tmp_path / "gone") == ("source.file", f"no such frame trace: {tmp_path / 'gone'}")


def test_an_svc_nal_unit_trace_is_read_or_each_problem_named(tmp_path):
    p = write(tmp_path, "# t bytes s t q\n0.0 500 0 0 0 # base # again\n\n0.04 200 1 2 3\n")
    assert traces.read_nal_units(p) == [[0.0, 500, 0, 0, 0], [0.04, 200, 1, 2, 3]]
    bad = "0.0 500 0 0 x " + "z" * 80
    p = write(tmp_path, f"{bad}\n")
    assert said(traces.read_nal_units, p) == (
        "source.file", f"{p}, line 1: expected 'time_s bytes spatial temporal quality', got {bad[:60]!r}")
    p = write(tmp_path, "0.0 500 0 0\n")
    assert said(traces.read_nal_units, p, "m.file")[0] == "m.file"
    p = write(tmp_path, "\n# only comments\n")
    assert said(traces.read_nal_units, p) == ("source.file", f"{p}: the trace holds no NAL units")
    assert said(traces.read_nal_units, tmp_path / "gone") == (
        "source.file", f"no such NAL-unit trace: {tmp_path / 'gone'}")


def test_relative_trace_files_are_anchored_to_the_scenarios_folder(tmp_path):
    data = {"links": [{"trace": {"file": "a.txt"}}, {"trace": {"file": "/abs/b.txt"}}, {"trace": {"file": 5}}],
            "rtp_sessions": [{"members": [{"source": {"type": "trace", "file": "f.txt"}}]}]}
    traces.anchor_files(data, tmp_path)
    assert data["links"][0]["trace"]["file"] == str((tmp_path / "a.txt").resolve())
    assert data["links"][1]["trace"]["file"] == "/abs/b.txt"
    assert data["links"][2]["trace"]["file"] == 5  # not text: left for validation to name
    assert data["rtp_sessions"][0]["members"][0]["source"]["file"] == str((tmp_path / "f.txt").resolve())


def test_a_constant_trace_spreads_its_opportunities_evenly():
    assert traces.constant(ONE_PER_MS) == list(range(1, 1001))  # 1 s unless told
    assert traces.constant(1.0, 1) == [ONE_PER_MS]  # 1 bit/s: one opportunity, due after 12,032 s
    ms = traces.constant(ONE_PER_MS / 2, 10)  # one opportunity every 2 ms
    assert ms == [2, 4, 6, 8, 10]
    assert traces.constant(ONE_PER_MS, 1) == [1]
    # Too slow for one opportunity in the time given: one, when it is due.
    assert traces.constant(ONE_PER_MS / 5000, 1000) == [5000]
    for rate, duration in ((0, 10), (-1, 10), (1e6, 0)):
        with pytest.raises(ValueError, match=r"^constant\(\): rate_bps and duration_ms must be positive$"):
            traces.constant(rate, duration)


def level_runs(ms: list[int], n_ms: int) -> tuple[np.ndarray, list[int]]:
    """Opportunities in each millisecond 1..n_ms, and how long each stretch
    at one count lasted (the chain's sojourns, the last one cut short)."""
    per_ms = np.bincount(ms, minlength=n_ms + 1)[1:]
    change = np.flatnonzero(np.diff(per_ms)) + 1
    edges = [0, *change.tolist(), n_ms]
    return per_ms, [b - a for a, b in zip(edges, edges[1:])]


def test_the_markov_chain_keeps_each_level_for_its_dwell_time_and_starts_in_the_middle():
    levels = [k * ONE_PER_MS for k in (1, 2, 3, 4, 5)]
    ms = traces.markov(levels, dwell_s=0.05, duration_s=200, seed=4)
    per_ms, runs = level_runs(ms, 200_000)
    assert ms[0] == 1 and ms[-1] == 200_000 and ms == sorted(ms)
    assert set(per_ms) <= {1, 2, 3, 4, 5} and per_ms.min() == 1 and per_ms.max() == 5
    assert per_ms[0] == 3  # the middle level first
    # Geometric sojourns of mean dwell_s: 50 ms (about 4,000 of them).
    assert len(runs) > 3000 and np.mean(runs[:-1]) == pytest.approx(50, rel=0.05)
    # Each step is to a neighbouring level.
    assert set(np.abs(np.diff(per_ms[np.flatnonzero(np.diff(per_ms)) + np.array([[0], [1]])], axis=0)).ravel()) == {1}
    # Two levels: the chain leaves each end for the other.
    ms = traces.markov(levels[:2], dwell_s=0.02, duration_s=100, seed=1)
    per_ms, runs = level_runs(ms, 100_000)
    assert per_ms[0] == 2 and np.mean(runs[:-1]) == pytest.approx(20, rel=0.05)


def test_a_fractional_level_draws_its_extra_opportunity_at_its_fraction():
    ms = traces.markov([1.5 * ONE_PER_MS], dwell_s=1.0, duration_s=100, seed=2)  # one level: it never moves
    per_ms = np.bincount(ms, minlength=100_001)[1:]
    assert set(per_ms[:-1]) == {1, 2} and per_ms.mean() == pytest.approx(1.5, abs=0.01)
    assert traces.mean_rate_bps(ms) == pytest.approx(1.5 * ONE_PER_MS, rel=0.01)


def test_a_pass_lasts_its_duration_even_when_its_last_millisecond_is_empty():
    ms = traces.markov([0.0, 1e3], dwell_s=10, duration_s=0.5, seed=1)
    assert ms[-1] == 500 and len(ms) <= 2
    assert traces.markov([0.0], dwell_s=1, duration_s=1, seed=1) == [1000]  # a level of zero is allowed
    # A last millisecond with its own opportunities gets no extra one.
    assert traces.markov([ONE_PER_MS], dwell_s=1, duration_s=0.01, seed=1) == list(range(1, 11))
    for args in (([], 1, 1), ([-1.0], 1, 1), ([1e6], 0, 1), ([1e6], 1, 0)):
        with pytest.raises(ValueError, match=r"^markov\(\): levels must be non-negative, dwell_s and duration_s "
                                             r"positive$"):
            traces.markov(*args, seed=1)


def test_resolving_fills_every_trace_given_by_name_or_file_and_only_those(tmp_path):
    frames = write(tmp_path, "1000 I\n500\n", "frames.txt")
    nal = write(tmp_path, "0.0 500 0 0 0\n", "nal.txt")
    trace = write(tmp_path, "1\n2\n", "link.txt")
    data = {"links": [5, {"trace": {"builtin": "constant-2mbps"}},
                      {"ab": {"trace": {"file": str(trace)}}, "ba": {"trace": {"opportunities_ms": [7]}}}],
            "rtp_sessions": [5, {"members": [5, {"source": {"type": "trace", "file": str(frames)}},
                                             {"source": {"type": "svc_trace", "file": str(nal)}},
                                             {"source": {"type": "synthetic"}}]}]}
    assert traces.needs_resolving(data)
    out = traces.resolve(data)
    assert "opportunities_ms" not in data["links"][1]["trace"]  # the input is left as it was
    assert out["links"][1]["trace"]["opportunities_ms"] == traces.builtin("constant-2mbps")
    assert out["links"][2]["ab"]["trace"]["opportunities_ms"] == [1, 2]
    assert out["links"][2]["ba"]["trace"] == {"opportunities_ms": [7]}  # given: kept
    members = out["rtp_sessions"][1]["members"]
    assert (members[1]["source"]["frames_bytes"], members[1]["source"]["key_frames"]) == ([1000, 500], [0])
    assert members[2]["source"]["nal_units"] == [[0.0, 500, 0, 0, 0]]
    assert members[3]["source"] == {"type": "synthetic"}
    assert not traces.needs_resolving(out) and traces.resolve(out) is out
    for filled in ({"links": [{"trace": {"file": "x", "opportunities_ms": [1]}}]},
                   {"rtp_sessions": [{"members": [{"source": {"type": "trace", "file": "x", "frames_bytes": [1]}}]}]},
                   {"rtp_sessions": [{"members": [{"source": {"type": "svc_trace", "file": "x",
                                                              "nal_units": [[0.0, 1, 0, 0, 0]]}}]}]},
                   {"links": [{"trace": {"rate": 1}}]}):
        assert not traces.needs_resolving(filled) and traces.resolve(filled) is filled
    both = {"links": [{}, {"ba": {"trace": {"file": str(trace), "builtin": "constant-2mbps"}}}]}
    assert said(traces.resolve, both) == ("links[1].ba.trace", "give file or builtin, not both")
    keyed = {"rtp_sessions": [{"members": [{}, {"source": {"type": "trace", "file": str(frames), "key_frames": [0]}}]}]}
    assert said(traces.resolve, keyed) == ("rtp_sessions[0].members[1].source.key_frames",
                                           "with `file`, key frames come from the trace (type I)")
    gone = {"links": [{"trace": {"file": str(tmp_path / "gone")}}]}
    assert said(traces.resolve, gone) == ("links[0].trace.file", f"no such trace file: {tmp_path / 'gone'}")
    # Every trace's problem at once, links' and media sources' alike.
    every = {"links": [gone["links"][0], both["links"][1], {"trace": {"builtin": "nope"}}],
             "rtp_sessions": keyed["rtp_sessions"]}
    with pytest.raises(ScenarioError) as e:
        traces.resolve(every)
    assert [p for p, _ in e.value.errors] == ["links[0].trace.file", "links[1].ba.trace", "links[2].trace.builtin",
                                              "rtp_sessions[0].members[1].source.key_frames"]


def test_traces_that_cannot_be_read_are_said_with_the_scenarios_other_problems_in_the_files_order(tmp_path):
    """A missing trace file does not hide the rest: the engine checks the
    scenario with that trace left empty, says nothing of the emptiness (the
    file's problem is the one to fix), and every problem comes in the
    order its field is written, a field left out after its table."""
    from mediasim import Scenario

    gone = str(tmp_path / "gone.txt")
    data = {"name": "x", "duration_s": -5, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "delay_ms": 10, "trace": {"file": gone}},
                      {"a": "a", "b": "zz", "delay_ms": 10, "trace": {"builtin": "nope"}},
                      {"a": "a", "b": "b", "delay_ms": 10, "ab": {"trace": {"builtin": "lte-walk"}},
                       "ba": {"trace": {"file": gone, "builtin": "lte-walk"}}}],
            "rtp_sessions": [{"name": "s", "session_bw_bps": 1e6, "media_payload_bytes": 1000, "members": [
                {"node": "a", "media": True, "source": {"type": "trace", "fps": -1, "file": gone, "key_frames": [3]}},
                {"node": "b", "media": True, "source": {"type": "svc_trace", "file": gone}},
                {"node": "q"}]}]}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data).validate()
    m = "rtp_sessions[0].members"
    assert e.value.errors == [
        ("duration_s", "must be a positive number (got -5)"),
        ("links[0].trace.file", f"no such trace file: {gone}"),
        ("links[0].b", "must be given (this field has no default)"),
        ("links[1].b", 'unknown node "zz"'),
        ("links[1].trace.builtin", "no builtin trace 'nope' (known: " + ", ".join(sorted(traces.BUILTIN)) + ")"),
        ("links[2].ba.trace", "give file or builtin, not both"),
        (f"{m}[0].source.fps", "must be a positive number (got -1)"),
        (f"{m}[0].source.file", f"no such frame trace: {gone}"),
        (f"{m}[0].source.key_frames", "with `file`, key frames come from the trace (type I)"),
        (f"{m}[1].source.file", f"no such NAL-unit trace: {gone}"),
        (f"{m}[2].node", 'unknown node "q"')]
    # At the same field, the engine's problem first, then the trace's.
    same = {**data, "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10,
                               "trace": {"file": gone, "builtin": "lte-walk"}}]}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(same).validate()
    assert e.value.errors[1:3] == [("links[0].trace", "give rate_bps or trace, not both"),
                                   ("links[0].trace", "give file or builtin, not both")]
    # With nothing else wrong, the traces' problems alone.
    ok = {**data, "duration_s": 5, "links": [{**data["links"][0], "b": "b"}], "rtp_sessions": []}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(ok).validate()
    assert e.value.errors == [("links[0].trace.file", f"no such trace file: {gone}")]
    # Where the engine's checks stop early, that error stays last.
    stops = {"nodes": [{"name": "a"}, {"name": "b"}, 5], **{k: v for k, v in ok.items() if k != "nodes"}}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(stops).validate()
    assert [p for p, _ in e.value.errors] == ["links[0].trace.file", "nodes[2]"]
    assert "the checks stop here" in e.value.errors[-1][1]


def test_a_fields_place_in_the_document_follows_its_tables_order_and_stops_where_the_path_leads_nowhere():
    from mediasim.scenario import _document_place

    data = {"b": 1, "a": [{"y": 1, "x": 2}, 7], "c": {"0": 5}}
    assert _document_place(data, "a[0].x") == (1, 0, 1)
    assert _document_place(data, "a[0].z") == (1, 0, 2)  # left out: after what its table holds
    assert _document_place(data, "a[1]") == (1, 1)
    assert _document_place(data, "a[2].x") == (1, 2)  # beyond the list: after it, and no further
    assert _document_place(data, "a[5].x") == (1, 2)
    assert _document_place(data, "a.x") == (1,)  # a name where a list is
    assert _document_place(data, "c[0]") == (2,)  # an index where a table is
    assert _document_place(data, "b.x.y") == (0,)  # into a number
    assert _document_place(data, "a[0]..x]") == ()  # no path at all
    assert _document_place(data, "") == ()


def test_traces_problems_alone_when_the_engine_finds_nothing_else_wrong():
    """The engine finds something wrong whenever a trace is left empty, so
    the function is checked alone: with a scenario the engine takes, the
    traces' problems are all there is."""
    import json

    from mediasim.scenario import Scenario, _with_the_engines_checks

    text = Scenario("x").node("a").to_json()
    e = _with_the_engines_checks(text, json.loads(text), [("links[0].trace.file", "no such trace file: t")], set())
    assert e.errors == [("links[0].trace.file", "no such trace file: t")]


def test_a_trace_already_filled_in_is_kept_and_its_file_not_read_again(tmp_path):
    """A resolved scenario (as a run's folder keeps it) runs again as it
    was, even once its files are gone; a source with neither file nor data
    is left for the engine to name."""
    gone = str(tmp_path / "gone")
    data = {"links": [{"trace": {"builtin": "constant-2mbps", "opportunities_ms": [5, 9]}},
                      {"trace": {"file": gone, "opportunities_ms": [3]}},
                      {"trace": {"builtin": "constant-12mbps"}}],
            "rtp_sessions": [{"members": [{"source": {"type": "trace", "file": gone, "frames_bytes": [9],
                                                      "key_frames": [0]}},
                                          {"source": {"type": "svc_trace", "file": gone,
                                                      "nal_units": [[0.0, 1, 0, 0, 0]]}},
                                          {"source": {"type": "trace"}}, {"source": {"type": "svc_trace"}}]}]}
    out = traces.resolve(data)
    assert [t["trace"].get("opportunities_ms") for t in out["links"]] == [[5, 9], [3], traces.builtin("constant-12mbps")]
    assert out["rtp_sessions"] == data["rtp_sessions"]



def test_line_ends_of_any_platform_are_read_alike(tmp_path):
    for end in (b"\n", b"\r\n", b"\r"):
        assert traces.read(write(tmp_path, end.join([b"1", b"5", b""]))) == [1, 5]
        assert traces.read_frames(write(tmp_path, end.join([b"900 I", b"300", b""]))) == ([900, 300], [0])
        assert traces.read_nal_units(write(tmp_path, end.join([b"0.0 900 0 0 0", b""]))) == [[0.0, 900, 0, 0, 0]]


def test_every_trace_reader_stops_at_the_size_limit_even_where_the_file_system_gives_no_size(tmp_path, monkeypatch):
    """A file beyond plain.MAX_FILE_BYTES is refused without being held:
    a regular file by its size, a device (its size is 0 to the file
    system; /dev/zero never ends) once one byte past the limit is read."""
    from mediasim import media, plain

    monkeypatch.setattr(plain, "MAX_FILE_BYTES", 1 << 20)
    at_limit = write(tmp_path, b"1\n" * (1 << 19), "at.txt")
    assert at_limit.stat().st_size == 1 << 20 and len(traces.read(at_limit)) == 1 << 19
    zero = tmp_path / "zero.txt"
    zero.symlink_to("/dev/zero")
    for p in (write(tmp_path, b"1\n" * (1 << 19) + b"1", "over.txt"), zero):
        assert said(traces.read, p) == ("trace.file", f"cannot read the trace file {p}: larger than 1 MiB")
        assert said(traces.read_frames, p) == ("source.file", f"cannot read the frame trace {p}: larger than 1 MiB")
        assert said(traces.read_nal_units, p) == (
            "source.file", f"cannot read the NAL-unit trace {p}: larger than 1 MiB")
        assert said(media.read_trace, p) == (str(p), "cannot read the trace: larger than 1 MiB")


def test_a_trace_is_written_whole_or_not_at_all_through_links_and_into_devices(tmp_path, monkeypatch):
    import os

    p = traces.write(tmp_path / "t.txt", [1, 2, 3])
    assert p.read_text() == "1\n2\n3\n" and sorted(x.name for x in tmp_path.iterdir()) == ["t.txt"]
    # A write that fails (a full disk) leaves the old trace, and nothing beside it.
    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        traces.write(p, [5, 6])
    monkeypatch.undo()
    assert p.read_text() == "1\n2\n3\n" and sorted(x.name for x in tmp_path.iterdir()) == ["t.txt"]
    # A link's target is written, the link kept; a device stays a device.
    link = tmp_path / "link.txt"
    link.symlink_to(p)
    traces.write(link, [7])
    assert link.is_symlink() and p.read_text() == "7\n"
    traces.write("/dev/null", [1])
    assert not Path("/dev/null").is_file() and Path("/dev/null").exists()
