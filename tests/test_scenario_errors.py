"""Bad scenarios fail with messages that name the field and the problem."""

import json

import pytest

import mediasim
from mediasim import ScenarioError


def base() -> dict:
    return {
        "duration_s": 5,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10}],
        "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 100, "interval_ms": 20}],
    }


def errors_of(data) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as e:
        mediasim.Scenario.from_dict(data).validate()
    return e.value.errors


@pytest.mark.parametrize("path,value,field,fragment", [
    ("links[0].rate_bps", 0, "links[0].rate_bps", "must be a positive number (got 0)"),
    ("links[0].delay_ms", -1, "links[0].delay_ms", "non-negative"),
    ("links[0].b", "zz", "links[0].b", 'unknown node "zz"'),
    ("links[0].b", "a", "links[0].b", "to itself"),
    ("links[0].rate_bps", "fast", "links[0].rate_bps", "must be a number, a list of [time_s, value] steps, or a "
     'table {steps = [[time_s, value], ...], repeat_s = period} (got "fast")'),
    # serde's wrong types in words, and a list where a table of fields
    # belongs refused (not read field by field in order).
    ("links[0].delay_ms", None, "links[0].delay_ms", "must be a number, a list of [time_s, value] steps"),
    ("flows[0].payload_bytes", -1, "flows[0].payload_bytes", "must be a whole number from 0 to 4294967295 (got -1)"),
    ("flows[0].start_s", [1], "flows[0].start_s", "must be a number (got a list)"),
    ("measure", [True], "measure", "must be a table of fields (got a list)"),
    ("links[0].ab", [1e6, 5], "links[0].ab", "must be a table of fields (got a list)"),
    ("links[0].queue", {"type": "droptail", "limit_packets": 0}, "links[0].queue.limit_packets", "at least 1"),
    ("links[0].queue", {"type": "droptail"}, "links[0].queue", "needs limit_packets or limit_bytes"),
    ("links[0].queue", {"type": "blue"}, "links[0].queue.type",
     "must be one of droptail, drophead, red, wred, drr, priority, codel, fq_codel, pie, dualpi2 (got blue)"),
    ("links[0].loss", {"type": "packet", "rate": 1.5}, "links[0].loss.rate", "probability in [0, 1]"),
    ("flows[0].dst", "a", "flows[0].dst", "must differ from src"),
    ("flows[0].interval_ms", None, "flows[0]", "cbr needs rate_bps or interval_ms"),
    ("flows[0].rate_bps", 5e4, "flows[0]", "not both"),
    ("flows[0].start_s", 9, "flows[0].start_s", "not before the end of the run"),
    ("flows[0].payload_bytes", 70000, "flows[0].payload_bytes", "1..=65507"),
    ("flows[0].dscp", 64, "flows[0].dscp", "0..=63"),
    ("flows[0].type", "quic", "flows[0].type",
     "must be one of cbr, poisson, tcp, media_scaling, tfrc, svc, paced (got quic)"),
    ("flows[0].type", "tcp", "flows[0].payload_bytes", "not used by tcp"),
    ("flows[0].payload_bytes", None, "flows[0].payload_bytes", "required for cbr and poisson"),
    ("flows[0].name", "a/b", "flows[0].name", "must not contain '/'"),
    ("duration_s", 0, "duration_s", "positive"),
    ("measure", {"windows_s": [[5, 2]]}, "measure.windows_s[0]", "start < end"),
])
def test_field_errors_name_path_and_problem(path, value, field, fragment):
    sc = mediasim.Scenario.from_dict(base()).set(path, value)
    errs = errors_of(sc.data)
    assert any(p == field and fragment in m for p, m in errs), errs


@pytest.mark.parametrize("path,value,fragment", [
    ("links[0].delay_ms", float("nan"), "must be a finite number (got nan)"),
    ("links[0].rate_bps", float("inf"), "must be a finite number (got inf)"),
    ("links[0].delay_ms", float("-inf"), "must be a finite number (got -inf)"),
    ("links[0].delay_ms", 1e300, "must be at most"),
    ("duration_s", 1e12, "must be at most"),
])
def test_non_finite_and_huge_values(path, value, fragment):
    sc = mediasim.Scenario.from_dict(base()).set(path, value)
    errs = errors_of(sc.data)
    assert any(p == path and fragment in m for p, m in errs), errs


