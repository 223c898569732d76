"""Every reference study keeps one contract (``StudyModule``) and runs
through one driver (``mediasim.experiments.reproduce``): the command
line, ``reproduce all`` and study campaigns find what a study offers in
its declarations, not by probing it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mediasim import experiments
from mediasim.cli import main


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
