"""The SVC study in quick mode: its tables and plots, and the study's
expected shapes (TFRC loses more video bytes than PPACC with a small
buffer, AF12 more than AF11, PPACC's delay is lower, FEC lowers the loss
left after decoding)."""

import pandas as pd
import pytest

from mediasim.experiments import svc


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("svc")
    p = svc.Params().quick()
    svc.reproduce(p, out, workers=1, progress=False)
    return p, out


def test_quick_study_writes_its_tables_and_plots(quick):
    _, out = quick
    for f in ("report.md", "transports.csv", "fec.csv", "losses.png", "delays.png", "replications.parquet"):
        assert (out / f).stat().st_size > 0


def test_quick_study_shapes(quick):
    _, out = quick
    t = pd.read_csv(out / "transports.csv").set_index(["transport", "buffer"])
    small = min(t.index.get_level_values("buffer"))
    assert t.loc[("tfrc", small), "byte_loss_mean"] > t.loc[("ppacc", small), "byte_loss_mean"]
    # DiffServ protects the base layer.
    assert (t["byte_loss_af11_mean"] <= t["byte_loss_af12_mean"]).all()
    # PPACC's delay tail is lighter.
    for b in set(t.index.get_level_values("buffer")):
        assert t.loc[("ppacc", b), "delay_p99_ms_mean"] < t.loc[("tfrc", b), "delay_p99_ms_mean"]
    f = pd.read_csv(out / "fec.csv").set_index(["fec_flows", "buffer"])
    for b in set(f.index.get_level_values("buffer")):
        assert f.loc[(4, b), "residual_loss_fec_flows_mean"] < f.loc[(0, b), "residual_loss_plain_flows_mean"]


@pytest.mark.parametrize("name,value,fragment", [
    ("buffers", "1,50", "at least 2 packets"),
    ("af1_reserved_bps", "3e6", "room for AF2"),
    ("transports", "tfrc,tcp", "tfrc or ppacc"),
    ("fec_n", "8", "fec_k < fec_n"),
])
def test_bad_study_parameters_are_named(name, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        svc.Params().with_overrides({name: value})
