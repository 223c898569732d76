"""Inputs a user can type that once crashed or ate the machine end in a
ScenarioError naming the file or the field (issue 12): text that is not
UTF-8, values JSON cannot hold, deep nesting, YAML alias bombs, pcap
without a folder, rates that round to nothing, and build-time problems
that `validate` used to miss."""

import datetime
import json
import re

import pytest
from click.testing import CliRunner

import mediasim
from mediasim.cli import main
from mediasim.plain import MAX_DEPTH, MAX_NODES

BASE_YAML = """name: x
duration_s: 1.0
nodes: [{name: a}, {name: b}]
links: [{a: a, b: b, rate_bps: 1.0e6, delay_ms: 1}]
"""


def write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return p


def fails(path_or_sc, fragment, field=None):
    with pytest.raises(mediasim.ScenarioError) as e:
        mediasim.run(path_or_sc, seed=1)
    assert fragment in str(e.value), str(e.value)
    if field is not None:
        assert any(p == field for p, _ in e.value.errors), e.value.errors
    return e.value


def test_text_that_is_not_utf8_names_the_file(tmp_path):
    p = write(tmp_path, "latin.yaml", BASE_YAML.encode() + b"description: caf\xe9\n")
    fails(p, "not UTF-8", str(p))


def read_file_says(p) -> tuple[str, str]:
    from mediasim.plain import read_file

    with pytest.raises(mediasim.ScenarioError) as e:
        read_file(p)
    [said] = e.value.errors
    return said


def test_each_problem_of_a_scenario_file_is_said_whole(tmp_path, monkeypatch):
    from mediasim import plain

    n = len(BASE_YAML.encode()) + len("description: caf")
    p = write(tmp_path, "latin.yml", BASE_YAML.encode() + b"description: caf\xe9s\n")
    assert read_file_says(p) == (str(p), f"not UTF-8 text (byte {n}: b'\\xe9')")
    assert read_file_says(tmp_path) == (str(tmp_path), "is a folder, not a file")
    for name, text, got in (("list.json", "[1, 2]", "a list"), ("text.json", '"x"', "text"),
                            ("number.yaml", "5", "a number"), ("yes.yaml", "true", "true or false"),
                            ("empty.yaml", "", "nothing: the file is empty")):
        assert read_file_says(write(tmp_path, name, text)) == (
            str(tmp_path / name), f"must be a table of fields (got {got})")
    path, msg = read_file_says(write(tmp_path, "bad.json", '{"name": }'))
    assert (path, msg) == (str(tmp_path / "bad.json"), "cannot parse: Expecting value: line 1 column 10 (char 9)")
    with pytest.raises(FileNotFoundError) as e:
        plain.read_file(tmp_path / "gone.yml")
    assert str(e.value) == f"scenario file not found: {tmp_path / 'gone.yml'}"
    # .yml is YAML; the size limit counts bytes, a file at the limit is read.
    assert plain.read_file(write(tmp_path, "s.yml", BASE_YAML))["name"] == "x"
    monkeypatch.setattr(plain, "MAX_FILE_BYTES", 3 << 20)
    at_limit = write(tmp_path, "big.json", b'{"description": "' + b"x" * ((3 << 20) - 19) + b'"}')
    assert at_limit.stat().st_size == 3 << 20 and plain.read_file(at_limit)["description"][0] == "x"
    over = write(tmp_path, "bigger.json", at_limit.read_bytes() + b" ")
    assert read_file_says(over) == (str(over), "larger than 3 MiB")
    # A device's size is 0 to the file system, and /dev/zero never ends: it
    # is read one byte past the limit, no further.
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    assert read_file_says(zero) == (str(zero), "larger than 3 MiB")
    # The format is known from the name before anything is read.
    assert read_file_says("/dev/zero") == ("/dev/zero", "unknown file format '' "
                                           "(scenario and campaign files are .json, .toml, .yaml or .yml)")


@pytest.mark.parametrize("name,content,fragment", [
    ("binary.yaml", BASE_YAML + "description: !!binary aGVsbG8=\n", "no JSON equivalent"),
    ("set.yaml", BASE_YAML + "description: !!set {a: null}\n", "no JSON equivalent"),
    ("stamp.yaml", BASE_YAML + "description: !!timestamp 2001-12-14\n", "no JSON equivalent"),
])
def test_yaml_tags_json_cannot_hold_are_refused(tmp_path, name, content, fragment):
    fails(write(tmp_path, name, content), fragment)


