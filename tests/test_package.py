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
