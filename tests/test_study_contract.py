"""Every reference study keeps one contract (``StudyModule``) and runs
through one driver (``mediasim.experiments.reproduce``): the command
line, ``reproduce all`` and study campaigns find what a study offers in
its declarations, not by probing it."""

from __future__ import annotations

import dataclasses
import typing
import json
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from mediasim import experiments
from mediasim.cli import main
from mediasim.experiments.params import StudyParams


@pytest.mark.parametrize("name", list(experiments.STUDIES))
def test_every_study_declares_the_contract(name):
    mod = experiments.get(name)
    assert isinstance(mod, experiments.StudyModule)
    assert isinstance(mod.CASES, tuple) and all(isinstance(c, int) for c in mod.CASES)
    assert isinstance(mod.HAS_SENSITIVITY, bool)
    p = mod.Params().quick()
    assert hasattr(p, "seed") and hasattr(p, "replications")


def test_options_are_checked_against_the_declarations():
    assert experiments.options("avpf", [4], True) == {"cases": (4,), "sensitivity": True}
    with pytest.raises(experiments.OptionError, match="study 'iw10' has no cases") as e:
        experiments.options("iw10", [1])
    assert e.value.option == "cases"
    with pytest.raises(experiments.OptionError, match=r"\[99\] not among"):
        experiments.options("avpf", [99])
    with pytest.raises(experiments.OptionError, match="has no sensitivity runs") as e:
        experiments.options("iw10", None, True)
    assert e.value.option == "sensitivity"


def test_the_cli_names_an_option_a_study_does_not_offer_before_running(tmp_path):
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--case", "1", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--case: study 'iw10' has no cases" in r.output
    assert not (tmp_path / "x").exists()
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--sensitivity", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--sensitivity: study 'iw10' has no sensitivity runs" in r.output


def test_the_driver_writes_the_report_and_its_html(tmp_path):
    p = experiments.get("iw10").Params().quick().with_overrides({"replications": "1", "flows": "1"})
    report = experiments.reproduce("iw10", p, tmp_path / "iw10", workers=1, progress=False, stamp="test stamp")
    assert report == tmp_path / "iw10" / "report.md"
    html = (tmp_path / "iw10" / "report.html").read_text()
    assert "test stamp" in html


