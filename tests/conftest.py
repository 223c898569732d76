"""Shared scenario builders for the tests."""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediasim import Scenario

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def line(n_hops: int, rate_bps: float, delay_ms: float, duration_s: float = 10.0, **link) -> Scenario:
    """n0 - n1 - ... - n<hops>, identical links; with the per-packet
    tables and the series, which most tests read."""
    sc = Scenario("line", duration_s=duration_s)
    sc.measure(packets=True, series=True)
    for i in range(n_hops + 1):
        sc.node(f"n{i}")
    for i in range(n_hops):
        sc.link(f"n{i}", f"n{i + 1}", rate_bps=rate_bps, delay_ms=delay_ms, **link)
    return sc


def assert_balanced(res) -> None:
    """Every packet copy is delivered, dropped (with a reason) or in flight."""
    m = res.meta
    assert m["originated"] + m["multicast_copies"] == m["delivered"] + m["dropped"] + m["in_flight"]
    if m["packet_log"]:
        assert len(res.drops) == m["dropped"]
        assert set(res.drops["reason"]) <= {"queue_overflow", "link_loss", "receiver_loss", "no_route",
                                          "no_listener", "link_down", "red_early", "red_forced", "codel", "pie"}
    f = res.flows
    assert (f["sent"] == f["received"] + f["lost"] + f["in_flight"]).all()
    drop_cols = [c for c in f.columns if c.startswith("dropped_")]
    assert (f[drop_cols].sum(axis=1) == f["lost"]).all()


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture(autouse=True)
def _command_line_configuration_stays_in_its_test():
    """The command line configures logging, warnings and tqdm for its whole
    process (``mediasim.log.configure``). Run in this process by click's
    CliRunner, it must not reach the tests after it: a test's outcome does
    not depend on which ran before."""
    import logging
    import warnings

    from mediasim import log

    ours, captured = logging.getLogger(log.LOGGER), logging.getLogger("py.warnings")
    saved = (ours.handlers[:], ours.level, ours.propagate, captured.handlers[:], captured.level, captured.propagate,
             log._pending, warnings.showwarning, warnings.formatwarning, os.environ.get("TQDM_DISABLE"))
    yield
    if logging._warnings_showwarning is not None:  # type: ignore[attr-defined]
        logging.captureWarnings(False)
    (ours.handlers[:], ours.level, ours.propagate, captured.handlers[:], captured.level, captured.propagate,
     log._pending, warnings.showwarning, warnings.formatwarning, tqdm_disable) = saved
    if tqdm_disable is None:
        os.environ.pop("TQDM_DISABLE", None)
    else:
        os.environ["TQDM_DISABLE"] = tqdm_disable


def assert_field_error(sc, path: str, fragment: str) -> None:
    """Validation of ``sc`` fails with a message containing ``fragment``
    at field ``path``."""
    import pytest

    from mediasim import ScenarioError

    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == path and fragment in m for p, m in e.value.errors), e.value.errors


def figures_saved_by(fn) -> list:
    """The matplotlib figures ``fn()`` saves, in order (still saved)."""
    from matplotlib.figure import Figure

    made = []
    real = Figure.savefig

    def keep(self, *a, **k):
        made.append(self)
        return real(self, *a, **k)

    Figure.savefig = keep
    try:
        fn()
    finally:
        Figure.savefig = real
    return made


def pcap_records(pcap_path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(time in ns, IP packet bytes, IP packet) of each record of a pcap
    file mediasim wrote (nanosecond pcap, raw IPv4), read record by record
    so that times stay whole nanoseconds."""
    with open(pcap_path, "rb") as fh:
        data = fh.read()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B23C4D
    at = 24
    while at < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[at:at + 16])
        yield sec * 10**9 + nsec, orig, data[at + 16:at + 16 + incl]
        at += 16 + incl


def require_tool(name: str) -> None:
    """A system tool that scripts/setup installs with apt-get when run as
    root: in CI its absence fails the test; elsewhere the test is reported
    as not run, with the reason, never passed."""
    if shutil.which(name) is None:
        msg = f"{name} is not installed (scripts/setup installs it with apt-get when run as root)"
        if os.environ.get("CI"):
            pytest.fail(msg + "; CI needs it")
        pytest.skip(msg)


def bench_calls_quick(option: str) -> tuple[dict, dict, dict]:
    """`mediasim bench --calls OPTION --quick --json` run to success: its
    rows for the calls, the RTP session alone and the CBR flows."""
    import json

    from click.testing import CliRunner

    from mediasim.cli import main

    r = CliRunner().invoke(main, ["bench", "--calls", option, "--quick", "--json"])
    assert r.exit_code == 0, r.output
    rows = {x["workload"]: x for x in json.loads(r.output)}
    assert list(rows) == ["calls-8", "calls-rtp-8", "calls-cbr-8"]
    calls, rtp, cbr = rows.values()
    return calls, rtp, cbr


#: The slowest test files, slowest first (per-file test time, 2026-12-02:
#: 150 s down to 25 s). pytest-xdist hands whole files to its workers in
#: collection order, so these start first and the many short files fill
#: the workers' ends; in name order the wheel and type checks started last
#: and one worker ran alone for half a minute.
SLOWEST_FIRST = ("test_cache_counts.py", "test_output_hashes.py", "test_wheel.py", "test_reproduce_all.py",
                 "test_avpf_study.py", "test_rmtp_study.py", "test_study_campaign.py", "test_tshark.py",
                 "test_cli.py", "test_campaign_dask.py", "test_campaign.py", "test_types.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first; the rest, and every file's own tests, keep
    their order (the sort is stable)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