@pytest.mark.parametrize("name,content", [
    ("twice.yaml", BASE_YAML + "duration_s: 10.0\n"),
    ("nested.yaml", BASE_YAML.replace("{name: a}", "{name: a, name: c}")),
    ("twice.json", '{"name": "x", "duration_s": 1, "nodes": [], "links": [], "duration_s": 10}'),
])
def test_a_key_written_twice_is_refused_not_silently_replaced(tmp_path, name, content):
    fails(write(tmp_path, name, content), "appears twice")


@pytest.mark.parametrize("text,said", [
    ("a: 1\nb: !!binary aGVsbG8=\n", "line 2, column 4: the tag tag:yaml.org,2002:binary has no JSON equivalent "
                                     "(scenarios hold numbers, text, lists and tables)"),
    ("nodes: [{name: a, name: c}]\n", "line 1, column 19: the key 'name' appears twice (the later would silently "
                                      "replace the earlier)"),
    ("a: [1, 2\n", "line 2, column 1: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence "
                   "from line 1, column 4)"),
    ("a: b: c\n", "line 1, column 5: mapping values are not allowed here"),
    ('a: "\x01"\n', "the character at position 5 cannot be read: special characters are not allowed"),
])
def test_a_yaml_problem_is_said_on_one_line_at_its_line_and_column(tmp_path, text, said):
    p = write(tmp_path, "s.yaml", text)
    assert read_file_says(p) == (str(p), f"cannot parse: {said}")


def test_a_yaml_error_without_a_place_is_said_as_pyyaml_says_it():
    import yaml

    from mediasim.plain_yaml import problem

    assert problem(yaml.YAMLError("no document")) == "no document"


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path):
    from mediasim.plain import read_file

    p = write(tmp_path, "merge.yaml", "base: &b {rate_bps: 1, delay_ms: 2}\nlink:\n  <<: *b\n  rate_bps: 3\n")
    assert read_file(p)["link"] == {"rate_bps": 3, "delay_ms": 2}
    # A key written twice after the merge key is still refused.
    p = write(tmp_path, "merge2.yaml", "base: &b {rate_bps: 1}\nlink:\n  <<: *b\n  delay_ms: 2\n  delay_ms: 3\n")
    fails(p, "the key 'delay_ms' appears twice (the later would silently replace the earlier)", str(p))