def _as_typed(value) -> str:
    """A study parameter's value as a user types it after --set NAME=."""
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return ";".join(",".join(repr(x) for x in g) for g in value)
        return ",".join(_as_typed(x) for x in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


@pytest.mark.parametrize("name", list(experiments.STUDIES))
def test_every_study_parameter_reads_back_from_its_typed_form(name):
    import dataclasses

    p = experiments.get(name).Params()
    for f in dataclasses.fields(p):
        value = getattr(p, f.name)
        back = getattr(p.with_overrides({f.name: _as_typed(value)}), f.name)
        assert back == value and type(back) is type(value), (f.name, value, back)


def test_overrides_take_each_kind_of_parameter_and_name_what_it_takes():
    from mediasim.experiments import iw10, rmtp, svc

    p = svc.Params()
    for word, truth in [("true", True), ("Yes", True), ("on", True), ("1", True),
                        ("false", False), ("NO", False), ("off", False), ("0", False)]:
        assert p.with_overrides({"ppacc_shaping": word}).ppacc_shaping is truth
    assert p.with_overrides({"wred_profiles": "0.5,1,0.1; 0.2,0.6,0.2;0.05,0.3,0.5"}).wred_profiles == (
        (0.5, 1.0, 0.1), (0.2, 0.6, 0.2), (0.05, 0.3, 0.5))
    assert p.with_overrides({"buffers": "[5, 20]"}).buffers == (5, 20)
    assert p.with_overrides({"transports": " ppacc "}).transports == ("ppacc",)
    assert iw10.Params().with_overrides({"jitter_buffers_ms": "(40,1e2)"}).jitter_buffers_ms == (40.0, 100.0)
    for params, field, value, takes in [
        (p, "ppacc_shaping", "ture", "true or false"),  # a typo is not quietly false
        (p, "wred_profiles", "0.5,1,x", "groups of numbers separated by ';' (e.g. 0.6,1,0.05;0.2,0.6,0.2)"),
        (p, "buffers", "5,x", "a comma-separated list, each a whole number (e.g. 5,20,35)"),
        (p, "bottleneck_rate_bps", "fast", "a number"),
        (rmtp.Params(), "scenarios", "one", "a comma-separated list, each a whole number (e.g. 1,2,3)"),
    ]:
        with pytest.raises(ValueError) as e:
            params.with_overrides({field: value})
        assert str(e.value) == f"{params.study}: {field}='{value}': expected {takes}"


def test_the_shared_checks_of_study_parameters_at_their_bounds():
    import dataclasses

    from mediasim.experiments import iw10

    p = iw10.Params()

    def problems(**changes) -> str:
        with pytest.raises(ValueError) as e:
            dataclasses.replace(p, **changes).check()
        return str(e.value)

    for ok in ({"replications": 1}, {"replications": 10_000}, {"seed": 0}, {"seed": 2 ** 64 - 1},
               {"flows": (200_000,)}):
        dataclasses.replace(p, **ok).check()
    assert problems(replications=10_001) == "iw10: replications must be from 1 to 10,000 (got 10001)"
    assert problems(seed=2 ** 64) == f"iw10: seed must be from 0 to 2**64 - 1 (got {2 ** 64})"
    assert problems(seed=-1) == "iw10: seed must be from 0 to 2**64 - 1 (got -1)"
    # Every shared problem at once, before the study's own checks.
    assert problems(replications=0, seed=-1, flows=(1, 200_001)) == (
        "iw10: replications must be from 1 to 10,000 (got 0); seed must be from 0 to 2**64 - 1 (got -1); "
        "flows must be at most 200,000 (the engine's limit on flows and nodes)")


def test_params_overrides_are_typed_and_checked():
    from mediasim.experiments import iw10

    p = iw10.Params().with_overrides({"flows": "1,6", "bottleneck_rate_bps": "4e6", "replications": "3"})
    assert p.flows == (1, 6) and p.bottleneck_rate_bps == 4e6 and p.replications == 3
    with pytest.raises(ValueError, match="replications must be from 1 to 10,000"):
        iw10.Params().with_overrides({"replications": "0"})
    with pytest.raises(ValueError, match="buffer_packets=.many.: expected a whole number"):
        iw10.Params().with_overrides({"buffer_packets": "many"})


def test_every_study_refuses_counts_no_run_can_use_before_building_anything():
    """A mistyped count (1e300 flows, receivers or replications) is an error
    naming it, not a loop over it; the bound on flows and nodes is the
    engine's own default limit."""
    import json

    from mediasim import _engine
    from mediasim.experiments import STUDIES, get
    from mediasim.experiments.params import MAX_ITEMS

    limits = json.loads(_engine.schema())["$defs"]["LimitsSpec"]["properties"]
    assert MAX_ITEMS == limits["max_flows"]["default"] == limits["max_nodes"]["default"]
    counted = set()
    for name in STUDIES:
        params = get(name).Params()
        for field in ("replications", *type(params).count_fields):
            counted.add((name, field))
            with pytest.raises(ValueError, match=f"{field} must be"):
                params.with_overrides({field: "1e300"})
        with pytest.raises(ValueError, match="seed must be from 0 to 2\\*\\*64 - 1"):
            params.with_overrides({"seed": str(2 ** 64)})
    assert {("iw10", "flows"), ("rmtp", "receivers_per_dr"), ("svc", "video_flows"),
            ("media-scaling", "mpeg_flows"), ("avpf", "ftp_flows_per_side")} <= counted


@pytest.mark.parametrize("name", list(experiments.STUDIES))
def test_every_study_refuses_a_number_below_0_a_rate_below_1_a_fraction_above_1_and_a_non_finite_number(name):
    """Named by ``--set`` itself: a campaign over such a value is refused
    before its first point runs, not failed at the point it reaches."""
    p = experiments.get(name).Params()
    p.check()
    p.quick().check()

    def problem(field: str, value: Any, text: str) -> str:
        with pytest.raises(ValueError) as e:
            p.with_overrides({field: ",".join([text] * len(value)) if isinstance(value, tuple) else text})
        return str(e.value)

    fields = {f.name for f in dataclasses.fields(p)}
    for declared in ("count_fields", "fractions", "positive", "may_be_empty"):  # a misspelt name checks nothing
        assert set(getattr(type(p), declared)) <= fields, declared
    seen = {"numbers": 0, "fractions": 0, "positive": 0}
    for f in dataclasses.fields(p):
        value = getattr(p, f.name)
        first = value[0] if isinstance(value, tuple) else value
        if isinstance(first, bool) or not isinstance(first, int | float) or f.name in ("seed", "replications"):
            continue  # groups have their own checks; seed and replications their bounds
        if isinstance(first, float):
            assert f"{f.name} must be a finite number (got nan)" in problem(f.name, value, "nan")
        rate = f.name.endswith("_bps")
        seen["numbers"] += 1
        assert (f"{f.name} must be at least 1 bit/s (got -1)" if rate
                else f"{f.name} must be at least 0 (got -1)") in problem(f.name, value, "-1")
        if rate:
            assert f"{f.name} must be at least 1 bit/s (got 0)" in problem(f.name, value, "0")
        elif f.name in type(p).positive:
            seen["positive"] += 1
            assert f"{f.name} must be above 0 (got 0)" in problem(f.name, value, "0")
        if f.name in type(p).fractions:
            seen["fractions"] += 1
            assert f"{f.name} must be from 0 to 1 (got 1.5)" in problem(f.name, value, "1.5")
            p.with_overrides({f.name: ",".join(["1"] * len(value)) if isinstance(value, tuple) else "1"})
    assert seen["numbers"] >= 10 and seen["fractions"] == len(type(p).fractions)
    assert seen["positive"] == len(type(p).positive)


def _problem(params: Any, **overrides: str) -> str:
    """What ``params.with_overrides(overrides)`` refuses, as said."""
    with pytest.raises(ValueError) as e:
        params.with_overrides(overrides)
    return str(e.value)


_AWKWARD = ("", "-" + "9" * 400, "9" * 400, "0", "-1", "5", "5,6,7", "1;2", "1,2;3", "0.1,1;0.2;0.3", "nan", "-inf",
            "1e400", "x", "true", "a,b", " ; ")


@pytest.mark.parametrize("name", list(experiments.STUDIES))
def test_every_study_parameter_takes_any_text_or_names_what_is_wrong(name):
    """Whatever ``--set NAME=TEXT`` gives a field, the parameters are taken
    or a ParamsError names the problem: never another exception, which the
    command line would show as a traceback (a one-value window once failed
    in the study's own check with an IndexError)."""
    from mediasim.experiments.params import ParamsError

    p = experiments.get(name).Params()
    for f in dataclasses.fields(p):
        for text in _AWKWARD:
            try:
                p.with_overrides({f.name: text})
            except ParamsError as e:
                assert e.problems and all(isinstance(x, str) and x for x in e.problems), (f.name, text)


def _study_texts():
    from hypothesis import strategies as st

    pieces = st.sampled_from(["1", "-1", "0", "2.5", "x", "nan", "inf", "1e400", "9" * 25, ",", ";", " ", "[", ")",
                              "sack", "I", "P", "B", ":", "=", "true"])
    return st.one_of(st.text(max_size=12), st.lists(pieces, max_size=8).map("".join))


def test_random_text_for_random_study_parameters_is_taken_or_named():
    """Hypothesis's texts, a few fields at once, on every study: the
    parameters are taken or a ParamsError names each problem (deterministic:
    the same examples on every run, none stored)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from mediasim.experiments.params import ParamsError

    @settings(max_examples=600, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def check(data):
        p = experiments.get(data.draw(st.sampled_from(list(experiments.STUDIES)))).Params()
        fields = [f.name for f in dataclasses.fields(p)]
        overrides = data.draw(st.dictionaries(st.sampled_from(fields), _study_texts(), min_size=1, max_size=3))
        try:
            taken = p.with_overrides(overrides)
        except ParamsError as e:
            assert e.problems and all(isinstance(x, str) and x for x in e.problems)
        else:
            taken.check()  # what was taken passes the checks again

    check()


def test_a_list_is_not_empty_a_pair_holds_two_values_and_a_whole_number_fits_the_engine():
    from mediasim.experiments import iw10, svc

    assert _problem(iw10.Params(), total_bytes="-" + "9" * 400) == (
        "iw10: total_bytes must be below 2**64 (got a number of 400 digits)")
    assert _problem(iw10.Params(), total_bytes=str(2 ** 64)) == (
        "iw10: total_bytes must be below 2**64 (got a number of 20 digits)")
    assert iw10.Params().with_overrides({"total_bytes": str(2 ** 64 - 1)}).total_bytes == 2 ** 64 - 1
    assert _problem(iw10.Params(), observation_s="5") == "iw10: observation_s must hold 2 values (got 1)"
    assert _problem(iw10.Params(), observation_s="5,6,7") == "iw10: observation_s must hold 2 values (got 3)"
    assert iw10.Params().with_overrides({"observation_s": "15,16"}).observation_s == (15.0, 16.0)
    assert _problem(iw10.Params(), flows="", accesses="") == (
        "iw10: flows must hold at least one value; accesses must hold at least one value")
    assert _problem(svc.Params(), wred_profiles="0.5,1;0.2,0.6,0.2;0.05,0.3,0.5") == (
        "svc: wred_profiles must be groups of 3 values (got one of 2)")
    assert _problem(svc.Params(), wred_profiles="0.5,1,0.1,0.2;0.2,0.6,0.2;0.05,0.3,0.5") == (
        "svc: wred_profiles must be groups of 3 values (got one of 4)")


def test_text_parameters_that_name_a_choice_or_hold_a_format_are_checked_when_set():
    from mediasim.experiments import avpf, iw10, media_scaling

    assert _problem(iw10.Params(), tcp_flavor="cubic") == "iw10: tcp_flavor must be reno, newreno or sack (got 'cubic')"
    sessions = "newpred_sessions must be kbit/s:frames/s:segments/frame, each above 0 and segments whole (e.g. 32:4:3"
    for bad in ("32:4", "32:4:3:1", "x:4:3", "32:0:3", "32:4:2.5", "inf:4:3", "32:4:-3"):
        assert _problem(avpf.Params(), newpred_sessions=f"64:5:3,{bad}") == f"avpf: {sessions}; got {[bad]!r})", bad
    assert avpf.Params().with_overrides({"newpred_sessions": "64:5.5:3.0"}).newpred_sessions == ("64:5.5:3.0",)
    for bad in ("PBB", "IBX", "ibb"):
        assert _problem(media_scaling.Params(), mpeg_gop=bad) == (
            f"media-scaling: mpeg_gop must be I, P and B frames starting with I (got {bad!r})")
    assert media_scaling.Params().with_overrides({"mpeg_gop": "IPPP"}).mpeg_gop == "IPPP"


def test_a_rate_is_at_least_1_bit_per_s_and_every_problem_is_said_in_the_fields_order():
    """Every rate, PPACC's steps too (the engine takes none at 0)."""
    from mediasim.experiments import iw10, svc

    assert iw10.Params().with_overrides({"uplink_rate_bps": "1"}).uplink_rate_bps == 1.0  # the engine's least link rate
    assert _problem(iw10.Params(), uplink_rate_bps="0.99") == (
        "iw10: uplink_rate_bps must be at least 1 bit/s (got 0.99)")
    with pytest.raises(ValueError) as e:
        svc.Params().with_overrides({"bottleneck_rate_bps": "0", "ppacc_eps_bps": "0", "duration_s": "-1"})
    assert str(e.value) == ("svc: bottleneck_rate_bps must be at least 1 bit/s (got 0); duration_s must be at least 0 "
                            "(got -1); ppacc_eps_bps must be at least 1 bit/s (got 0)")


def test_a_study_campaign_with_a_negative_rate_at_one_point_is_refused_before_any_runs(tmp_path):
    spec = tmp_path / "c.toml"
    spec.write_text(f'study = "iw10"\nout = "{tmp_path / "out"}"\nreplications = 1\n'
                    '[grid]\nbottleneck_rate_bps = [2e6, -1]\n')
    r = CliRunner().invoke(main, ["campaign", str(spec)])
    assert r.exit_code == 2, r.output
    assert "bottleneck_rate_bps must be at least 1 bit/s (got -1)" in r.output
    assert not (tmp_path / "out").exists()


def test_whole_number_parameters_are_taken_exactly_or_refused():
    """``--set`` of an integer field: as written (a 20-digit seed stays that
    seed), or a float that is whole (1e1); a fraction or an infinity is
    named, where int(float(...)) cut the one, overflowed on the other and
    rounded large seeds to other seeds."""
    from mediasim.experiments import iw10

    p = iw10.Params()
    assert p.with_overrides({"seed": str(2 ** 64 - 1)}).seed == 2 ** 64 - 1
    assert p.with_overrides({"seed": "12345678901234567891"}).seed == 12345678901234567891
    assert p.with_overrides({"flows": "1e1,2"}).flows == (10, 2)
    for field, value, takes in (("replications", "2.7", "a whole number"), ("replications", "1e400", "a whole number"),
                                ("replications", "nan", "a whole number"),
                                ("flows", "1,2.5", "a comma-separated list, each a whole number (e.g. 1,2,6)")):
        with pytest.raises(ValueError) as e:
            p.with_overrides({field: value})
        assert str(e.value) == f"iw10: {field}='{value}': expected {takes}"



@dataclasses.dataclass(frozen=True)
class _Toy(StudyParams):
    """A study's parameters at their plainest: no seed, lists of no value
    and of one by default, and checks of its own."""

    study: ClassVar[str] = "toy"
    may_be_empty: ClassVar[tuple[str, ...]] = ("names",)
    replications: int = 1
    names: tuple[str, ...] = ()
    counts: tuple[int, ...] = (5,)
    width: float = 1.0

    def check_more(self) -> list[str]:
        return [p for bad, p in ((self.width > 10, "width must be at most 10"),
                                 ("bad" in self.names, "names must not hold 'bad'")) if bad]


def test_an_unknown_parameter_is_named_with_every_known_one():
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"wdith": "2"})
    assert str(e.value) == ("toy: unknown parameter 'wdith'; did you mean 'width'? "
                            "(known: counts, names, replications, width)")
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"height": "2"})
    assert str(e.value) == "toy: unknown parameter 'height' (known: counts, names, replications, width)"