def test_extreme_but_valid_values_run_without_hanging():
    # A Poisson source so slow that its next packet lies beyond representable
    # time, and a link so fast (the bound on every rate, 1 Tbit/s) that
    # serialisation rounds to 0 ns.
    d = base()
    d["flows"][0] = {"name": "f", "type": "poisson", "src": "a", "dst": "b", "payload_bytes": 100, "rate_pps": 1e-300}
    d["links"][0]["rate_bps"] = 1e12
    res = mediasim.run(d)
    assert res.flows["sent"].iloc[0] == 0


def test_unknown_and_missing_fields():
    d = base()
    d["links"][0]["rat_bps"] = 1
    errs = errors_of(d)
    assert errs[0] == ("links[0].rat_bps", "unknown field; did you mean rate_bps? (expected one of name, a, b, "
                                           "rate_bps, delay_ms, trace, outages, jitter, queue, loss, cost, ab, ba)")
    d = base()
    del d["duration_s"]
    assert errors_of(d) == [("duration_s", "must be given (this field has no default)")]


def test_a_key_holding_any_character_is_named_whole_inside_a_model():
    # \x01 is the character the engine marks a model's inner path with.
    for key in ["a\x01b", "\x01", "x\x01\x01", "\x015\x01"]:
        d = base()
        d["links"][0]["queue"] = {"type": "droptail", "limit_packets": 5, key: 1}
        (path, message), = errors_of(d)
        assert path == f"links[0].queue.{key}" and message.startswith("unknown field (expected one of "), message


def test_all_problems_are_reported_at_once():
    d = base()
    d["links"][0]["rate_bps"] = -1
    d["flows"][0]["src"] = "nowhere"
    d["nodes"].append({"name": "a"})
    paths = {p for p, _ in errors_of(d)}
    assert {"links[0].rate_bps", "flows[0].src", "nodes[2].name"} <= paths


SCATTERED_TOML = """\
nodes = [{ name = "a" }, { name = "b" }]

[[links]]
b = "b"
a = "a"
rate_mbps = 1
delay_ms = 10
queue = { type = "droptale", limit_packets = -1 }

[[flows]]
name = "f"
type = "cbr"
src = "nowhere"
dst = "b"
payload_bytes = 100
interval_ms = 0
"""


def test_problems_are_listed_as_their_fields_are_written_and_a_bad_model_type_does_not_stop_them(tmp_path):
    """The file's own order, whatever order the engine found them in: a
    field left out (duration_s, the link's rate) after what its table
    holds; a queue whose type is unknown set aside whole (its bad limit
    not said) with the checks going on past it."""
    toml_file = tmp_path / "s.toml"
    toml_file.write_text(SCATTERED_TOML)
    with pytest.raises(ScenarioError) as e:
        mediasim.load_scenario(toml_file).validate()
    queues = "droptail, drophead, red, wred, drr, priority, codel, fq_codel, pie, dualpi2"
    assert [p for p, _ in e.value.errors] == [
        "links[0].rate_mbps", "links[0].queue.type", "links[0].rate_bps",
        "flows[0].src", "flows[0].interval_ms", "duration_s",
    ], e.value.errors
    assert e.value.errors[1][1] == f"must be one of {queues} (got droptale; did you mean droptail?)"
    # The same scenario written in another order is told in that order.
    data = mediasim.load_scenario(toml_file).data
    flipped = {"flows": [dict(reversed(list(data["flows"][0].items())))],
               "links": [dict(reversed(list(data["links"][0].items())))], "nodes": data["nodes"]}
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps(flipped))
    with pytest.raises(ScenarioError) as e:
        mediasim.load_scenario(json_file).validate()
    assert [p for p, _ in e.value.errors] == [
        "flows[0].interval_ms", "flows[0].src", "links[0].queue.type", "links[0].rate_mbps",
        "links[0].rate_bps", "duration_s",
    ], e.value.errors


