"""TFRC (RFC 5348): the equation against an independent computation, the
long-run rate under random loss against the equation, sharing with TCP,
and errors."""

from decimal import Decimal, getcontext
import itertools

import pytest

import mediasim
from mediasim import ScenarioError, _engine
from mediasim.validation.bench import tcp_dumbbell
from conftest import line


def equation_decimal(s, r, p, b, t_rto):
    """RFC 5348 section 3.1 in 40-digit decimal arithmetic."""
    getcontext().prec = 40
    s, r, p, b, t = (Decimal(repr(x)) for x in (s, r, p, b, t_rto))
    denom = r * (2 * b * p / 3).sqrt() + t * (3 * (3 * b * p / 8).sqrt()) * p * (1 + 32 * p * p)
    return float(s / denom)


@pytest.mark.parametrize("s,r,p,b,t_rto", list(itertools.product(
    (100, 1000, 1460), (0.001, 0.05, 0.3), (1e-5, 1e-3, 0.02, 0.3, 1.0), (1, 2), (0.2, 1.0))))
def test_equation_matches_an_independent_computation(s, r, p, b, t_rto):
    assert _engine.tfrc_throughput(s, r, p, b, t_rto) == pytest.approx(equation_decimal(s, r, p, b, t_rto),
                                                                       rel=1e-12)


def bernoulli(loss_rate, seed=1, duration_s=300.0):
    sc = line(1, rate_bps=100e6, delay_ms=50, duration_s=duration_s, loss={"type": "packet", "rate": loss_rate})
    sc.flow("t", "tfrc", src="n0", dst="n1")
    sc.measure(windows_s=[[50, duration_s]], packets=False)
    res = mediasim.run(sc, seed=seed)
    m = res.meta
    assert m["originated"] == m["delivered"] + m["dropped"] + m["in_flight"]
    return res


@pytest.mark.parametrize("loss_rate", [0.002, 0.01, 0.03])
def test_long_run_rate_under_random_loss_is_the_equations(loss_rate):
    res = bernoulli(loss_rate)
    t = res.tfrc.iloc[0]
    # The long-run loss event rate: loss events per packet received.
    p = t["loss_events"] / t["packets_received"]
    assert 0.5 * loss_rate < p <= loss_rate * 1.1, p
    rtt = 0.1  # 2 x 50 ms; TFRC's estimate agrees
    assert t["rtt_ms"] == pytest.approx(100, rel=0.01)
    eq = _engine.tfrc_throughput(1000, rtt, p, 1, 4 * rtt)
    got = res.throughput.set_index("flow").loc["t", "bytes"] / 250
    assert got == pytest.approx(eq, rel=0.15), (got, eq)


@pytest.mark.parametrize("queue", [{"type": "droptail", "limit_packets": 100},
                                   {"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 100,
                                    "mean_packet_bytes": 1000, "gentle": True}])
def test_tfrc_and_tcp_share_a_bottleneck(queue):
    sc = tcp_dumbbell(8, 120.0)
    sc["flows"] = [f for f in sc["flows"] if f["type"] == "tcp"]
    for f in sc["flows"][4:]:
        del f["tcp"]
        f["type"] = "tfrc"
    sc["links"][0]["queue"] = queue
    sc["measure"] = {"windows_s": [[20, 120]], "packets": False}
    res = mediasim.run(sc, seed=1)
    tp = res.throughput.groupby("flow", observed=True)["bytes"].sum()
    tcp = tp[[f"tcp{i}" for i in range(4)]].mean()
    tfrc = tp[[f"tcp{i}" for i in range(4, 8)]].mean()
    assert 0.5 < tfrc / tcp < 2.0, (tfrc, tcp)
    assert tp.sum() * 8 / 100 > 0.95 * 10e6


def test_tfrc_tables_and_errors():
    sc = line(1, rate_bps=1e6, delay_ms=10, duration_s=20)
    sc.flow("t", "tfrc", src="n0", dst="n1", packet_bytes=500)
    res = mediasim.run(sc, seed=1)
    t = res.tfrc.set_index("flow").loc["t"]
    assert t["packets_sent"] > 0 and t["feedbacks_received"] > 0
    rate = res.tfrc_series[(res.tfrc_series["flow"] == "t") & (res.tfrc_series["var"] == "rate_bps")]
    assert rate["value"].iloc[0] == 500 * 8, "one packet per second at the start"
    assert set(res.flows["flow"]) == {"t", "t/fb"}
    bad = line(1, rate_bps=1e6, delay_ms=1)
    bad.flow("t", "tfrc", src="n0", dst="n1", packet_bytes=10, b=0.5)
    with pytest.raises(ScenarioError) as e:
        bad.validate()
    errs = dict(e.value.errors)
    assert "28..=65535" in errs["flows[0].packet_bytes"] and "at least 1" in errs["flows[0].b"]


def test_tfrc_within_15_percent_of_ns2_on_the_dumbbell():
    from mediasim.validation import tfrc_crosscheck as tc

    ref = tc.stored_reference()
    got = tc.mediasim_run()
    for key in ("tfrc_packets", "tfrc_loss_rate"):
        assert tc.gap(got, ref, key) <= tc.TOLERANCE, (key, got, ref)