def test_an_override_value_nested_too_deeply_is_named(examples, tmp_path):
    deep = "[" * 100_000
    for args in (["validate", str(examples / "dumbbell.toml"), "--set", f"duration_s={deep}"],
                 ["sweep", str(examples / "dumbbell.toml"), "--vary", f"duration_s={deep}", "--out",
                  str(tmp_path / "never")]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert f"duration_s: nested too deeply (at most {MAX_DEPTH} levels)" in r.output
    assert not (tmp_path / "never").exists()
    # A number of thousands of digits: Python will not read it, and says so
    # with advice about its own settings.
    r = CliRunner().invoke(main, ["validate", str(examples / "dumbbell.toml"), "--set", "duration_s=" + "9" * 5000])
    assert r.exit_code == 2 and "Traceback" not in r.output and "set_int_max_str_digits" not in r.output, r.output
    assert "duration_s: a number of more than 4300 digits (whole numbers in a scenario stop below 2^64)" \
        in r.output, r.output


def test_a_yaml_date_stays_text_and_the_engine_names_the_field(tmp_path):
    p = write(tmp_path, "date.yaml", BASE_YAML.replace("duration_s: 1.0", "duration_s: 2024-01-01"))
    fails(p, "duration_s", "duration_s")


def test_a_toml_date_names_the_field(tmp_path):
    p = write(tmp_path, "date.toml", 'name = "x"\nduration_s = 1979-05-27\nnodes = []\nlinks = []\n')
    fails(p, "not a scenario value", "duration_s")


def test_deep_nesting_in_a_file_or_in_code(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    p = write(tmp_path, "deep.json", '{"name": "x", "duration_s": 1, "nodes": ' + deep + "}")
    fails(p, "nested too deeply", str(p))
    sc = mediasim.Scenario("x", duration_s=1)
    x: list = []
    sc.data["description"] = x
    for _ in range(MAX_DEPTH + 5):
        x.append([])
        x = x[0]
    fails(sc, "nested too deeply")


def test_a_scenarios_copy_shares_nothing_that_can_change():
    from mediasim import plain

    trace = [[0.0, 1e6], [30.0, 0.6e6]]
    sc = mediasim.Scenario.from_dict({"name": "x", "duration_s": 1, "nodes": [{"id": "a", "tags": ("t", [1])}],
                                      "links": [], "steps": trace, "same": trace, "none": None, "on": True,
                                      "pair": ("u", [2])})
    d = sc.to_dict()
    assert d == sc.data and d["nodes"][0]["tags"] == ("t", [1]) and d["pair"] == ("u", [2])
    # Tables and lists, and those inside a tuple, are new; text and numbers are immutable and shared.
    assert d["steps"] is not sc.data["steps"] and d["steps"][1] is not sc.data["steps"][1]
    assert d["nodes"][0]["tags"][1] is not sc.data["nodes"][0]["tags"][1]
    d["steps"][1][1] = 0.3e6
    assert sc.data["steps"][1][1] == 0.6e6 and trace[1][1] == 0.6e6
    # Deeper than plain data may go, it still copies (and check names the depth).
    deep: list = []
    x = deep
    for _ in range(plain.MAX_DEPTH + 5):
        x.append([])
        x = x[0]
    copied = plain.copy_of(deep)
    assert copied == deep and copied is not deep
    # A table or list that holds itself: copied down to the limit, then as deepcopy copies a cycle.
    loop: list = []
    loop.append(loop)
    cycle: dict = {}
    cycle["self"] = cycle
    copied = plain.copy_of({"loop": loop, "cycle": cycle})
    inner = copied["loop"]
    for _ in range(plain.MAX_DEPTH):
        inner = inner[0]
    assert inner is inner[0] and inner is not loop


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    p = write(tmp_path, "bomb.yaml", BASE_YAML + "description:\n  " + "\n  ".join(lines) + "\n")
    assert p.stat().st_size < 2000  # 10^10 strings once expanded
    fails(p, f"more than {MAX_NODES:,} values", str(p))


def test_the_limits_on_plain_data_hold_exactly_at_their_bounds(monkeypatch):
    """Counted as the docs say: every value, tables and lists included, and
    nesting from 0 at the top; each problem at its field's path, or at the
    scenario's name at the top."""
    from mediasim import plain

    def says(data, *where) -> str:
        with pytest.raises(mediasim.ScenarioError) as e:
            plain.check(data, *where)
        [(path, msg)] = e.value.errors
        return f"{path}: {msg}"

    monkeypatch.setattr(plain, "MAX_NODES", 5)
    plain.check({"a": [1, 2, 3]})  # 5 values: the table, the list and its three items
    assert says({"a": [1, 2, 3, 4]}) == "scenario: more than 5 values once expanded (YAML aliases?)"
    assert says({"a": [1, 2, 3, 4]}, "calls.yaml") == "calls.yaml: more than 5 values once expanded (YAML aliases?)"
    monkeypatch.setattr(plain, "MAX_NODES", 1000)
    monkeypatch.setattr(plain, "MAX_DEPTH", 3)
    plain.check({"a": {"b": {"c": 1}}})
    plain.check([[[1]]])
    assert says({"a": {"b": {"c": {"d": 1}}}}) == "a.b.c.d: nested too deeply (at most 3 levels)"
    assert says({"a": [[[1]]]}) == "a[0][0][0]: nested too deeply (at most 3 levels)"
    assert says([[[[1]]]]) == "[0][0][0][0]: nested too deeply (at most 3 levels)"
    assert says({1: "x"}) == "scenario: key 1 is not text"
    assert says({"a": {2: "x"}}, "s.toml") == "a: key 2 is not text"
    assert says({"a": 2 ** 64}) == f"a: {2 ** 64} is too large (whole numbers stop below 2^64)"
    assert says(b"x", "s") == "s: a bytes is not a scenario value (numbers, text, lists and tables only)"
    plain.check({"a": [True, None, "x", 1.5, float("nan"), -float("inf"), 2 ** 64 - 1, -(2 ** 64) + 1]})
    # Checking goes on past a value that passes, a NaN included.
    assert says({"b": {3: "x"}, "a": float("nan")}) == "b: key 3 is not text"
    assert says({"b": {4: "x"}, "a": True}) == "b: key 4 is not text"


def test_a_file_of_an_unknown_format_or_an_escape_beyond_unicode_is_named(tmp_path):
    p = write(tmp_path, "s.ini", "[x]\n")
    assert read_file_says(p) == (
        str(p), "unknown file format '.ini' (scenario and campaign files are .json, .toml, .yaml or .yml)")
    for escape in ("\\U00110000", "\\U7fffffff", "\\Uffffffff"):  # chr()'s ValueError, then its OverflowError
        p = write(tmp_path, "s.yaml", f'name: "{escape}"\n')
        assert read_file_says(p) == (str(p), "cannot parse: a character escape beyond U+10FFFF, the last in Unicode")


def test_python_values_json_cannot_hold_name_their_field():
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a", note=datetime.date(2024, 1, 1))
    fails(sc, "date is not a scenario value", "nodes[0].note")
    sc = mediasim.Scenario("x", duration_s=1)
    sc.data["tags"] = {1, 2}
    fails(sc, "set is not a scenario value", "tags")


def test_pcap_without_a_folder_is_named(tmp_path):
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=1)
    sc.measure(pcap=True)
    fails(sc, "output folder", "measure.pcap")
    mediasim.run(sc, seed=1, out=tmp_path)  # with one it works
    assert (tmp_path / "pcap").is_dir()


def test_a_direction_rate_below_one_bit_per_second_is_named():
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=1, ab={"rate_bps": 0.3})
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=10)
    fails(sc, "at least 1 bit/s", "links[0].ab.rate_bps")


