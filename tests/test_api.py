"""The Python API: building, loading, results, Parquet."""

import json
import re

import pandas as pd
import pytest

import mediasim
from mediasim import Results
from mediasim.sweep import combine, replications, run_many


def test_builder_and_file_give_the_same_results(examples, tmp_path):
    sc = mediasim.Scenario("pair", duration_s=3).measure(packets=True)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=5)
    sc.flow("f", "poisson", src="a", dst="b", payload_bytes=500, rate_pps=100)
    import json

    path = tmp_path / "pair.json"
    path.write_text(json.dumps(sc.to_dict()))
    a = mediasim.run(sc, seed=2)
    b = mediasim.run(path, seed=2)
    assert a.packets.equals(b.packets)


def test_parquet_round_trip(examples, tmp_path):
    sc = mediasim.load_scenario(examples / "multicast_tree.yaml").measure(packets=True)
    res = mediasim.run(sc, seed=1, out=tmp_path / "r")
    back = Results.read_parquet(tmp_path / "r")
    assert back.meta["delivered"] == res.meta["delivered"]
    assert set(back.tables) == set(res.tables)
    assert back.flows.equals(res.flows)
    assert list(back.packets["receiver"].cat.categories) == list(res.packets["receiver"].cat.categories)


def test_a_damaged_run_folder_is_named_not_a_decoder_error(examples, tmp_path, monkeypatch):
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    mediasim.run(sc, seed=1, out=tmp_path / "r")
    meta = tmp_path / "r" / "meta.json"
    good = meta.read_bytes()
    (tmp_path / "r" / "flows.parquet").write_bytes(b"cut")
    back = Results.read_parquet(tmp_path / "r")
    with pytest.raises(ValueError, match=r"flows\.parquet: not a readable Parquet table .*the run folder is damaged"):
        back.flows
    for text, fragment in ((b"{cut", "not JSON"), (b"\xff", "not JSON"), (b"[1]", "not a run's metadata"),
                           (b'{"tables": 5}', "not a run's metadata")):
        meta.write_bytes(text)
        with pytest.raises(ValueError, match=f"meta.json: {fragment}.*the run folder is damaged"):
            Results.read_parquet(tmp_path / "r")
    # A device never ends: read one byte past the limit of any file read.
    from mediasim import plain

    meta.unlink()
    meta.symlink_to("/dev/zero")
    monkeypatch.setattr(plain, "MAX_FILE_BYTES", 1 << 20)
    with pytest.raises(ValueError) as e:
        Results.read_parquet(tmp_path / "r")
    assert str(e.value) == f"{meta}: cannot read (larger than 1 MiB); the run folder is damaged"
    meta.unlink()
    meta.write_bytes(good)
    assert Results.read_parquet(tmp_path / "r").links is not None


def test_a_run_read_back_is_read_table_by_table_and_pickles_with_its_data(examples, tmp_path):
    """read_parquet reads each table when it is first asked for; pickled
    (as a helper or a Dask worker sends it), a run read back carries its
    tables' data, not paths the receiver may not see."""
    import pickle
    import shutil

    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    res = mediasim.run(sc, seed=1, out=tmp_path / "r")
    back = Results.read_parquet(tmp_path / "r")
    assert back.flows.equals(res.flows)
    (tmp_path / "r" / "links.parquet").unlink()  # not read yet: read when asked for
    with pytest.raises(FileNotFoundError):
        back.links
    del back.tables["links"]
    sent = pickle.dumps(back)
    shutil.rmtree(tmp_path / "r")
    got = pickle.loads(sent)
    assert set(got.tables) == set(res.tables) - {"links"}
    for name in got.tables:
        pd.testing.assert_frame_equal(got.tables[name], res.tables[name])


