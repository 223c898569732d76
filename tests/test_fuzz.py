"""The fuzzer of the scenario loader, validator and engine
(mediasim.validation.fuzz; the 100,000-input run is its own command), a
short smoke run, and the corpus of inputs that once crashed, hung or ate
memory (tests/data/fuzz_corpus): each now ends in a ScenarioError naming
a field or the file."""

from pathlib import Path

import pytest

import mediasim
from mediasim.validation import fuzz

EXAMPLE = Path(__file__).parents[1] / "examples" / "dumbbell.toml"
CORPUS = sorted((Path(__file__).parent / "data" / "fuzz_corpus").iterdir())


def test_a_short_fuzz_run_finds_no_failure():
    counts, failed = fuzz.fuzz(300, seed=3, workers=1, chunk=300)
    assert sum(counts.values()) == 300
    assert not any(counts.get(k) for k in fuzz.FAILURES), failed[:3]
    # The mutations reach both outcomes: some inputs run, most are refused.
    assert counts["ok"] + counts.get("stopped", 0) > 10 and counts["rejected"] > 100


def test_mutations_change_the_example_they_start_from():
    base = fuzz.bases()[0]
    out = fuzz.mutate(base, [("set", 5, "x"), ("delete", 9, None)])
    assert out != base and base == fuzz.bases()[0]  # the base itself is untouched


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_input_that_once_failed_is_now_a_clear_error(path):
    with pytest.raises(mediasim.ScenarioError) as e:
        mediasim.run(path, seed=1)
    assert e.value.errors, str(e.value)  # named: (field or file, message)
    assert fuzz._rejected(e.value) == ("rejected", ""), str(e.value)


def test_a_refusal_in_the_readers_jargon_or_without_a_field_counts_as_a_failure():
    def outcome(*errors):
        return fuzz._rejected(mediasim.ScenarioError("invalid scenario", list(errors)))[0]

    assert outcome(("flows[0].payload_bytes", "must be a whole number from 0 to 4294967295 (got -1)")) == "rejected"
    assert outcome(("links[0].queue.x", "unknown field; did you mean a? (expected one of a, map)")) == "rejected"
    assert outcome(("links[0].a", "must be given (this field has no default)")) == "rejected"
    assert outcome(("links[0].queue.type", "must be one of red, pie (got x)")) == "rejected"
    for jargon in ["invalid type: sequence, expected u32", "must be f64", "expected struct NodeSpec",
                   "expected a sequence", "invalid length 3, expected fewer elements in array", "expected usize",
                   "unknown variant `x`, expected one of `red`, `map`", "unknown field `x`, expected `a` or `b`",
                   "unknown field `x`, there are no fields", "missing field `name`"]:
        assert outcome(("nodes[0]", "fine"), ("nodes[1]", jargon)) == "jargon", jargon
    assert outcome(("", "must be a number (got true)")) == "jargon"  # no field named
    assert "jargon" in fuzz.FAILURES


def test_a_scaled_number_keeps_its_type_and_nothing_else_is_scaled():
    assert fuzz._scaled(3, 0.1) == 1 and isinstance(fuzz._scaled(3, 0.1), int)  # not rounded to 0
    assert fuzz._scaled(-3, 1e-9) == -1 and fuzz._scaled(3, 0) == 0 and fuzz._scaled(0, 1e9) == 0
    assert fuzz._scaled(7, 1e3) == 7000 and isinstance(fuzz._scaled(7, 1.1), int)
    assert fuzz._scaled(2.5, -1) == -2.5 and isinstance(fuzz._scaled(2.0, 2), float)
    assert fuzz._scaled(True, 10) is True and fuzz._scaled("5", 10) == "5" and fuzz._scaled(None, 2) is None
    assert fuzz._scaled(2 ** 1100, 1e9) == 2 ** 1100  # too large for a float: left as it is


def test_a_scale_mutation_changes_one_number_and_nothing_else():
    base = {"a": "x", "b": [True, 4, {"c": 2.5}], "d": None}
    numbers = [(["b", 1], 4), (["b", 2, "c"], 2.5)]
    for at in range(6):
        out = fuzz.mutate(base, [("scale", at, 2)])
        changed = [path for path, v in numbers if _get(out, path) != v]
        assert len(changed) == 1, (at, out)
        assert out["a"] == "x" and out["b"][0] is True and out["d"] is None
    assert fuzz.mutate(base, [("scale", 0, 2)])["b"][1] == 8
    assert fuzz.mutate(base, [("scale", 1, 2)])["b"][2]["c"] == 5.0
    assert fuzz.mutate({"a": "x"}, [("scale", 3, 2)]) == {"a": "x"}  # no number: unchanged


def _get(x, path):
    for k in path:
        x = x[k]
    return x


def test_the_digest_of_a_run_sees_its_results_and_not_its_wall_time():
    a = mediasim.run(EXAMPLE, seed=1)
    b = mediasim.run(EXAMPLE, seed=1)
    assert fuzz.digest(a) == fuzz.digest(b)
    assert fuzz.digest(mediasim.run(EXAMPLE, seed=2)) != fuzz.digest(a)


def test_an_input_whose_second_run_differs_counts_as_a_failure(monkeypatch):
    base_list = [mediasim.Scenario.from_dict(mediasim.load_scenario(EXAMPLE).to_dict()).to_dict()]
    digests = iter(["one", "two"])
    monkeypatch.setattr(fuzz, "digest", lambda res: next(digests))
    # idx 0 reruns (0 // 1 % RERUN_EVERY == 0); a scale by 1 leaves the input as it was.
    assert fuzz.probe((0, [("scale", 0, 1)], None, []), base_list)[0] == "nondeterministic"
    assert "nondeterministic" in fuzz.FAILURES
    monkeypatch.setattr(fuzz, "digest", lambda res: "same")
    assert fuzz.probe((0, [("scale", 0, 1)], None, []), base_list) == ("ok", "")
    monkeypatch.setattr(fuzz, "digest", lambda res: next(digests))  # exhausted: a rerun would raise
    assert fuzz.probe((2, [("scale", 0, 1)], None, []), base_list) == ("ok", "")  # 2 // 1 % 4: no rerun