def test_unreachable_destination_is_reported_when_running():
    d = base()
    d["nodes"].append({"name": "island"})
    d["flows"][0]["dst"] = "island"
    with pytest.raises(ScenarioError) as e:
        mediasim.run(d)
    assert ("flows[0].dst", 'no route from "a" to "island"') in e.value.errors


def test_explicit_route_to_non_neighbour():
    d = base()
    d["routing"] = {"routes": [{"node": "a", "dst": "b", "next_hop": "a"}]}
    assert any("is not a neighbour" in m for _, m in errors_of(d))


def test_file_level_errors(tmp_path):
    bad_toml = tmp_path / "x.toml"
    bad_toml.write_text("duration_s = = 1")
    with pytest.raises(ScenarioError, match="cannot parse"):
        mediasim.load_scenario(bad_toml)
    bad_yaml = tmp_path / "x.yaml"
    bad_yaml.write_text("nodes: [a, b\n")
    with pytest.raises(ScenarioError, match="cannot parse"):
        mediasim.load_scenario(bad_yaml)
    other = tmp_path / "x.ini"
    other.write_text("")
    with pytest.raises(ScenarioError, match=r"unknown file format .\.ini. \(scenario and campaign files are "
                                            r"\.json, \.toml, \.yaml or \.yml\)"):
        mediasim.load_scenario(other)
    with pytest.raises(FileNotFoundError):
        mediasim.load_scenario(tmp_path / "missing.toml")
    lst = tmp_path / "x.json"
    lst.write_text(json.dumps([1, 2]))
    with pytest.raises(ScenarioError, match="must be a table"):
        mediasim.load_scenario(lst)


def test_yaml_floats_with_exponents_are_numbers(tmp_path):
    y = tmp_path / "s.yaml"
    y.write_text("duration_s: 1\nnodes: [{name: a}, {name: b}]\nlinks: [{a: a, b: b, rate_bps: 10e6, delay_ms: 1.5e0}]\n")
    sc = mediasim.load_scenario(y)
    assert sc.data["links"][0]["rate_bps"] == 10e6
    sc.validate()


def test_override_paths():
    sc = mediasim.Scenario.from_dict(base())
    sc.set("flows[name=f].start_s", 1.5).set("links[0].queue", {"type": "droptail", "limit_bytes": 3000})
    assert sc.data["flows"][0]["start_s"] == 1.5
    sc.validate()
    with pytest.raises(ScenarioError, match="no item named 'g'"):
        sc.set("flows[name=g].start_s", 1)
    with pytest.raises(ScenarioError, match="no list item 4"):
        sc.set("links[4]", {})
    # An index of thousands of digits (int() refuses them) and other
    # scripts' digits.
    with pytest.raises(ScenarioError, match="an index of more than 18 digits"):
        sc.set("links[" + "9" * 5000 + "].rate_bps", 1)
    with pytest.raises(ScenarioError, match="cannot parse this path"):
        sc.set("links[\u0663].rate_bps", 1)


@pytest.mark.parametrize("path,problem", [
    ("flows[name=g].start_s", "no item named 'g' (the items are named 'f')"),
    ("nodes[name=c].name", "no item named 'c' (the items are named 'a', 'b')"),
    ("links[4]", "no list item 4 (the list has 1 item: 0 to 0)"),
    ("links[-1]", "cannot parse this path"),  # indices count from the start
    ("links[1]", "no list item 1 (the list has 1 item: 0 to 0)"),
    ("nodes[2].x", "no list item 2 (the list has 2 items: 0 to 1)"),
    ("links[4].rate_bps", "no list item 4 (the list has 1 item: 0 to 0)"),
    ("links[1].rate_bps", "no list item 1 (the list has 1 item: 0 to 0)"),  # one past the end
    ("duration_s.x.y", "not a table"),
    ("links[0].nope[0]", "no field 'nope' (the table has 'a', 'b', 'rate_bps', 'delay_ms')"),
    ("linkz[0].a", "no field 'linkz' (did you mean 'links'? the table has 'duration_s', 'nodes', 'links', 'flows')"),
    ("nodes[0].name.x", "not a table"),
    ("links[0].rate_bps[0]", "no list item 0 (not a list)"),  # a number, not a list
    ("links[0].rate_bps[0].x", "no list item 0 (not a list)"),
    ("duration_s.x", "not a table"),
    ("flows[name=f]", "cannot replace a selected item"),
    ("links[x].rate_bps", "cannot parse this path"),
    ("", "empty path"),
    ("nodes[0].name[name=a].x", "no item named 'a' (not a list)"),
    ("links[name=a].x", "no item named 'a' (no item has a name)"),
])
def test_an_override_path_that_leads_nowhere_is_named_as_one_problem(path, problem):
    sc = mediasim.Scenario.from_dict(base())
    with pytest.raises(ScenarioError) as e:
        sc.set(path, 1)
    assert e.value.errors == [(path, problem)]
    assert sc.data == base()  # nothing was set


