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


def test_the_campaign_pages_dry_runs_print_what_the_command_prints(tmp_path):
    """Each ``$ mediasim campaign ... --dry-run`` block of
    docs/campaigns.md, run with its folder in ``tmp_path``: the command's
    output is the block's (``c.toml`` is the block's own description of
    the example before it)."""
    import re
    import shlex

    from click.testing import CliRunner

    from mediasim.cli import main

    page = (ROOT / "docs" / "campaigns.md").read_text()
    blocks = [b for b in re.findall(r"```text\n(.*?)```", page, re.S) if b.startswith("$ mediasim campaign")]
    assert len(blocks) == 3
    for block in blocks:
        command, *said = block.rstrip("\n").split("\n")
        args = shlex.split(command[2:], comments=True)[1:]
        assert "--dry-run" in args
        if args[1] == "c.toml":  # "the example above, its grid mss_bytes = [1460, 100000]"
            example = (ROOT / "examples" / "campaigns" / "iw10_access_rate.toml").read_text()
            assert "\nrate = [1e6, 2e6, 4e6]\n" in example
            (tmp_path / "c.toml").write_text(example.replace("\nrate = [1e6, 2e6, 4e6]\n",
                                                             "\nmss_bytes = [1460, 100000]\n"))
            args[1] = str(tmp_path / "c.toml")
        else:
            args[1] = str(ROOT / args[1])
        folder = args[args.index("--out") + 1] if "--out" in args else None
        if folder:
            args[args.index("--out") + 1] = str(tmp_path / "out")
        r = CliRunner().invoke(main, args)
        out = r.output.replace(str(tmp_path / "out"), folder) if folder else r.output
        assert out.rstrip("\n").split("\n") == said, block
        assert r.exit_code == (2 if said[0].startswith("error:") else 0)