def test_every_name_and_value_that_cannot_be_taken_is_said_together_before_the_checks():
    from mediasim.experiments.params import ParamsError

    with pytest.raises(ParamsError) as e:
        _Toy().with_overrides({"wdith": "2", "counts": "1,x", "width": "-1", "height": "2"})
    known = "(known: counts, names, replications, width)"
    assert e.value.problems == [
        f"unknown parameter 'wdith'; did you mean 'width'? {known}",
        "counts='1,x': expected a comma-separated list, each a whole number (e.g. 5)",
        f"unknown parameter 'height' {known}",
    ]  # not the width's check: the values given are not all taken
    assert str(e.value) == "toy: " + "; ".join(e.value.problems)


def test_parameters_without_a_seed_or_with_an_empty_list_take_overrides():
    p = _Toy().with_overrides({"names": "a, b", "replications": "2", "counts": "1,2"})
    assert p == _Toy(replications=2, names=("a", "b"), counts=(1, 2))
    assert _Toy().with_overrides({"names": ""}).names == ()  # in may_be_empty
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"counts": ""})
    assert str(e.value) == "toy: counts must hold at least one value"
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"counts": "1,x"})
    assert str(e.value) == "toy: counts='1,x': expected a comma-separated list, each a whole number (e.g. 5)"