def test_a_field_is_read_by_path_and_named_by_index_and_a_path_that_leads_nowhere_is_named():
    d = base()
    d["links"][0]["name"] = "wire"
    sc = mediasim.Scenario.from_dict(d)
    assert sc.get("links[name=wire].delay_ms") == d["links"][0]["delay_ms"]
    assert sc.get("flows[name=f]") is sc.data["flows"][0]
    assert sc.get("nodes[1].name") == "b"
    assert sc.indexed_path("links[name=wire].delay_ms") == "links[0].delay_ms"
    assert sc.indexed_path("nodes[name=b]") == "nodes[1]"
    assert sc.indexed_path("duration_s") == "duration_s"
    for path, problem in [
        ("flows[name=g].start_s", "no item named 'g' (the items are named 'f')"),
        ("links[0].rate_bs", "no field 'rate_bs' (did you mean 'rate_bps'? the table has 'a', 'b', 'rate_bps', "
                             "'delay_ms', 'name')"),
        ("links[1]", "no list item 1 (the list has 1 item: 0 to 0)"),
        ("duration_s.x", "not a table"),
        ("links[-1]", "cannot parse this path"),
    ]:
        for read in (sc.get, sc.indexed_path):
            with pytest.raises(ScenarioError) as e:
                read(path)
            assert e.value.errors == [(path, problem)]
    assert sc.data == d  # reading creates nothing
    with pytest.raises(TypeError, match="a field path is text"):
        sc.get(0)  # type: ignore[arg-type]


def test_every_override_path_that_leads_nowhere_is_named_at_once(examples):
    sc = mediasim.Scenario.from_dict(base())
    with pytest.raises(ScenarioError) as e:
        sc.with_overrides({"linkz[0].a": 1, "duration_s": 7, "flows[name=g].src": "a"})
    assert e.value.errors == [
        ("linkz[0].a", "no field 'linkz' (did you mean 'links'? the table has 'duration_s', 'nodes', 'links', "
                       "'flows')"),
        ("flows[name=g].src", "no item named 'g' (the items are named 'f')")]
    assert sc.data == base()  # a copy is set, not the scenario itself
    assert sc.with_overrides({"duration_s": 7, "flows[name=f].src": "b"}).data["duration_s"] == 7
    # The command line alike: every --set that leads nowhere, then nothing else.
    from click.testing import CliRunner

    from mediasim.cli import main

    r = CliRunner().invoke(main, ["validate", str(examples / "dumbbell.toml"), "--set", "linkz[0].a=1",
                                  "--set", "duration_s=-1", "--set", "flows[name=voic].rate_bps=2"])
    assert r.exit_code == 2
    assert [line.split(" (")[0] for line in r.output.splitlines()] == [
        "error: invalid scenario:", "  linkz[0].a: no field 'linkz'", "  flows[name=voic].rate_bps: no item named 'voic'"]


