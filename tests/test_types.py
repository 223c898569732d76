"""Type checkers see the public API's real types, not ``Any`` (the names
are imported lazily at run time, and declared for checkers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_mypy_reveals_the_types_of_run_results_and_scenario(tmp_path):
    src = tmp_path / "use.py"
    src.write_text("import mediasim\n"
                   "reveal_type(mediasim.run)\n"
                   "reveal_type(mediasim.Results)\n"
                   "reveal_type(mediasim.Scenario)\n"
                   "reveal_type(mediasim.read_sweep)\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
                        "--cache-dir", str(tmp_path / "cache"), str(src)], capture_output=True, text=True,
                       cwd=tmp_path)
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    revealed = [line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 4, out
    assert revealed[0].endswith('-> mediasim.results.Results"') and "packets: bool" in revealed[0]
    assert revealed[1].endswith('-> mediasim.results.Results"')
    assert revealed[2].endswith('-> mediasim.scenario.Scenario"')
    assert revealed[3].startswith('"def (folder: str | pathlib.Path, table: str'), revealed[3]


def test_the_package_type_checks(tmp_path):
    """mypy, as pyproject.toml configures it, finds no error in the
    package: a call with a keyword the callee lacks, an import of a module
    that does not exist or a value that may be None used as a dict fails
    here."""
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], capture_output=True,
                       text=True, cwd=root)
    assert r.returncode == 0 and "Success: no issues found" in r.stdout, r.stdout + r.stderr