def test_validate_runs_the_build_time_checks_too(tmp_path):
    # No route from a to c: validation used to say valid and run refused.
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a").node("b").node("c").link("a", "b", rate_bps=1e6, delay_ms=1)
    sc.flow("f", "cbr", src="a", dst="c", payload_bytes=100, interval_ms=10)
    with pytest.raises(mediasim.ScenarioError, match="no route"):
        sc.validate()
    p = write(tmp_path, "noroute.json", sc.to_json())
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code != 0 and "no route" in r.output and "Traceback" not in r.output


def test_the_cli_reports_bad_files_without_a_traceback(tmp_path):
    for name, content in [("latin.yaml", BASE_YAML.encode() + b"description: caf\xe9\n"),
                          ("deep.json", '{"nodes": ' + "[" * 50_000 + "]" * 50_000 + "}"),
                          ("set.yaml", BASE_YAML + "x: !!set {a: null}\n"),
                          # (run's progress bar reads duration_s before the engine does)
                          ("date.yaml", BASE_YAML.replace("duration_s: 1.0", "duration_s: 2024-01-01")),
                          ("noduration.yaml", BASE_YAML.replace("duration_s: 1.0", ""))]:
        p = write(tmp_path, name, content)
        for cmd in (["validate", str(p)], ["run", str(p)]):
            r = CliRunner().invoke(main, cmd)
            assert r.exit_code != 0, (cmd, r.output)
            assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit), \
                (cmd, r.output, r.exception)


def test_the_campaign_command_names_a_missing_campaign_file_without_a_traceback(tmp_path):
    r = CliRunner().invoke(main, ["campaign", str(tmp_path / "gone.toml")])
    assert r.exit_code == 2 and r.output == f"error: {tmp_path / 'gone.toml'}: no such campaign file\n", r.output


@pytest.mark.parametrize("value,said", [
    (2 ** 64, "18446744073709551616 is too large (whole numbers stop below 2^64)"),
    (-(2 ** 64), "-18446744073709551616 is too large (whole numbers stop below 2^64)"),
    # Python will not write out 5,000 digits: their count is said.
    (10 ** 4999, "a number of about 5000 digits is too large (whole numbers stop below 2^64)"),
    # Written out up to 256 bits, counted beyond.
    (2 ** 256 - 1, f"{2 ** 256 - 1} is too large (whole numbers stop below 2^64)"),
    (2 ** 256, "a number of about 78 digits is too large (whole numbers stop below 2^64)"),
], ids=["2^64", "-2^64", "5000 digits", "2^256-1", "2^256"])
def test_a_whole_number_past_64_bits_is_named_with_its_field(value, said):
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a", weight=value)
    e = fails(sc, said, "nodes[0].weight")
    assert e.errors == [("nodes[0].weight", said)]