def test_tables_are_built_when_first_read_and_kept(examples):
    import pickle

    from mediasim.results import _frame

    sc = mediasim.load_scenario(examples / "multicast_tree.yaml").measure(packets=True)
    res = mediasim.run(sc, seed=1)
    tables = res.tables
    built = lambda: {n for n, v in tables._items.items() if isinstance(v, pd.DataFrame)}  # noqa: E731
    assert built() == set() and len(tables) > 5
    assert "flows" in tables and "nothing" not in tables and built() == set(), "membership builds nothing"
    flows = res.flows
    assert built() == {"flows"} and res.flows is flows, "built once, then kept"
    # The same frame as building it from the engine's columns at once.
    from mediasim.runner import engine_run

    raw, meta = engine_run(sc, seed=1)
    assert flows.equals(_frame("flows", raw["flows"], json.loads(meta)))
    # A pickled Results (a worker's answer) keeps what is not built yet.
    back = pickle.loads(pickle.dumps(res))
    assert set(back.tables) == set(tables) and back.packets.equals(res.packets)
    assert dict(tables.items()).keys() == set(tables) and built() == set(tables)
    tables["extra"] = flows.head(1)
    del tables["extra"]
    assert "extra" not in tables


def test_replications_and_combine(examples):
    jobs = replications(examples / "dumbbell.toml", 3, seed=5, variant="base")
    results = run_many(jobs, workers=2, progress=False)
    flows = combine(results, "flows")
    assert list(flows.columns[:3]) == ["variant", "seed", "replication"]
    assert sorted(flows["replication"].unique()) == [0, 1, 2]
    assert len(flows) == 3 * 3


def test_tables_have_the_same_dtypes_full_or_empty_with_signed_counters():
    def pair(lossy):
        sc = mediasim.Scenario("pair", duration_s=2).measure(packets=True, trace=True)
        sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=5,
                                    **({"loss": {"type": "packet", "rate": 0.3}} if lossy else {}))
        return mediasim.run(sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=10), seed=1)

    full, empty = pair(True), pair(False)
    assert len(full.drops) > 0 and len(empty.drops) == 0
    for name in ("flows", "drops", "packets", "trace", "links", "queues", "loss_runs"):
        # (categoricals compare by kind: their categories differ)
        kinds = [t.tables[name].dtypes.astype(str).to_dict() for t in (full, empty)]
        assert kinds[0] == kinds[1], name
    f = full.flows
    assert f["sent"].dtype == "int64" and (f["received"] - f["sent"] < 0).all()
    assert isinstance(full.drops["reason"].dtype, pd.CategoricalDtype)
    assert list(full.drops["reason"].unique()) == ["link_loss"]
    t = full.trace
    assert isinstance(t["event"].dtype, pd.CategoricalDtype)
    on_links, at_nodes = t[t["event"].isin(["+", "-", "r", "d"])], t[t["event"] == "D"]
    assert on_links["node"].isna().all() and set(on_links["link_dir"]) == {"a-b:a->b"}
    assert at_nodes["link_dir"].isna().all() and set(at_nodes["node"]) == {"b"}


def test_application_tables_have_their_columns_whether_or_not_the_run_has_such_flows(examples):
    """A TCP table from a run without TCP has the columns and dtypes of one
    from a run with TCP (so code written for one works on the other)."""
    with_tcp = mediasim.run(examples / "tcp_web_and_voice.toml", seed=1)
    without = mediasim.run(mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"measure.series": True}))
    assert len(with_tcp.tcp) > 0 and len(without.tcp) == 0
    for name in ("tcp", "queue_classes"):
        assert with_tcp.tables[name].dtypes.astype(str).to_dict() == without.tables[name].dtypes.astype(str).to_dict()
    assert {"completion_time_s", "retransmissions", "srtt_ms"} <= set(without.tcp.columns)
    for name in ("rtp", "tfrc", "svc", "media_scaling", "rmtp"):
        assert len(without.table(name)) == 0 and "flow" in without.table(name).columns, name
    assert list(without.tcp_series.columns) == ["flow", "var", "time_ns", "value", "time_s"]
    with pytest.raises(AttributeError, match=r"not recorded \(measure.trace was off"):
        without.trace


