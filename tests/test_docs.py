"""The documentation: the site builds with no warning (mkdocs --strict,
with the API reference from the docstrings), and the getting-started
notebook runs from top to bottom."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_without_a_warning(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("Scenario", "run", "Results", "read_sweep", "TableNotFound", "OutputFolderError"):
        assert name in api, name


def test_the_getting_started_notebook_runs(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "docs" / "getting-started.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "is not a mediasim table" in text and "already holds an earlier output" in text


def test_the_readme_does_not_call_a_supported_feature_unsupported():
    readme = (ROOT / "README.md").read_text()
    unsupported = readme.split("## Not supported yet", 1)[1].split("\n## ", 1)[0]
    assert "Dask" not in unsupported  # campaigns run on Dask clusters (docs/campaigns.md)
