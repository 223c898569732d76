"""The package's shape: importing mediasim or any of its modules changes
nothing in the importing process, and plotting leaves matplotlib's state
(backend, pyplot) alone."""

import json
import subprocess
import sys

CHECK = r"""
import importlib, json, os, pkgutil, sys
import matplotlib
matplotlib.use("svg")              # the user's own choice
env = dict(os.environ)
import mediasim
# ns3_dumbbell.py is a script for ns-3's own interpreter (it imports ns-3),
# run by path by the cross-check; it is not a module of mediasim's.
names = sorted(m.name for m in pkgutil.walk_packages(mediasim.__path__, "mediasim.")
               if m.name != "mediasim.validation.refsim.ns3_dumbbell")
for n in names:
    importlib.import_module(n)
after_import = {"env_same": dict(os.environ) == env, "backend": matplotlib.get_backend()}
# Draw and save a plot through mediasim's helpers.
from mediasim.reporting.plots import subplots
fig, ax = subplots(figsize=(2, 2))
ax.plot([0, 1], [0, 1])
fig.savefig(sys.argv[1])
print(json.dumps({"modules": names, **after_import, "backend_after_plot": matplotlib.get_backend(),
                  "pyplot_loaded": "matplotlib.pyplot" in sys.modules, "env_same_after_plot": dict(os.environ) == env}))
"""


def test_importing_every_module_and_plotting_has_no_side_effects(tmp_path):
    png = tmp_path / "p.png"
    out = subprocess.run([sys.executable, "-c", CHECK, str(png)], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    for pkg in ("mediasim.experiments", "mediasim.validation", "mediasim.reporting"):
        assert pkg in r["modules"], r["modules"]
    assert r["env_same"] and r["env_same_after_plot"]
    assert r["backend"] == "svg" and r["backend_after_plot"] == "svg"
    assert not r["pyplot_loaded"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_user_api_is_at_the_top():
    import mediasim

    for name in ("Scenario", "load_scenario", "run", "run_many", "replications", "grid", "run_sweep",
                 "Results", "ScenarioError"):
        assert callable(getattr(mediasim, name)), name


def test_cli_lists_studies_and_commands_without_cutting_their_help():
    from click.testing import CliRunner

    from mediasim.cli import main
    from mediasim.experiments import STUDIES

    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    commands = out.split("Commands:")[1]
    assert "..." not in commands and "campaign" in commands and "-v, --verbose" in out
    out = CliRunner().invoke(main, ["reproduce", "--help"], terminal_width=80).output
    assert all(name in out for name in STUDIES)


def test_results_and_scenario_show_what_they_hold(examples):
    import mediasim

    sc = mediasim.load_scenario(examples / "dumbbell.toml")
    assert repr(sc) == "Scenario('dumbbell', 20.0 s, 8 nodes, 7 links, 3 flows)"
    res = mediasim.run(sc, seed=1)
    assert repr(res).startswith("Results('dumbbell', seed 1, replication 0: 20.0 s simulated, ")
    assert "<table" in res._repr_html_()
    # Every table is a property (tab completion sees them), with a docstring.
    assert {"flows", "rtp", "tcp_series", "rmtp"} <= {n for n in dir(mediasim.Results)}
    assert "TCP flow" in mediasim.Results.tcp.__doc__
    assert res.rtp.empty  # no RTP session in this scenario


def test_cli_verbosity_goes_through_logging(examples):
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "mediasim", "-v", "run", str(examples / "dumbbell.toml")]
    err = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    assert "INFO mediasim.runner: dumbbell seed 0 replication 0" in err
    cmd[3] = "-q"
    assert subprocess.run(cmd, capture_output=True, text=True, check=True).stderr == ""


def test_quiet_means_no_progress_bars(examples, tmp_path):
    """-q silences the bars too, even those a caller asked for (tqdm's
    TQDM_DISABLE applies only to bars that do not say)."""
    import subprocess
    import sys

    for args in (["run", str(examples / "dumbbell.toml")],
                 ["sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=3,4", "--out", str(tmp_path)]):
        done = subprocess.run([sys.executable, "-m", "mediasim", "-q", *args], capture_output=True, text=True)
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr[-300:])


def test_a_quiet_sweep_counts_its_runs_without_importing_tqdm(examples, tmp_path):
    """A bar that is off is mediasim's own no-op (tqdm.auto's import took
    30 ms of every quiet campaign command); it still counts."""
    import subprocess
    import sys

    from mediasim.log import bar

    b = bar(3, "runs", progress=False)
    for _ in range(3):
        b.update()
    b.set_postfix_str("x")
    b.close()
    assert (b.n, b.total) == (3, 3)
    cmd = [sys.executable, "-X", "importtime", "-m", "mediasim", "-q", "sweep", str(examples / "dumbbell.toml"),
           "--vary", "duration_s=3", "--out", str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")]
    assert "pandas" in imported and not [m for m in imported if m.startswith("tqdm")]


def test_run_without_out_imports_neither_pandas_nor_numpy_and_prints_the_same(examples, tmp_path):
    """`mediasim run FILE` prints from plain lists (pandas alone takes
    longer to import than a small run); with --out it goes through Results
    and pandas; the printed tables are the same text."""
    import subprocess
    import sys

    for name in ("tcp_web_and_voice.toml", "rtp_avpf_multicast.yaml", "calls.toml"):
        cmd = [sys.executable, "-X", "importtime", "-m", "mediasim", "run", str(examples / name)]
        lean = subprocess.run(cmd, capture_output=True, text=True, check=True)
        imported = {line.split("|")[-1].strip() for line in lean.stderr.splitlines() if "import time:" in line}
        # Nor pathlib and logging (4 ms each of a 0.1 s command), nor the
        # other commands' module.
        heavy = {"pandas", "numpy", "pyarrow", "tqdm", "matplotlib", "pathlib", "logging", "mediasim.cli_commands"}
        assert not heavy & imported, name
        full = subprocess.run(cmd[:1] + cmd[3:] + ["--out", str(tmp_path / name)], capture_output=True, text=True,
                              check=True)
        keep = lambda text: [x for x in text.splitlines() if not x.startswith(("events:", "tables written"))]  # noqa: E731
        assert keep(lean.stdout) == keep(full.stdout)
        assert ("TCP:" in lean.stdout, "RTP members:" in lean.stdout, "Media:" in lean.stdout) == \
            (name.startswith("tcp"), name != "tcp_web_and_voice.toml", name == "calls.toml")