def test_a_studys_own_problems_are_said_together_after_the_shared_ones():
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"width": "11", "names": "bad"})
    assert str(e.value) == "toy: width must be at most 10; names must not hold 'bad'"
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"width": "11", "replications": "0", "counts": "-1"})
    # the shared ones first, alone
    assert str(e.value) == "toy: replications must be from 1 to 10,000 (got 0); counts must be at least 0 (got -1)"
    with pytest.raises(ValueError) as e:
        _Toy().with_overrides({"replications": "-1"})
    assert str(e.value) == "toy: replications must be from 1 to 10,000 (got -1)"  # said once


def test_the_reports_parameter_section_lists_every_field_and_its_value():
    from mediasim.experiments.params import parameters_section

    assert parameters_section(_Toy(names=("a", "b"))) == [
        "## Parameters", "",
        "| parameter    | value      |\n"
        "|:-------------|:-----------|\n"
        "| replications | 1          |\n"
        "| names        | ('a', 'b') |\n"
        "| counts       | (5,)       |\n"
        "| width        | 1.0        |", ""]



class _Stop(Exception):
    pass


class _Recorder:
    """A study campaign's run cache that keeps the jobs of the first
    ``run_many`` it serves and stops the study there."""

    def __init__(self) -> None:
        self.jobs: list[Any] = []

    def run_many(self, jobs, analyse, progress, desc):
        self.jobs = list(jobs)
        raise _Stop