@pytest.mark.parametrize("name,text", [
    ("big.json", '{"name": "x", "duration_s": 1%s}'),
    ("big.toml", 'name = "x"\nduration_s = 1%s\n'),
    ("big.yaml", "name: x\nduration_s: 1%s\n"),
])
def test_a_number_of_thousands_of_digits_in_a_file_is_named_without_pythons_advice(tmp_path, name, text):
    p = write(tmp_path, name, text % ("0" * 5000))
    e = fails(p, "cannot parse: a number of more than 4300 digits (whole numbers in a scenario stop below 2^64)",
              str(p))
    assert "sys.set_int_max_str_digits" not in str(e)


def test_a_number_past_a_float_is_named_alone_without_its_stand_in(examples):
    # 1e999 reads as inf. The field is set aside with a stand-in (1) so
    # that the rest is checked, and the flows starting after 1 s must not
    # be reported against that stand-in.
    r = CliRunner().invoke(main, ["validate", str(examples / "dumbbell.toml"), "--set", "duration_s=1e999"])
    assert r.exit_code != 0 and r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "duration_s: must be a finite number (got inf)" in r.output, r.output
    assert "duration_s = " not in r.output and "Traceback" not in r.output, r.output


def two_nodes(**measure):
    sc = mediasim.Scenario("x", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e9, delay_ms=1)
    if measure:
        sc.measure(**measure)
    return sc


@pytest.mark.parametrize("build,field,fragment", [
    (lambda sc: sc.flow("f", "poisson", src="a", dst="b", payload_bytes=100, rate_pps=1e12),
     "flows[0].rate_pps", "packets under 1 us apart"),
    (lambda sc: sc.flow("f", "poisson", src="a", dst="b", payload_bytes=100, rate_bps=1e13),
     "flows[0].rate_bps", "packets under 1 us apart"),
    (lambda sc: sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=1e-7),
     "flows[0].interval_ms", "at least 0.001 ms"),
    (lambda sc: sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, rate_bps=1e13),
     "flows[0].rate_bps", "packets under 1 us apart"),
    (lambda sc: sc.flow("f", "tcp", src="a", dst="b", tcp={"min_rto_ms": 1e-6, "max_rto_ms": 1e-6}),
     "flows[0].tcp.min_rto_ms", "at least 0.001 ms"),
    (lambda sc: sc.measure(queue_sample_ms=1e-6), "measure.queue_sample_ms", "at least 0.001 ms"),
    (lambda sc: sc.data.setdefault("rtp_sessions", []).append(
        {"name": "s", "members": [{"node": "a", "media": True}, {"node": "b"}], "session_bw_bps": 1e15,
         "media_payload_bytes": 100}), "rtp_sessions[0].session_bw_bps", "under 1 us"),
])
def test_intervals_that_round_to_nothing_are_named(build, field, fragment):
    sc = two_nodes()
    build(sc)
    fails(sc, fragment, field)


def busy(duration_s=100.0):
    sc = mediasim.Scenario("busy", duration_s=duration_s)
    sc.node("a").node("b").link("a", "b", rate_bps=1e8, delay_ms=1)
    sc.flow("f", "poisson", src="a", dst="b", payload_bytes=100, rate_pps=1e5)
    return sc


def test_max_events_ends_the_run_cleanly_with_every_packet_accounted_for():
    from conftest import assert_balanced

    with pytest.warns(mediasim.RunStoppedEarly, match="max_events 50000 reached"):
        res = mediasim.run(busy(), seed=1, max_events=50_000)
    assert res.meta["events"] == 50_000
    assert res.meta["end_ns"] < 100e9
    assert "max_events" in res.meta["stopped_early"]
    assert_balanced(res)
    assert res.flows["received"].sum() > 0
    # Without a budget the same run is not marked.
    full = mediasim.run(busy(1.0), seed=1)
    assert full.meta["stopped_early"] is None


def test_wall_and_memory_budgets_end_the_run_with_what_was_measured():
    with pytest.warns(mediasim.RunStoppedEarly, match="max_wall_s"):
        res = mediasim.run(busy(10_000.0), seed=1, max_wall_s=0.5)
    assert 0 < res.meta["end_ns"] < 10_000e9 and res.flows["received"].sum() > 0
    with pytest.warns(mediasim.RunStoppedEarly, match="max_memory_mb"):
        res = mediasim.run(busy(10_000.0), seed=1, max_memory_mb=1.0)  # any process holds more
    assert res.meta["end_ns"] < 10_000e9