def test_an_override_paths_error_lists_at_most_ten_names_and_an_empty_list_says_so():
    d = base()
    d["flows"] = [dict(d["flows"][0], name=f"f{i}") for i in range(12)]
    sc = mediasim.Scenario.from_dict(d)
    names = ", ".join(f"'f{i}'" for i in range(10))
    for path, problem in [
        ("flows[name=g].start_s", f"no item named 'g' (the items are named {names} and 2 more)"),
        ("groups[0]", "no field 'groups' (the table has 'duration_s', 'nodes', 'links', 'flows')"),
    ]:
        with pytest.raises(ScenarioError) as e:
            sc.set(path, 1)
        assert e.value.errors == [(path, problem)]
    sc.set("groups", [])
    with pytest.raises(ScenarioError) as e:
        sc.set("groups[0].name", "x")
    assert e.value.errors == [("groups[0].name", "no list item 0 (the list is empty)")]
    sc = mediasim.Scenario.from_dict({})
    with pytest.raises(ScenarioError) as e:
        sc.set("links[0].a", "x")
    assert e.value.errors == [("links[0].a", "no field 'links' (the table has no fields)")]


def test_an_override_path_sets_list_items_from_either_end_and_creates_tables():
    sc = mediasim.Scenario.from_dict(base())
    sc.set("links[0].delay_ms", 7).set("nodes[1]", {"name": "z"}).set("measure.series", True)
    assert sc.data["links"][0]["delay_ms"] == 7 and sc.data["nodes"] == [{"name": "a"}, {"name": "z"}]
    assert sc.data["measure"] == {"series": True}
    # An index of thousands of digits is named by its first 60 characters.
    path = "links[" + "9" * 5000 + "].rate_bps"
    with pytest.raises(ScenarioError) as e:
        sc.set(path, 1)
    assert e.value.errors == [(path[:60] + "...", "an index of more than 18 digits")]
    with pytest.raises(ScenarioError) as e:
        sc.set("links[" + "9" * 18 + "].rate_bps", 1)
    path = "links[" + "9" * 18 + "].rate_bps"
    assert e.value.errors == [(path, f"no list item {'9' * 18} (the list has 1 item: 0 to 0)")]


def test_override_text_is_split_at_the_first_equals_outside_brackets_and_read_as_json():
    from mediasim.scenario import parse_value, split_override

    assert split_override("flows[name=a=b].start_s=2") == ("flows[name=a=b].start_s", "2")
    assert split_override("a[[x=1]]=3") == ("a[[x=1]]", "3")
    for text in ("flows[name=a].start_s", "a[x=1"):
        with pytest.raises(ScenarioError) as e:
            split_override(text)
        assert e.value.errors == [(text, "expected PATH=VALUE")]
    assert parse_value("[1, 2]") == [1, 2] and parse_value("fast") == "fast"
    deep = "[" * 100_000
    for field, shown in ((None, "[" * 40 + "..."), ("d", "d")):
        with pytest.raises(ScenarioError) as e:
            parse_value(deep, field)
        assert e.value.errors == [(shown, "nested too deeply (at most 64 levels)")]


def test_the_builder_starts_from_its_defaults_and_owns_its_data():
    assert mediasim.Scenario().data == {"name": "", "duration_s": 10.0, "nodes": [], "links": []}
    assert mediasim.Scenario().name == "scenario"  # what errors and outputs call an unnamed one
    given = base()
    sc = mediasim.Scenario.from_dict(given)
    given["links"][0]["rate_bps"] = 5
    out = sc.to_dict()
    out["flows"][0]["start_s"] = 3
    assert sc.data == base()  # neither the dict handed in nor the one handed out is the scenario's own
    bare = mediasim.Scenario.from_dict({"duration_s": 1})  # no nodes or links yet
    bare.node("a").node("b").link("a", "b", 1e6, 1)
    assert [n["name"] for n in bare.data["nodes"]] == ["a", "b"] and len(bare.data["links"]) == 1
    bare.validate()


def test_the_wrong_kind_of_scenario_or_path_is_named():
    from mediasim.scenario import as_scenario

    for call, said in [(lambda: mediasim.Scenario.from_dict([1]), "a scenario is a table of fields (a dict), not list"),
                       (lambda: as_scenario(5), "a scenario is a Scenario, a dict or a file's path (got int)"),
                       (lambda: mediasim.Scenario().set(5, 1),
                        "a field path is text, such as 'links[0].rate_bps' (got 5)")]:
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == said
    assert errors_of({**base(), 1: "x"}) == [("scenario", "key 1 is not text")]  # unnamed: the default name
    sc = mediasim.Scenario("calls", duration_s=1)
    sc.data[1] = "x"
    assert errors_of(sc.data) == [("calls", "key 1 is not text")]