def test_long_runs_report_progress_in_simulated_time(examples):
    from mediasim import _engine

    seen = []
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3000})
    _, meta = _engine.run(sc.to_json(), progress=lambda t, e: seen.append((t, e)))
    # Every 2^20 events, at the simulated time reached, in order.
    assert [e for _, e in seen] == [(k + 1) << 20 for k in range(len(seen))]
    assert len(seen) == json.loads(meta)["events"] >> 20
    assert all(0 < a < b < 3000 for (a, _), (b, _) in zip(seen, seen[1:]))
    # A failing display does not end the run...
    _, failing = _engine.run(sc.to_json(), progress=lambda t, e: 1 / 0)
    assert json.loads(failing)["events"] == json.loads(meta)["events"]

    # ... but a Ctrl-C raised inside it (the interpreter delivers a signal
    # that arrives while it draws there) ends the run at that report.
    def ctrl_c_at_the_second(t, e):
        if e == 2 << 20:
            raise KeyboardInterrupt

    at = re.escape(f"{seen[1][0]:.3f}")
    with pytest.raises(KeyboardInterrupt, match=rf"^run interrupted at simulated time {at} s$"):
        _engine.run(sc.to_json(), progress=ctrl_c_at_the_second)


@pytest.mark.parametrize("rows", [0, 1, 7, 5000])
def test_text_given_as_codes_converts_as_the_same_strings_would(rows, monkeypatch):
    """The engine gives coded text (reasons, sites, names) as (codes,
    names): the DataFrame column and the stored arrow column must be those
    of the strings themselves, categorical or not, with names that repeat
    and names no row uses."""
    import numpy as np
    import pyarrow as pa

    from mediasim import table_columns as tc

    names = ["s-d0:s->d0", "node:r0_1", "queue_overflow", "node:r0_1", "a", "unused"]
    codes = np.random.default_rng(rows).integers(0, 5, rows).astype(np.uint32)
    values = [names[c] for c in codes]
    for cat in (True, False):
        by_codes = {"x": tc.Names(codes, names, cat), "n": np.arange(rows)}
        by_text = {"x": tc.Text(values, cat), "n": np.arange(rows)}
        want = tc.to_frame(by_text)
        got = tc.to_frame(by_codes)
        pd.testing.assert_frame_equal(got, want)
        assert list(got.dtypes) == list(want.dtypes)
        if cat:
            assert list(got["x"].cat.categories) == sorted(set(values))
        for kept in (False, True):  # through pandas, then through the kept schema
            if not kept:
                monkeypatch.setattr(tc, "_SCHEMAS", {})
            assert tc.signature("t", by_codes) == tc.signature("t", by_text)
            assert tc.to_arrow("t", by_codes).equals(pa.Table.from_pandas(want, preserve_index=False),
                                                     check_metadata=True)


def test_coded_text_with_hundreds_of_names_converts_as_the_strings_would():
    """More than 127 names in use: the codes no longer fit 8 bits."""
    import numpy as np
    import pyarrow as pa

    from mediasim import table_columns as tc

    names = [f"node:r{i}" for i in range(400)]
    codes = np.random.default_rng(4).integers(0, 400, 20000).astype(np.uint32)
    by_codes = {"site": tc.Names(codes, names, True)}
    want = tc.to_frame({"site": tc.Text([names[c] for c in codes], True)})
    got = tc.to_frame(by_codes)
    pd.testing.assert_frame_equal(got, want)
    assert len(got["site"].cat.categories) > 128
    assert tc.to_arrow("t", by_codes).equals(pa.Table.from_pandas(want, preserve_index=False), check_metadata=True)


