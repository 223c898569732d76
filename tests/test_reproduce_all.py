"""mediasim reproduce all --quick: every study, a Markdown report and a
self-contained HTML page each, and an index of both."""

import re

from click.testing import CliRunner

from mediasim import _engine
from mediasim.cli import main
from mediasim.experiments import STUDIES


def test_reproduce_all_quick_writes_every_report_and_an_index(tmp_path):
    r = CliRunner().invoke(main, ["-q", "reproduce", "all", "--quick", "--out", str(tmp_path), "--workers", "2"])
    assert r.exit_code == 0, r.output
    index = (tmp_path / "index.md").read_text()
    assert _engine.build_id() in index and "quick mode" in index
    # Nothing of the host or the moment: the same command writes the same bytes.
    assert "wall" not in index and " s in all" not in index
    assert re.search(r"in \d+ s \(each study's time with -v\)", r.output), r.output
    page = (tmp_path / "index.html").read_text()
    for name in STUDIES:
        assert f"[{name}/report.md]({name}/report.md)" in index
        assert f'href="{name}/report.html"' in page
        html = (tmp_path / name / "report.html").read_text()
        # Self-contained: every image inline, no file or network reference.
        srcs = re.findall(r"src='([^']*)'|src=\"([^\"]*)\"", html)
        assert srcs and all((a or b).startswith("data:image/png;base64,") for a, b in srcs), name
        assert "<table>" in html and "engine build" in html


def test_reproduce_all_refuses_options_of_one_study(tmp_path):
    r = CliRunner().invoke(main, ["reproduce", "all", "--case", "1", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "reproduce all takes only" in r.output