@pytest.mark.parametrize("change", [
    {"rtp_sessions": [5]}, {"rtp_sessions": [{"members": [5]}]}, {"rtp_sessions": [{"members": 5}]},
    {"links": [5]}, {"links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1, "ab": 5}]},
    {"links": {"a": "a"}},
])
def test_a_part_of_the_wrong_kind_where_traces_are_looked_for_is_named_by_the_engine(change):
    with pytest.raises(ScenarioError) as e:
        mediasim.Scenario.from_dict({**base(), **change}).validate()
    assert e.value.errors and all(path for path, _ in e.value.errors)


def test_an_unlikely_value_warns_at_the_line_that_validates_it():
    sc = mediasim.Scenario.from_dict(base()).set("links[0].rate_bps", 2000)
    with pytest.warns(mediasim.ImplausibleValue) as w:
        sc.validate()
    assert [x.filename for x in w] == [__file__]


def test_the_builder_adds_groups_and_sessions_as_the_schema_names_them_and_says_what_it_holds():
    sc = mediasim.Scenario("tree", duration_s=2).node("s").node("r1").node("r2")
    sc.link("s", "r1", 1e6, 5).link("s", "r2", 1e6, 5)
    assert repr(sc) == "Scenario('tree', 2 s, 3 nodes, 2 links, 0 flows)"
    receivers = ["r1", "r2"]
    sc.group("g", receivers).rmtp_session("m", "s", [{"dr": "r1", "receivers": ["r2"]}], data_bytes=2000)
    receivers.append("s")  # the scenario keeps its own copy of the group's members
    assert sc.data["groups"] == [{"name": "g", "members": ["r1", "r2"]}]
    assert sc.data["rmtp_sessions"] == [{"name": "m", "sender": "s", "subgroups": [{"dr": "r1", "receivers": ["r2"]}],
                                         "data_bytes": 2000}]
    assert repr(sc) == "Scenario('tree', 2 s, 3 nodes, 2 links, 0 flows, 1 rmtp sessions)"
    sc.rtp_session("call", [{"node": "s"}, {"node": "r1"}], 64e3, 160)
    assert repr(sc) == "Scenario('tree', 2 s, 3 nodes, 2 links, 0 flows, 1 rtp sessions, 1 rmtp sessions)"
    assert repr(mediasim.Scenario.from_dict({"nodes": None})) == "Scenario('scenario', None s, 0 nodes, 0 links, 0 flows)"


def test_a_scenario_error_says_each_problem_on_its_own_line_path_first():
    from mediasim.errors import TableNotFound

    two = ScenarioError("2 problems", [("links[0].rate_bps", "must be positive"), ["duration_s", "missing"]])
    assert str(two) == "invalid scenario:\n  links[0].rate_bps: must be positive\n  duration_s: missing"
    assert two.args == ("2 problems",) and two.errors == [("links[0].rate_bps", "must be positive"),
                                                          ("duration_s", "missing")]
    one = ScenarioError.at("s.toml", "cannot parse")
    assert (one.args, one.errors, str(one)) == (("s.toml: cannot parse",), [("s.toml", "cannot parse")],
                                                "invalid scenario:\n  s.toml: cannot parse")
    plain = ScenarioError("no field to name")
    assert (str(plain), plain.errors) == ("no field to name", [])
    # What the engine could not finish says where and when.
    from mediasim.errors import EngineFailure

    stalled = EngineFailure("simulated time stopped advancing at 2.5 s", 2.5, "link r1-r2")
    assert (str(stalled), stalled.time_s, stalled.component) == ("simulated time stopped advancing at 2.5 s", 2.5,
                                                                 "link r1-r2")
    assert (EngineFailure("internal").time_s, EngineFailure("internal").component) == (None, None)
    # KeyError would quote the message; TableNotFound says it as it is.
    assert (str(TableNotFound("no table 'x'")), str(TableNotFound())) == ("no table 'x'", "")