@pytest.mark.parametrize("rows", [0, 3])
def test_tables_convert_to_arrow_without_pandas_as_from_pandas_does(rows):
    """``to_arrow`` writes the schema (pandas' metadata included) and the
    columns' buffers itself: the very table ``pa.Table.from_pandas`` makes
    of the DataFrame, for every kind of column, with nulls where pandas
    has them (NaN, a missing count, code -1), text beyond ASCII, and
    categoricals on each side of the sizes where pandas widens its codes
    (an int8 holds codes of fewer than 127 categories, an int16 of fewer
    than 32,767)."""
    import numpy as np
    import pyarrow as pa

    from mediasim import table_columns as tc

    rng = np.random.default_rng(rows)
    text = ["a", "ö-β", "", "link:r1->r2"]
    cols = {
        "f": np.array([1.5, np.nan, -0.0, 2.0, np.inf, np.nan])[:rows],
        "i": np.arange(rows, dtype=np.int64) - 1,
        "u": np.arange(rows, dtype=np.uint32),
        "b": (np.arange(rows) % 2 == 0),
        "n": tc.Ints(np.arange(rows, dtype=np.int64), np.arange(rows) == 1),
        "t": tc.Text([text[j % 4] for j in range(rows)], False),
        "reason": tc.Text([text[(j + 1) % 4] for j in range(rows)], True),
        "site": tc.Names(np.array([2, 0, 2][:rows], dtype=np.uint32), ["x", "ö", "z"], True),
        "name": tc.Names(np.array([1, 1, 0][:rows], dtype=np.uint32), ["p", "ü"], False),
        "link": tc.Coded(np.array([0, -1, 1][:rows]), ["l0", "l1"]),
    }
    for n in (1, 126, 127, 128, 32766, 32767):
        cols[f"coded_{n}"] = tc.Coded(rng.integers(-1, n, rows), [f"c{j}" for j in range(n)])
    want = pa.Table.from_pandas(tc.to_frame(cols), preserve_index=False)
    assert tc.to_arrow("t", cols).equals(want, check_metadata=True)
    types = [want.schema.field(f"coded_{n}").type.index_type for n in (126, 127, 32766, 32767)]
    assert types == [pa.int8(), pa.int16(), pa.int16(), pa.int32()]


def test_a_run_that_writes_its_tables_never_imports_pandas(examples, tmp_path):
    """``mediasim run --out`` converts and prints its tables without
    pandas (importing it took more than half the command's time)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from mediasim.cli import main\n"
            f"main(['-q', 'run', {str(examples / 'calls.toml')!r}, '--out', {str(tmp_path / 'out')!r}],"
            " standalone_mode=False)\n"
            "assert 'pandas' not in sys.modules, 'pandas imported'\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "out" / "media.parquet").is_file()
    back = Results.read_parquet(tmp_path / "out")
    assert list(back.media["flow"]) == ["video/alice/rtp", "voice/alice/rtp"]


def test_a_run_prints_the_same_tables_whether_or_not_it_writes_them(examples, tmp_path):
    """With ``--out`` the printout comes from the Results' columns, without
    it from the engine's lists: the same text."""
    import re

    from click.testing import CliRunner

    from mediasim.cli import main

    lean = CliRunner().invoke(main, ["-q", "run", str(examples / "calls.toml")])
    full = CliRunner().invoke(main, ["-q", "run", str(examples / "calls.toml"), "--out", str(tmp_path / "o")])
    assert lean.exit_code == 0 and full.exit_code == 0, full.output
    wall = re.compile(r"in [0-9.]+ s wall")
    assert full.output.endswith(f"tables written to {tmp_path / 'o'}/\n")
    assert "Media:" in lean.output and "| voice/alice/rtp |" in lean.output
    assert wall.sub("", full.output).startswith(wall.sub("", lean.output))


def test_a_drop_log_comes_from_the_engine_as_codes(examples):
    """Reasons and sites of a drop log are codes into the run's names
    (a log can have millions of rows); the frame reads them as text."""
    from mediasim import _engine

    sc = mediasim.load_scenario(examples / "multicast_tree.yaml").measure(packets=True)
    raw, meta = _engine.run(sc.to_json(), seed=1)
    codes, names = raw["drops"]["site"]
    assert len(codes) == len(raw["drops"]["time_ns"]) > 0 and all(isinstance(n, str) for n in names)
    drops = Results.from_engine(raw, meta).drops
    assert list(drops["site"].astype(str)) == [names[c] for c in codes]
    assert set(drops["reason"].astype(str)) == {"link_loss", "receiver_loss"}
    assert {s.startswith("node:") for s in drops["site"].astype(str)} == {True, False}, "links and nodes"