def _runs(jobs) -> list[str]:
    from mediasim.campaign.keys import run_key

    return [run_key(j.scenario, j.seed, j.replication, "build") for j in jobs]


@pytest.mark.parametrize("name, options, changes", [
    ("iw10", {}, {}), ("media-scaling", {}, {}), ("svc", {}, {}), ("rmtp", {}, {}),
    ("rmtp", {}, {"compare_variant": "true"}), ("rmcat", {}, {}), ("rmcat", {"cases": (2, 6)}, {}),
    ("avpf", {}, {}), ("avpf", {"cases": (3, 9)}, {})])
def test_study_jobs_are_the_runs_reproduce_makes(tmp_path, name, options, changes):
    """What a study campaign counts and checks before it runs (the
    study's ``study_jobs``) is what ``reproduce`` runs first, in its
    order; with sensitivity, those runs and then more."""
    mod = experiments.get(name)
    p = mod.Params().quick().with_overrides(changes)
    rec = _Recorder()
    with pytest.raises(_Stop):
        mod.reproduce(p, tmp_path / "out", progress=False, cache=rec, **options)
    planned = mod.study_jobs(p, **options)
    assert planned and _runs(planned) == _runs(rec.jobs)
    if mod.HAS_SENSITIVITY:
        more = mod.study_jobs(p, sensitivity=True, **options)
        assert _runs(more[:len(planned)]) == _runs(planned) and len(more) > 2 * len(planned)


@pytest.mark.parametrize("name", list(experiments.STUDIES))
def test_a_value_the_study_takes_makes_scenarios_the_engine_takes_or_refuses_as_given(name):
    """Every numeric parameter at 0, 1, 0.001 and 10^6, alone on the quick
    parameters: the study's check refuses it, or the engine takes every
    scenario the study makes of it, or (10^6) the engine refuses it naming
    the value as given (``got 1000000``). A value the engine would refuse
    in other terms is named in the study's when it is set, not as a
    scenario field the user never wrote (packet_bytes 1 once reached the
    engine as an MSS of -39)."""
    from mediasim import _engine
    from mediasim.campaign.keys import canonical
    from mediasim.errors import ScenarioError

    mod = experiments.get(name)
    base = mod.Params().quick()
    taken, refused = 0, 0
    for f in dataclasses.fields(base):
        value = getattr(base, f.name)
        first = value[0] if isinstance(value, tuple) and value else value
        if isinstance(first, bool) or not isinstance(first, int | float) or f.name in ("seed", "replications"):
            continue
        for x in (0, 1, 0.001, 10 ** 6):
            if isinstance(first, int) and x != int(x):
                continue
            v = type(first)(x)
            q = dataclasses.replace(base, **{f.name: tuple([v] * len(value)) if isinstance(value, tuple) else v})
            try:
                q.check()
            except ValueError:
                refused += 1
                continue
            taken += 1
            problems = []
            for text in {canonical(j.scenario) for j in mod.study_jobs(q)}:
                try:
                    _engine.validate(text)
                except ScenarioError as e:
                    problems += e.errors
            if x == 10 ** 6:
                problems = [p for p in problems if "(got 1000000)" not in p[1]]
            assert not problems, (f.name, x, problems[:3])
    assert taken >= 10 and refused >= 5


