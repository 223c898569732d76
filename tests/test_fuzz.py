"""The fuzzer of the scenario loader, validator and engine
(mediasim.validation.fuzz; the 100,000-input run is its own command), a
short smoke run, and the corpus of inputs that once crashed, hung or ate
memory (tests/data/fuzz_corpus): each now ends in a ScenarioError naming
a field or the file."""

from pathlib import Path

import pytest

import mediasim
from mediasim.validation import fuzz

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
