"""CoDel, FQ-CoDel and PIE in whole runs: each holds the standing queue of
eight TCP flows near its target where drop-tail lets it fill, without
losing the link; FQ-CoDel keeps a light flow's queueing near zero."""

import pytest

import mediasim
from mediasim import ScenarioError
from mediasim.validation.bench import tcp_dumbbell
from conftest import line

PACKET_MS = 1000 * 8 / 10e6 * 1e3  # a 1000-byte packet at 10 Mbit/s: 0.8 ms
# The CBR flow's delay without queueing: 22 ms of propagation plus one
# 1000-byte packet's transmission at 10 Mbit/s and two at 100 Mbit/s.
BASE_CBR_MS = 22 + PACKET_MS + 2 * PACKET_MS / 10


def dumbbell(queue):
    sc = tcp_dumbbell(8, 60.0)
    sc["links"][0]["queue"] = queue
    sc["measure"] = {"queue_sample_ms": 10, "packets": False}
    res = mediasim.run(sc, seed=1)
    row = res.queues.set_index("direction").loc["bottleneck:r1->r2"]
    util = res.links.set_index("direction").loc["bottleneck:r1->r2", "utilization"]
    # Little's law: waiting packets x their transmission time.
    return res, row, row["mean_packets"] * PACKET_MS, util


@pytest.fixture(scope="module")
def droptail():
    return dumbbell({"type": "droptail", "limit_packets": 100})


def test_codel_holds_the_standing_queue_near_its_target(droptail):
    res, row, delay_ms, util = dumbbell({"type": "codel"})
    assert 2.5 < delay_ms < 3 * 5.0, delay_ms
    assert droptail[2] > 5 * delay_ms
    assert util > 0.98 and row["dropped_codel"] > 0 and row["dropped_queue_overflow"] == 0
    s = res.queue_samples[res.queue_samples["link_dir"] == "bottleneck:r1->r2"]
    assert s[s["time_s"] > 10]["sojourn_ms"].median() < 3 * 5.0


def test_pie_holds_the_queueing_delay_near_its_target(droptail):
    res, row, delay_ms, util = dumbbell({"type": "pie"})
    assert 0.6 * 15 < delay_ms < 1.5 * 15, delay_ms
    assert util > 0.97 and row["dropped_pie"] > 0
    assert 0 < row["pie_drop_prob"] < 0.2


def test_fq_codel_keeps_a_light_flows_delay_near_its_base(droptail):
    res, row, delay_ms, util = dumbbell({"type": "fq_codel"})
    assert util > 0.98 and delay_ms < 3 * 5.0
    cbr = res.flows.set_index("flow").loc["cbr", "delay_mean_ms"]
    dt_cbr = droptail[0].flows.set_index("flow").loc["cbr", "delay_mean_ms"]
    # The 1 Mbit/s CBR flow sends below its fair share: it queues behind
    # almost nothing (base 22.96 ms) while drop-tail adds 60 ms or more.
    assert cbr - BASE_CBR_MS < 5.0, cbr
    assert dt_cbr - BASE_CBR_MS > 50.0


@pytest.mark.parametrize("queue,field,fragment", [
    ({"type": "codel", "target_ms": 200}, "links[0].queue.interval_ms", "must be above target_ms"),
    ({"type": "codel", "limit_packets": 0}, "links[0].queue.limit_packets", "at least 1"),
    ({"type": "fq_codel", "flows": 0}, "links[0].queue.flows", "1..=65536"),
    ({"type": "pie", "alpha": -1}, "links[0].queue.alpha", "positive"),
    ({"type": "pie", "target": 5}, "links[0].queue.target", "unknown field"),
])
def test_aqm_errors_name_the_field(queue, field, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1, queue=queue)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == field and fragment in m for p, m in e.value.errors), e.value.errors