@pytest.mark.parametrize("name, refused, taken, said", [
    ("media-scaling", {"packet_bytes": "40"}, {"packet_bytes": "41"},
     "packet_bytes must be 41..65535, above the 40 bytes of TCP/IP headers (got 40)"),
    ("media-scaling", {"packet_bytes": "65536"}, {"packet_bytes": "65535"},
     "packet_bytes must be 41..65535, above the 40 bytes of TCP/IP headers (got 65536)"),
    ("media-scaling", {"red_max_th": "5"}, {"red_max_th": "5.01"}, "red_max_th must be above red_min_th (5; got 5)"),
    ("media-scaling", {"timeout_factor": "0.99"}, {"timeout_factor": "1"},
     "timeout_factor must be at least 1 control RTT (got 0.99)"),
    ("media-scaling", {"feedback_bytes": "27"}, {"feedback_bytes": "28"},
     "feedback_bytes must be at least 28, a UDP/IP packet (got 27)"),
    ("media-scaling", {"tcp_min_rto_ms": "60001"}, {"tcp_min_rto_ms": "60000"},
     "tcp_min_rto_ms must be at most 60000, TCP's maximum RTO (got 60001)"),
    ("iw10", {"total_bytes": "5"}, {"total_bytes": "6"}, "total_bytes must give each of 6 flows a byte (got 5)"),
    ("iw10", {"tcp_start_s": "20", "tcp_start_spread_s": "1"}, {"tcp_start_s": "19.9", "tcp_start_spread_s": "1"},
     "tcp_start_s + tcp_start_spread_s must be before the run ends at 21 s (got 21)"),
    ("iw10", {"cbr_payload_bytes": "65496"}, {"cbr_payload_bytes": "65495"},
     "cbr_payload_bytes + rtp_header_bytes must be at most 65507, a UDP payload (got 65508)"),
    ("iw10", {"min_rto_ms": "60001"}, {"min_rto_ms": "60000"},
     "min_rto_ms must be at most 60000, TCP's maximum RTO (got 60001)"),
    ("avpf", {"payload_200k": "65496"}, {"payload_200k": "65495"},
     "payload_200k must be at most 65495, an RTP payload (got 65496)"),
    ("svc", {"fec_buffers": "5,1"}, {"fec_buffers": "2"}, "fec_buffers must be at least 2 packets"),
    ("svc", {"packet_bytes": "40"}, {"packet_bytes": "41"}, "packet_bytes must be at least 41 (got 40)"),
    ("svc", {"start_spread_s": "60"}, {"start_spread_s": "59.9"},
     "start_spread_s must end before the video does at duration_s (60 s; got 60)"),
    ("rmtp", {"cong_a": "31"}, {"cong_a": "30"}, "cong_a must be at most cong_c (30; got 31)"),
    ("rmtp", {"initial_window": "11"}, {"initial_window": "10"}, "initial_window must be at most ws (10; got 11)"),
    ("rmtp", {"data_packet_bytes": "43"}, {"data_packet_bytes": "44"},
     "data_packet_bytes must be at least 44 (got 43)"),
    ("avpf", {"session_bws_bps": "2e6,26198400"}, {"session_bws_bps": "2e6,26198399"},
     "session_bws_bps: 26198400 bit/s makes 20 ms payloads of 65,496 bytes, more than an RTP payload's 65495"),
    ("avpf", {"multicast_bws_bps": "26198400"}, {"multicast_bws_bps": "26198399"},
     "multicast_bws_bps: 26198400 bit/s makes 20 ms payloads of 65,496 bytes, more than an RTP payload's 65495"),
    ("avpf", {"case4_link_factor": "4676"}, {"case4_link_factor": "4675"},
     "case4_link_factor: 4676 makes case 4's 2e+06 bit/s bottleneck 9.352e+09 bit/s and its cross traffic "
     "1,000,154 packets/s; the engine takes at most 1e12 bit/s and 1e6 packets/s"),
    ("rmcat", {"jitter_std_ms": "500000000.1"}, {"jitter_std_ms": "500000000"},
     "jitter_std_ms must be at most 500000000, half the engine's bound on the jitter (1e9 ms; got 500000000.1)"),
    ("svc", {"svc_layer_scale": "2500000.1"}, {"svc_layer_scale": "2500000"},
     "svc_layer_scale must be above 0 and at most 2500000, which keeps every layer at most 1e12 bit/s "
     "(got 2500000.1)"),
    ("rmcat", {"start_bps": "149999"}, {"start_bps": "150000"},
     "start_bps must be from min_bps to max_bps (150000 to 1500000; got 149999)"),
    ("rmcat", {"start_bps": "1500001"}, {"start_bps": "1500000"},
     "start_bps must be from min_bps to max_bps (150000 to 1500000; got 1500001)"),
    ("avpf", {"newpred_duration_s": "1"}, {"newpred_duration_s": "1.01"},
     "newpred_duration_s must exceed the FTP flows' 1 s start spread (got 1)"),
    ("avpf", {"multicast_bws_bps": "1.1,64e3"}, {"multicast_bws_bps": "1.12,64e3"},
     "congestion_factor times the least of multicast_bws_bps must be at least 1 bit/s, case 3's congested link "
     "(got 0.99)"),
])
def test_a_value_the_engine_would_refuse_is_named_in_the_studys_terms_at_its_bound(name, refused, taken, said):
    """Each bound is the engine's own: the value the study takes makes
    scenarios the engine takes, and the one it refuses, let past the
    study's check, scenarios the engine refuses. Two are the study's own,
    stricter than the engine's (_STUDY_OWN)."""
    from mediasim.campaign.study_plan import study_runs
    from mediasim.experiments.params import read_overrides

    p = experiments.get(name).Params()
    assert _problem(p, **refused) == f"{name}: {said}"
    study_runs(name, p.with_overrides(taken), {})
    unchecked, problems = read_overrides(p, refused)
    assert not problems
    if (name, next(iter(refused))) in _STUDY_OWN:
        study_runs(name, unchecked, {})
    else:
        with pytest.raises(ValueError, match=f"^{name} would fail:"):
            study_runs(name, unchecked, {})


#: Bounds that are the study's, not the engine's: an FEC comparison's AF1
#: buffer holds at least 2 packets as the transport sweep's does, and the
#: video flows start before the video stops (the engine takes a start up
#: to the run's end, after the drain).
_STUDY_OWN = {("svc", "fec_buffers"), ("svc", "start_spread_s")}