def _same_columns(got, want, where):
    import numpy as np

    assert list(got) == list(want), where
    for k in want:
        a, b = got[k], want[k]
        assert a.dtype == b.dtype and a.shape == b.shape, (where, k, a.dtype, b.dtype)
        if a.dtype == object:
            # NaN (a missing code) is not equal to itself: compare as text.
            assert [repr(x) for x in a] == [repr(x) for x in b], (where, k)
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{where}: {k}")


@pytest.mark.parametrize("example", ["multicast_tree.yaml", "rtp_avpf_multicast.yaml", "dumbbell.toml",
                                     "rmtp_tree.yaml"])
def test_columns_are_the_frames_columns_as_numpy(examples, example, tmp_path):
    """``Results.columns`` gives what the DataFrame's ``to_numpy()`` gives
    for every table (packet log, series and trace on), whether the table
    came from the engine, was built already, or was read from Parquet; the
    arrays cannot be written (a DataFrame may share them)."""
    from mediasim import table_columns as tc

    sc = mediasim.load_scenario(examples / example).with_overrides({"duration_s": 4})
    sc.measure(packets=True, series=True, trace=True)
    res = mediasim.run(sc, seed=3, out=tmp_path / "r")
    fresh = mediasim.run(sc, seed=3)
    back = Results.read_parquet(tmp_path / "r")
    assert len(res.tables) >= 12
    for name in res.tables:
        want = tc.frame_to_numpy(res.table(name))
        got = fresh.columns(name)
        _same_columns(got, want, f"{example} {name} from the engine")
        _same_columns(res.columns(name), want, f"{example} {name} built")
        _same_columns(back.columns(name), want, f"{example} {name} from Parquet")
        for a in got.values():
            with pytest.raises(ValueError):
                a[:1] = a[:1]
    assert any(x != x for x in fresh.columns("trace")["node"]), "a missing code (NaN) was compared"


def test_columns_of_a_table_not_recorded_or_with_no_rows():
    sc = mediasim.Scenario("pair", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=5)
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, rate_bps=8e4)
    res = mediasim.run(sc)
    rmtp = res.columns("rmtp")
    assert list(rmtp) == list(res.rmtp.columns) and all(len(a) == 0 for a in rmtp.values())
    with pytest.raises(AttributeError, match="measure.packets"):
        res.columns("packets")
    assert list(res.columns("flows")["flow"]) == ["f"] and res.columns("flows")["sent"].dtype == "int64"


def test_a_scenario_of_the_wrong_kind_says_what_a_scenario_is(examples):
    for bad in (5, None, [1, 2]):
        with pytest.raises(TypeError, match=f"a scenario is a Scenario, a dict or a file's path \\(got {type(bad).__name__}"):
            mediasim.run(bad)
    with pytest.raises(TypeError, match="a field path is text"):
        mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({5: 1})


def test_to_parquet_writes_one_run_and_replaces_an_earlier_one_only_when_asked(examples, tmp_path):
    from mediasim import OutputFolderError

    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    res = mediasim.run(sc, seed=1)
    d = tmp_path / "r"
    assert res.to_parquet(d) == d
    assert sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) == sorted(
        [*(f"{n}.parquet" for n in res.tables), "meta.json"])
    assert Results.read_parquet(d).flows.equals(res.flows)
    other = mediasim.run(sc, seed=2)
    with pytest.raises(OutputFolderError):
        other.to_parquet(d)
    assert Results.read_parquet(d).meta["seed"] == 1
    (d / "stale.parquet").write_bytes(b"")
    other.to_parquet(d, overwrite=True)
    back = Results.read_parquet(d)
    assert back.meta["seed"] == 2 and not (d / "stale.parquet").exists()