def test_budgets_from_the_command_line(tmp_path):
    p = write(tmp_path, "busy.json", busy(10_000.0).to_json())
    r = CliRunner().invoke(main, ["run", str(p), "--max-events", "20000", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    reached_s = meta["end_ns"] / 1e9
    assert 0 < reached_s < 10_000
    assert r.stderr == (f"warning: run stopped early: max_events 20000 reached at simulated {reached_s} s; "
                        "the tables cover the time up to there\n")
    assert r.stdout.startswith(f"# busy: {reached_s:g} of 10000.0 s (stopped early) simulated, seed 0, replication 0\n")
    assert (tmp_path / "o" / "flows.parquet").exists()
    # Wall time and memory are looked at every 2^20 events.
    for option, value, why in (("--max-wall", "1e-9", r"max_wall_s 0\.000000001 reached"),
                               ("--max-memory", "1", r"max_memory_mb 1 reached \(\d+ MiB resident\)")):
        r = CliRunner().invoke(main, ["run", str(p), option, value])
        assert r.exit_code == 0, r.output
        assert re.fullmatch(f"warning: run stopped early: {why} at simulated [0-9.]+ s; the tables cover the time "
                            "up to there\n", r.stderr), r.stderr
        assert "(stopped early) simulated" in r.stdout.split("\n")[0]
    r = CliRunner().invoke(main, ["run", str(p), "--max-wall", "0"])
    assert r.exit_code != 0 and "Traceback" not in r.output


@pytest.mark.parametrize("build,field,fragment", [
    (lambda sc: [sc.node(f"n{i}") for i in range(11)], "nodes", "more than limits.max_nodes = 10"),
    (lambda sc: [sc.flow(f"f{i}", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=10, src_port=1000 + i,
                         dst_port=2000 + i) for i in range(11)], "flows", "more than limits.max_flows = 10"),
])
def test_size_limits_name_the_limit_to_raise(build, field, fragment):
    sc = two_nodes()
    sc.data["limits"] = {"max_nodes": 10, "max_flows": 10}
    build(sc)
    fails(sc, fragment, field)
    sc.data["limits"] = {"max_nodes": 100, "max_flows": 100}
    mediasim.run(sc, seed=1)  # raised, it runs


def test_trace_and_pcap_stop_at_their_limits(tmp_path):
    sc = busy(1.0)
    sc.data["limits"] = {"max_trace_rows": 1000, "max_pcap_bytes": 100_000}
    sc.measure(trace=True, pcap=True)
    with pytest.warns(mediasim.OutputTruncated) as w:
        res = mediasim.run(sc, seed=1, out=tmp_path)
    assert {str(x.message).split(": ")[1].split(" ")[0] for x in w} == {"trace", "pcap"}
    assert len(res.trace) == 1000 and res.meta["trace_truncated"] and res.meta["pcap_truncated"]
    size = sum(p.stat().st_size for p in (tmp_path / "pcap").glob("*.pcap"))
    assert 90_000 < size <= 100_000 + 24  # records up to the limit, plus the file header
    import dpkt
    with open(tmp_path / "pcap" / "a-b.pcap", "rb") as fh:
        assert len(list(dpkt.pcap.Reader(fh))) > 0  # a valid file
    assert res.flows["received"].sum() > 50_000  # the run itself went on


def test_a_cyclic_python_structure_is_refused_not_looped_on():
    sc = mediasim.Scenario("x", duration_s=1)
    loop: dict = {}
    loop["self"] = loop
    sc.data["description"] = loop
    fails(sc, "nested too deeply")


def test_seeds_and_replications_are_the_engines_64_bit_integers(examples):
    import numpy as np

    path = examples / "dumbbell.toml"
    for bad in (-1, 2 ** 64, 1.5, "x", True, None):
        with pytest.raises(ValueError, match=f"seed must be an integer from 0 to 2\\*\\*64 - 1 \\(got {bad!r}"):
            mediasim.run(path, seed=bad, max_events=10)
    with pytest.raises(ValueError, match="replication must be an integer"):
        mediasim.run(path, replication=2 ** 70, max_events=10)
    # The range's ends and numpy's integers run, numpy's the same as Python's.
    with pytest.warns(mediasim.RunStoppedEarly):
        a = mediasim.run(path, seed=np.uint64(2 ** 64 - 1), max_events=2000)
        b = mediasim.run(path, seed=2 ** 64 - 1, max_events=2000)
        mediasim.run(path, seed=0, replication=2 ** 64 - 1, max_events=10)
    assert a.flows.equals(b.flows)
    r = CliRunner().invoke(main, ["run", str(path), "--seed", str(2 ** 64)])
    assert r.exit_code != 0 and "Traceback" not in r.output and "0<=x<=18446744073709551615" in r.output
    # A job takes them as a run does, when it is made: a campaign keyed
    # grid(seed="x")'s runs with a raw int() error before.
    for bad in (-1, 2 ** 64, 1.5, "x", True, None):
        for make in (lambda: mediasim.Job({}, seed=bad), lambda: mediasim.grid(path, {"duration_s": [1]}, seed=bad),
                     lambda: mediasim.replications(path, 2, seed=bad)):
            with pytest.raises(ValueError) as e:
                make()
            assert str(e.value) == f"seed must be an integer from 0 to 2**64 - 1 (got {bad!r})"
        with pytest.raises(ValueError) as e:
            mediasim.Job({}, replication=bad)
        assert str(e.value) == f"replication must be an integer from 0 to 2**64 - 1 (got {bad!r})"
    job = mediasim.Job({}, seed=np.uint64(2 ** 64 - 1), replication=np.int8(3))
    assert (job.seed, job.replication, type(job.seed), type(job.replication)) == (2 ** 64 - 1, 3, int, int)


def test_budgets_and_switches_of_run_take_their_own_types(examples):
    path = examples / "dumbbell.toml"
    for bad in (0, 2 ** 64, 1.5, "10", True):
        with pytest.raises(ValueError) as e:
            mediasim.run(path, max_events=bad)
        assert str(e.value) == f"max_events must be an integer from 1 to 2**64 - 1 (got {bad!r})"
    for name in ("max_wall_s", "max_memory_mb"):
        for bad in (0, -1, float("nan"), float("inf"), "1", True):
            with pytest.raises(ValueError, match=f"{name} must be a positive, finite number"):
                mediasim.run(path, **{name: bad})
    # A text "no" would have counted as on.
    for name in ("packets", "series", "trace", "pcap", "overwrite", "progress"):
        with pytest.raises(TypeError, match=f"{name} must be True or False \\(got 'no'\\)"):
            mediasim.run(path, **{name: "no"})
    with pytest.raises(TypeError, match="out must be a folder's path \\(got 5\\)"):
        mediasim.run(path, out=5)
    r = CliRunner().invoke(main, ["run", str(path), "--max-events", str(2 ** 64)])
    assert r.exit_code == 2 and "Traceback" not in r.output and "1<=x<=18446744073709551615" in r.output


def test_a_table_name_and_a_scenario_of_the_wrong_type_are_named(examples, tmp_path):
    with pytest.warns(mediasim.RunStoppedEarly):
        res = mediasim.run(examples / "dumbbell.toml", max_events=2000)
    with pytest.raises(TypeError, match="a table's name is text, such as 'flows' \\(got 5\\)"):
        res.table(5)
    for bad in ([1, 2], None):
        with pytest.raises(TypeError, match="a scenario is a table of fields \\(a dict\\)"):
            mediasim.Scenario.from_dict(bad)
    # A folder given as text, as everywhere else.
    (tmp_path / "run").mkdir()
    res.write_tables(str(tmp_path / "run"))
    assert mediasim.Results.read_parquet(tmp_path / "run").flows.equals(res.flows)


def test_an_output_path_that_cannot_be_written_is_named_without_a_traceback(examples, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    scenario = str(examples / "dumbbell.toml")
    run_dir = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", scenario, "--out", str(run_dir), "--max-events", "5000"]).exit_code == 0
    for args, fragment in (
            (["run", scenario, "--out", str(blocker / "out"), "--max-events", "100"],
             f"{blocker / 'out'}: cannot create the output folder there"),
            (["show", scenario, "--out", str(blocker / "d.png")], f"--out {blocker / 'd.png'}: cannot write the picture"),
            (["plot", str(run_dir), "--out", str(blocker / "p.png")], f"--out {blocker / 'p.png'}: cannot write the picture")):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and fragment in r.output and "Traceback" not in r.output, (args, r.output)
    r = CliRunner().invoke(main, ["sweep", scenario, "--vary", "duration_s=3", "--out", str(blocker / "sweep")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{blocker / 'sweep'}: cannot create the campaign's folder there (Not a directory)" in r.output
    assert blocker.read_text() == "not a folder"