def test_reproduce_dry_run_counts_the_runs_checks_each_scenario_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "3", "--case", "4", "--dry-run",
                                  "--out", str(out)])
    jobs = experiments.get("avpf").study_jobs(experiments.get("avpf").Params().quick(), cases=(3, 4))
    scenarios = len({json.dumps(j.scenario, sort_keys=True) for j in jobs})
    assert (r.exit_code, r.output) == (0, f"avpf: {len(jobs)} runs of {scenarios} scenarios, every one valid\n"
                                          f"output into {out}/\nnothing was run or written (dry run)\n")
    assert not out.exists()
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--set", "mss_bytes=100000", "--set", "flows=1",
                                  "--set", "accesses=wired", "--dry-run", "--out", str(out)])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "error: iw10 would fail:\n  flows[1].tcp.mss_bytes: must be 1..=65495 (got 100000)\n"
    # An output folder the real run would refuse is refused the same way.
    out.mkdir()
    (out / "mine.txt").write_text("mine")
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--dry-run", "--out", str(out), "--overwrite"])
    assert r.exit_code == 2 and "holds files that are not a mediasim output" in r.stderr
    r = CliRunner().invoke(main, ["reproduce", "all", "--quick", "--dry-run", "--out", str(tmp_path / "all")])
    lines = r.output.splitlines()
    assert r.exit_code == 0 and len(lines) == len(experiments.STUDIES) + 2, r.output
    for name, line in zip(experiments.STUDIES, lines):
        n = len(experiments.get(name).study_jobs(experiments.get(name).Params().quick()))
        assert line.startswith(f"{name}: {n} runs of ") and line.endswith(", every one valid")
    assert lines[-2:] == [f"output into {tmp_path / 'all'}/ (index.md, index.html, one folder per study)",
                          "nothing was run or written (dry run)"]
    assert not (tmp_path / "all").exists()


def test_a_value_only_a_sensitivity_setting_refuses_stops_reproduce_before_any_run(tmp_path, monkeypatch):
    """22.5 s + the default 1 s of start spread ends inside the 25 s quick
    run; the sensitivity setting's 3 s does not. Said before the study's
    own runs, not after them."""
    from mediasim.experiments import media_scaling

    def no_runs(*args, **kwargs):
        raise AssertionError("a run was started")

    monkeypatch.setattr(media_scaling, "run_many", no_runs)
    r = CliRunner().invoke(main, ["reproduce", "media-scaling", "--quick", "--sensitivity", "--set", "join_s=22.5",
                                  "--out", str(tmp_path / "out")])
    assert (r.exit_code, r.stderr) == (2, (
        "error: media-scaling would fail:\n  parameters: media-scaling: start_spread_s must end before the run does "
        "(sensitivity setting start_spread_s, high: 3.0)\n")), r.output
    assert not (tmp_path / "out").exists()


def test_reproduce_says_at_most_30_problems_then_how_many_more():
    from mediasim.campaign.study_plan import study_runs
    from mediasim.experiments import svc

    said = {}
    for n in (30, 31):
        p = svc.Params().quick().with_overrides({"tcp_flows": str(n), "tcp_mss_bytes": "100000", "fec_shares": ""})
        with pytest.raises(ValueError) as e:
            study_runs("svc", p, {})
        said[n] = str(e.value).splitlines()
    assert said[30][0] == "svc would fail:" and len(said[30]) == 31
    assert said[30][1:] == [f"  flows[{4 + i}].tcp.mss_bytes: must be 1..=65495 (got 100000)" for i in range(30)]
    assert said[31] == [*said[30], "  and 1 more problems"]


def test_every_list_parameter_holds_at_most_100_values():
    from mediasim.experiments import STUDIES, get
    from mediasim.experiments.params import MAX_VALUES

    assert MAX_VALUES == 100
    iw10 = get("iw10").Params()
    assert len(iw10.with_overrides({"flows": ",".join(map(str, range(1, 101)))}).flows) == 100
    with pytest.raises(ValueError) as e:
        iw10.with_overrides({"flows": ",".join(map(str, range(1, 102)))})
    assert str(e.value) == "iw10: flows must hold at most 100 values (got 101)"
    # Every list, grouped ones (each group a value) too: beyond it, said alone.
    lists = 0
    for name in STUDIES:
        params = get(name).Params()
        hints = typing.get_type_hints(type(params))
        for f in dataclasses.fields(params):
            v = getattr(params, f.name)
            if isinstance(v, tuple) and v and typing.get_args(hints[f.name])[-1:] == (Ellipsis,):  # not a pair
                lists += 1
                long = dataclasses.replace(params, **{f.name: v[:1] * 101})
                with pytest.raises(ValueError) as e:
                    long.check()
                assert str(e.value) == f"{name}: {f.name} must hold at most 100 values (got 101)", f.name
    assert lists >= 20


def test_a_studys_runs_and_scenarios_are_limited_as_they_are_made(monkeypatch):
    from mediasim.campaign import study_plan
    from mediasim.campaign.study_plan import study_runs
    from mediasim.experiments import avpf, iw10

    assert (study_plan.MAX_JOBS, study_plan.MAX_STUDY_SCENARIOS) == (1_000_000, 30_000)
    # AVPF's 380 quick runs; IW10's 12 scenarios (3 flow counts, 2
    # windows, 2 accesses): each at a limit of as many, and of one fewer.
    for name, p, limit, kind, n in (("avpf", avpf.Params().quick(), "MAX_JOBS", "runs", 380),
                                    ("iw10", iw10.Params(), "MAX_STUDY_SCENARIOS", "scenarios", 12)):
        monkeypatch.setattr(study_plan, limit, n)
        runs = study_runs(name, p, {})
        assert (runs.jobs if kind == "runs" else runs.scenarios) == n
        monkeypatch.setattr(study_plan, limit, n - 1)
        with pytest.raises(ValueError) as e:
            study_runs(name, p, {})
        assert str(e.value) == f"{name} would fail:\n  parameters: they make more than {n - 1} {kind} (a study's most)"
        monkeypatch.undo()