def test_a_run_folder_holds_what_meta_json_lists_and_nothing_else(examples, tmp_path):
    import shutil

    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    res = mediasim.run(sc, seed=1, out=tmp_path / "r")
    d = tmp_path / "r"
    meta = json.loads((d / "meta.json").read_text())
    assert meta["tables"] == sorted(res.tables) and "packets" not in meta["tables"]
    # meta.json is indented two spaces and ends in a newline (diff-friendly,
    # the same bytes each time).
    text = (d / "meta.json").read_text()
    assert text == json.dumps(meta, indent=2) + "\n"
    # A file meta.json does not list is not this run's.
    shutil.copy(d / "flows.parquet", d / "packets.parquet")
    assert set(Results.read_parquet(d).tables) == set(res.tables)
    # A folder written before runs listed their tables: its files, less
    # those the metadata says were not recorded.
    (d / "meta.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "tables"}))
    assert set(Results.read_parquet(d).tables) == set(res.tables)
    (d / "meta.json").write_text(json.dumps({**{k: v for k, v in meta.items() if k != "tables"}, "packet_log": True}))
    assert set(Results.read_parquet(d).tables) == set(res.tables) | {"packets"}
    # A listed table's file missing, or no meta.json: the error names them.
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "links.parquet").unlink()
    with pytest.raises(FileNotFoundError, match=r"table file\(s\) links\.parquet listed in meta\.json are missing; "
                                                r"the folder is damaged"):
        Results.read_parquet(d)
    (d / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"r: not a run folder \(no meta\.json\)"):
        Results.read_parquet(d)
    # A file where the folder should be, a folder where meta.json should be.
    with pytest.raises(FileNotFoundError) as e:
        Results.read_parquet(d / "flows.parquet")
    assert str(e.value) == f"{d / 'flows.parquet'}: not a run folder (a file)"
    (d / "meta.json").mkdir()
    with pytest.raises(ValueError) as e:
        Results.read_parquet(d)
    assert str(e.value) == f"{d / 'meta.json'}: a folder, not a run's metadata; the run folder is damaged"


def test_table_files_are_the_same_bytes_whatever_the_order_of_the_metadata(examples):
    from mediasim.results import parquet_tables

    res = mediasim.run(mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3}), seed=1)
    shuffled = Results(meta=dict(reversed(list(res.meta.items()))), tables=res.tables)
    assert parquet_tables(shuffled) == parquet_tables(res)
    # Tables given as DataFrames (a Results built by hand) write the same.
    by_hand = Results(meta=res.meta, tables={n: res.table(n) for n in res.tables})
    assert parquet_tables(by_hand) == parquet_tables(res)


def test_asking_for_a_table_a_run_lacks_says_which_kind_of_lack(examples):
    from mediasim import TableNotFound

    empty = Results(meta={}, tables={})
    with pytest.raises(TableNotFound) as e:
        empty.table("xyzzy")
    assert str(e.value) == "'xyzzy' is not a mediasim table; the run has: no tables"
    res = mediasim.run(mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3}), seed=1)
    have = ", ".join(res.tables)
    with pytest.raises(TableNotFound) as e:
        Results(meta=res.meta, tables={n: res.table(n) for n in res.tables if n != "tcp"}).table("tcp")
    assert str(e.value) == f"tcp: the run has no such table; the run has: {have.replace('tcp, ', '')}"
    with pytest.raises(TableNotFound) as e:
        res.table("rtp_serie")
    assert "is not a mediasim table (did you mean 'rtp_series', 'rmtp_series', 'tcp_series'?); the run has" in str(e.value)
    with pytest.raises(TableNotFound, match=r"tcp_series: not recorded \(measure.series was off; set it to true in "
                                            r"the scenario, or run with --series\)"):
        Results(meta={"series_log": False}, tables={}).table("tcp_series")


