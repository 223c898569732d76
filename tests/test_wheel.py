"""The wheel: `scripts/wheel` builds it with the engine inside; installed
into a fresh virtual environment with no Rust toolchain on PATH, it runs a
scenario and a quick study from a folder outside the clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_without_cargo_and_runs_a_scenario_and_a_study(tmp_path):
    built = subprocess.run([str(ROOT / "scripts" / "wheel"), str(tmp_path / "dist")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = Path(built.stdout.strip().splitlines()[-1])
    assert wheel.name.startswith("mediasim-") and "abi3" in wheel.name, wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert any(n.startswith("mediasim/_engine") and n.endswith(".so") for n in names), names[:20]
    assert "mediasim/data/dumbbell.toml" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CARGO_HOME")}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
    assert shutil.which("cargo", path=env["PATH"]) is None, "cargo must not be reachable"
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], env=env,
                         capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-2000:]

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "dumbbell.toml", work)
    ms = str(venv / "bin" / "mediasim")
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import mediasim; print(mediasim.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert str(venv) in where and str(ROOT) not in where, where
    run = subprocess.run([ms, "run", "dumbbell.toml", "--seed", "3", "--out", "run"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "voice" in run.stdout and (work / "run" / "flows.parquet").exists()
    study = subprocess.run([ms, "-q", "reproduce", "iw10", "--quick", "--workers", "1", "--out", "iw10"], cwd=work,
                           env=env, capture_output=True, text=True)
    assert study.returncode == 0, study.stderr[-2000:]
    assert (work / "iw10" / "report.md").exists() and (work / "iw10" / "report.html").exists()