def test_the_limit_on_what_is_made_counts_only_within_it_and_each_kind_alone():
    from mediasim import Job, Scenario
    from mediasim._budget import TooMany, making_at_most

    with making_at_most(runs=2, scenarios=1):
        Scenario("a")
        Job({}), Job({})
        with pytest.raises(TooMany) as runs:
            Job({})
        with pytest.raises(TooMany) as scenarios:
            Scenario.from_dict({})
    assert (str(runs.value), runs.value.kind, runs.value.most) == ("more than 2 runs", "runs", 2)
    assert (str(scenarios.value), scenarios.value.kind) == ("more than 1 scenarios", "scenarios")
    assert len([Job({}) for _ in range(5)]) == 5 and Scenario("b")  # outside: nothing counted


def test_reproduce_with_a_runs_folder_stores_each_run_and_resumes_from_them_after_a_failure(tmp_path, monkeypatch):
    """The study's analysis fails after its runs: nothing is written to
    the output, the runs stay stored, and the next invocation reads them
    back, running none, into the output a study without a store writes."""
    from mediasim import _engine, read_sweep
    from mediasim.experiments import iw10

    p = iw10.Params().quick()
    runs, out = tmp_path / "runs", tmp_path / "out"

    def broken(rows):
        raise RuntimeError("an analysis bug")

    monkeypatch.setattr(iw10, "aggregate", broken)
    with pytest.raises(RuntimeError, match="an analysis bug"):
        experiments.reproduce("iw10", p, out, workers=1, progress=False, runs=runs)
    assert not out.exists() and len([d for d in (runs / "runs").iterdir() if not d.name.startswith(".")]) == 48
    monkeypatch.undo()

    def no_engine(*a, **k):
        raise AssertionError("a stored run was run again")

    monkeypatch.setattr(_engine, "run", no_engine)
    experiments.reproduce("iw10", p, out, workers=1, progress=False, runs=runs)
    monkeypatch.undo()
    experiments.reproduce("iw10", p, tmp_path / "plain", workers=1, progress=False)
    for f in ("summary.parquet", "replications.parquet", "report.md"):
        assert (out / f).read_bytes() == (tmp_path / "plain" / f).read_bytes(), f
    flows = read_sweep(runs, "flows")  # the study's runs, read back as a campaign's
    assert flows.groupby(["seed", "replication", "access", "flows", "iw"]).ngroups == 48
    with pytest.raises(ValueError, match="give runs \\(a folder\\) or cache, not both"):
        experiments.reproduce("iw10", p, tmp_path / "x", runs=runs, cache=object())
    for o, r in ((tmp_path / "x", tmp_path / "x"), (tmp_path / "x", tmp_path / "x" / "r"), (runs / "o", runs)):
        with pytest.raises(ValueError) as e:
            experiments.reproduce("iw10", p, o, runs=r)
        assert str(e.value) == (f"the runs' folder {r} and the output folder {o} must be apart, "
                                "neither inside the other")
    assert not (tmp_path / "x").exists() and not (runs / "o").exists()


def test_reproduce_dry_run_counts_the_runs_stored_in_a_runs_folder(tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    args = ["reproduce", "iw10", "--quick", "--out", str(tmp_path / "out"), "--runs", str(tmp_path / "runs")]
    r = CliRunner().invoke(main, [*args, "--dry-run"])
    assert r.exit_code == 0 and r.output.splitlines()[1] == f"runs in {tmp_path / 'runs'}/: 0 of 48 stored, 48 to run"
    assert not (tmp_path / "runs").exists()
    assert CliRunner().invoke(main, ["-q", *args]).exit_code == 0
    r = CliRunner().invoke(main, [*args, "--dry-run", "--out", str(tmp_path / "out2")])
    assert r.output.splitlines()[1] == f"runs in {tmp_path / 'runs'}/: 48 of 48 stored, 0 to run"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    for flags in ([], ["--dry-run"]):
        r = CliRunner().invoke(main, [*args[:-1], str(tmp_path / "mine"), "--out", str(tmp_path / "o3"), *flags])
        assert r.exit_code == 2 and r.stderr.startswith(f"error: {tmp_path / 'mine'} holds files that are not a "
                                                        "campaign"), r.output
    r = CliRunner().invoke(main, [*args[:3], "--out", str(tmp_path / "runs" / "o"), "--runs", str(tmp_path / "runs"),
                                  "--dry-run"])
    assert (r.exit_code, r.stderr) == (2, f"error: the runs' folder {tmp_path / 'runs'} and the output folder "
                                          f"{tmp_path / 'runs' / 'o'} must be apart, neither inside the other\n")
    r = CliRunner().invoke(main, ["reproduce", "all", "--runs", str(tmp_path / "runs")])
    assert r.exit_code == 2 and "reproduce all takes only" in r.stderr


def test_the_driver_checks_the_scenarios_unless_its_caller_has(tmp_path, monkeypatch):
    from mediasim.campaign import study_plan

    checked = []
    real = study_plan.study_runs
    monkeypatch.setattr(study_plan, "study_runs", lambda *a: checked.append(a[0]) or real(*a))
    p = experiments.get("iw10").Params().quick().with_overrides({"replications": "1", "flows": "1",
                                                                 "accesses": "wired"})
    experiments.reproduce("iw10", p, tmp_path / "a", workers=1, progress=False)
    experiments.reproduce("iw10", p, tmp_path / "b", workers=1, progress=False, scenarios_checked=True)
    assert checked == ["iw10"]
    assert (tmp_path / "b" / "report.html").is_file()
