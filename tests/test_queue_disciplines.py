"""Queue disciplines in whole runs: which packets of a burst each keeps,
worked out by hand from the discipline's rule."""

import pytest

import mediasim
from mediasim import ScenarioError
from conftest import assert_balanced, line


def burst_through(queue: dict, n: int = 10):
    """n 1000-byte packets 10 us apart into a 1 Mbit/s link (8 ms each): the
    first goes straight onto the wire, the rest meet the queue."""
    sc = line(1, rate_bps=1e6, delay_ms=1, duration_s=1, queue=queue)
    sc.flow("burst", "cbr", src="n0", dst="n1", payload_bytes=972, interval_ms=0.01, max_packets=n)
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    return sorted(res.packets["seq"].tolist()), res


def test_droptail_keeps_the_oldest_of_a_burst():
    got, res = burst_through({"type": "droptail", "limit_packets": 3})
    assert got == [0, 1, 2, 3]
    assert res.queues.set_index("direction").loc["n0-n1:n0->n1", "dropped_queue_overflow"] == 6


def test_drophead_keeps_the_newest_of_a_burst():
    got, res = burst_through({"type": "drophead", "limit_packets": 3})
    assert got == [0, 7, 8, 9]
    q = res.queues.set_index("direction").loc["n0-n1:n0->n1"]
    assert q["kind"] == "drophead" and q["dropped_queue_overflow"] == 6
    assert sorted(res.drops["seq"].tolist()) == [1, 2, 3, 4, 5, 6]


def test_drophead_byte_limit():
    # 2500 bytes hold two 1000-byte packets.
    got, _ = burst_through({"type": "drophead", "limit_bytes": 2500}, n=6)
    assert got == [0, 4, 5]


@pytest.mark.parametrize("queue,field,fragment", [
    ({"type": "drophead"}, "links[0].queue", "drophead needs limit_packets or limit_bytes"),
    ({"type": "drophead", "limit_bytes": 0}, "links[0].queue.limit_bytes", "at least 1"),
    ({"type": "drophead", "limit_packets": "x"}, "links[0].queue.limit_packets",
     'must be a whole number, 0 or more (got "x")'),
    ({"type": "droptail", "limit_packetz": 3}, "links[0].queue.limit_packetz",
     "unknown field; did you mean limit_packets?"),
    ({"limit_packets": 3}, "links[0].queue.type", "must be given (one of droptail, drophead, red, wred, drr, priority, "
                                                  "codel, fq_codel, pie, dualpi2)"),
    ({"type": 3}, "links[0].queue.type", "must be a string (got 3)"),
])
def test_queue_errors_name_the_field_inside_the_discipline(queue, field, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1, queue=queue)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == field and fragment in m for p, m in e.value.errors), e.value.errors


def test_fields_of_another_flow_kind_are_all_reported_at_once():
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("t", "tcp", src="n0", dst="n1", payload_bytes=100, interval_ms=5, max_packets=3)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    errs = dict(e.value.errors)
    assert errs["flows[0].payload_bytes"] == "not used by tcp flows (a field of cbr, poisson flows)"
    assert errs["flows[0].interval_ms"] == "not used by tcp flows (a field of cbr flows)"
    assert "flows[0].max_packets" in errs


def test_schema_lists_every_registered_model():
    import json

    from mediasim import _engine

    schema = json.loads(_engine.schema())
    defs = schema["$defs"]
    tags = lambda name: sorted(v["properties"]["type"]["const"] for v in defs[name]["oneOf"])  # noqa: E731
    assert tags("QueueSpec") == ["codel", "drophead", "droptail", "drr", "dualpi2", "fq_codel", "pie", "priority", "red", "wred"]
    assert tags("LossSpec") == ["bit_error", "byte_error", "explicit", "gilbert_elliott", "packet"]
    assert tags("FlowSpec") == ["cbr", "media_scaling", "paced", "poisson", "svc", "tcp", "tfrc"]
    assert tags("CcSpec") == ["fixed", "gcc", "nada", "ppacc", "scale", "scream", "tfrc"]
    assert tags("WindowSpec") == ["cubic", "reno"]
    tcp = next(v for v in defs["FlowSpec"]["oneOf"] if v["properties"]["type"]["const"] == "tcp")
    assert {"name", "src", "dst", "bytes", "tcp", "type"} <= set(tcp["properties"])
    assert tcp["additionalProperties"] is False