def test_every_time_in_nanoseconds_has_its_seconds_and_a_packet_its_delay(examples):
    import numpy as np

    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    res = mediasim.run(sc.measure(packets=True, series=True, queue_sample_ms=100), seed=1)
    seen = 0
    for name in res.tables:
        cols = res.columns(name)
        for k in [k for k in cols if k.endswith("_ns")]:
            if len(cols[k]):
                seen += 1
                ns = cols[k].astype(np.float64)
                assert np.array_equal(np.isnan(cols[k[:-3] + "_s"]), np.isnan(ns)), (name, k)
                ok = ~np.isnan(ns)
                assert np.array_equal(cols[k[:-3] + "_s"][ok], ns[ok] * 1e-9), (name, k)
    assert seen == 3  # the packet log's two and the queue samples'
    p = res.columns("packets")
    got = ~np.isnan(p["recv_ns"].astype(np.float64))
    assert got.any()
    want = (p["recv_ns"][got].astype(np.int64) - p["sent_ns"][got].astype(np.int64)) / 1e6
    assert np.allclose(p["delay_ms"][got], want, rtol=0, atol=1e-9)


def test_a_coded_column_read_back_gets_every_one_of_the_engine_s_names():
    from mediasim.results import _with_codes

    meta = {"coded_columns": {"t": {"c": "k", "other": "k"}}, "codes": {"k": ["a", "b", "c"]}}
    df = pd.DataFrame({"c": pd.Categorical(["b", "a", "b"]), "x": [1, 2, 3]})
    got = _with_codes(df, "t", meta)
    assert list(got["c"].cat.categories) == ["a", "b", "c"]
    assert list(got["c"]) == ["b", "a", "b"] and list(got["c"].cat.codes) == [1, 0, 1]
    assert got["c"].cat.categories.dtype == pd.Index(["a"], dtype=str).dtype
    # No rows: a Parquet file keeps no categories.
    empty = _with_codes(pd.DataFrame({"c": pd.Categorical([])}), "t", meta)
    assert list(empty["c"].cat.categories) == ["a", "b", "c"] and len(empty) == 0
    # Left alone: all the names there already, another table, names not
    # given, a column not coded as categories.
    full = pd.DataFrame({"c": pd.Categorical(["c"], categories=["a", "b", "c"])})
    assert _with_codes(full.copy(), "t", meta)["c"].equals(full["c"])
    for table, m in (("u", meta), ("t", {"coded_columns": meta["coded_columns"]})):
        assert list(_with_codes(pd.DataFrame({"c": pd.Categorical(["b"])}), table, m)["c"].cat.categories) == ["b"]
    assert list(_with_codes(pd.DataFrame({"c": ["b"]}), "t", meta)["c"]) == ["b"]


def test_a_data_frame_converts_to_arrow_as_from_pandas_does():
    import numpy as np
    import pyarrow as pa

    from mediasim.results import _arrow_table

    frames = [
        pd.DataFrame({"i": np.array([1, 2], dtype=np.int8), "f": [0.5, np.nan], "b": [True, False],
                      "n": pd.array([1, None], dtype="Int64"), "c": pd.Categorical(["x", "y"]),
                      "s": pd.Series(["p", None], dtype="str")}),
        pd.DataFrame({"f": np.array([], dtype=np.float32), "c": pd.Categorical([])}),
        pd.DataFrame({"o": [None, "a"]}),  # Python objects: typed by their values
    ]
    for df in frames * 2:  # the second time through the kept schema
        want = pa.Table.from_pandas(df, preserve_index=False)
        got = _arrow_table(df)
        assert got.equals(want, check_metadata=True), (df.dtypes, got.schema, want.schema)
        # NaN among the floats becomes null, as from_pandas makes it.
        assert [c.null_count for c in got.columns] == [c.null_count for c in want.columns]
    # Names repeated: refused as from_pandas refuses them.
    with pytest.raises(ValueError, match="Duplicate column names"):
        _arrow_table(pd.DataFrame([[1, 2]], columns=["a", "a"]))
