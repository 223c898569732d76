"""NADA under random loss against Cisco's code (`mediasim.validation.nada_loss`):
mediasim's figures are computed here, the reference's are stored
(tests/data/nada_loss_references.json), and docs/models/nada.md's table
and statements ("Under random loss") are held to both."""

import json
import re
from pathlib import Path

import pytest

from mediasim.validation import nada_crosscheck, nada_loss

PAGE = Path(__file__).resolve().parents[1] / "docs" / "models" / "nada.md"

#: The page's rows: who ran, by the words the table gives.
ROWS = {"Cisco's code": None, **{f"mediasim, {name}": (fmt, cc) for name, fmt, cc in nada_loss.VERSIONS}}


@pytest.fixture(scope="module")
def figures():
    """{loss: {row: figures}} for the reference (stored) and each of mediasim's versions."""
    stored = json.loads(nada_loss.REFERENCES.read_text())["figures"]
    out = {}
    for loss in nada_loss.LOSS_RATES:
        out[loss] = {row: stored[str(loss)] if how is None else nada_loss.mediasim_figures(loss, how[0], **how[1])
                     for row, how in ROWS.items()}
    return out


def test_the_stored_reference_is_of_these_runs():
    stored = json.loads(nada_loss.REFERENCES.read_text())
    assert stored["provenance"]["commit"] == nada_crosscheck.REF_COMMIT
    assert stored["provenance"]["command"].startswith("python -m mediasim.validation.nada_loss --save-references")
    assert (stored["feedback_ms"], stored["seeds"]) == (list(nada_loss.FEEDBACK_MS), list(nada_loss.SEEDS))
    assert sorted(stored["figures"]) == sorted(str(x) for x in nada_loss.LOSS_RATES)
    for f in stored["figures"].values():
        assert f["runs"] == len(nada_loss.FEEDBACK_MS) * len(nada_loss.SEEDS)


def test_the_page_table_gives_these_figures(figures):
    rows = [line for line in PAGE.read_text().splitlines() if re.match(r"\| [12]% \|", line)]
    assert len(rows) == 2 * len(ROWS)
    for line in rows:
        loss, who, shares, sojourns, lost = [c.strip() for c in line.strip("|").split("|")]
        f = figures[float(loss.rstrip("%")) / 100][who]
        assert shares == " / ".join(f"{s['rate_share']:.2f}" for s in f["stretches"]), line
        assert sojourns == " / ".join(f"{s['sojourn_ms']:.0f}" for s in f["stretches"]), line
        assert int(lost) == f["lost"], line


def test_the_loss_penalty_alone_sets_rfc_8698s_equilibrium():
    # DLOSS (p / PLRREF)^2: 10 ms at 1%, 40 ms at 2%; r = XREF RMAX / x within [RMIN, RMAX].
    assert nada_loss.equilibrium_bps(0.01) == pytest.approx(1.5e6)
    assert nada_loss.equilibrium_bps(0.02) == pytest.approx(375e3)
    assert nada_loss.equilibrium_bps(0.05) == nada_crosscheck.MIN_BPS


def test_the_pages_statements(figures):
    def stretches(loss, row, key):
        return [s[key] for s in figures[loss][row]["stretches"]]

    ref, default = "Cisco's code", "mediasim, default (filtered delay, RFC 8888)"
    raw8888, twcc = "mediasim, each packet's delay, RFC 8888", "mediasim, each packet's delay, transport-wide"
    for loss in nada_loss.LOSS_RATES:
        # The reference's test on feedback nearly as fine: within 0.09 of the capacity everywhere.
        gaps = [abs(a - b) for a, b in zip(stretches(loss, twcc, "rate_share"), stretches(loss, ref, "rate_share"))]
        assert max(gaps) < 0.09, (loss, gaps)
    # At 2% both send more than the loss equilibrium at 1 Mbit/s, less (under 290 kbit/s) at 0.6.
    for row in (ref, twcc):
        sent = [share * s["capacity_bps"] for share, s in
                zip(stretches(0.02, row, "rate_share"), figures[0.02][row]["stretches"])]
        assert sent[0] > 375e3 and sent[2] > 375e3 and sent[1] < 290e3, (row, sent)
    # The default at 1%: a standing queue in some runs, 3.7 to 5 times the reference's on average;
    # 1.2 to 2.2 times at 2%.
    assert round(max(stretches(0.01, default, "sojourn_ms_max"))) == 223
    assert round(max(stretches(0.01, ref, "sojourn_ms_max"))) == 26
    for loss, (lo, hi) in ((0.01, (3.7, 5.0)), (0.02, (1.2, 2.2))):
        ratios = [a / b for a, b in zip(stretches(loss, default, "sojourn_ms"), stretches(loss, ref, "sojourn_ms"))]
        assert (round(min(ratios), 1), round(max(ratios), 1)) == (lo, hi), (loss, ratios)
    # Each packet's delay on RFC 8888: less than half the reference's rate at 2%, at 1 Mbit/s.
    ratios = [a / b for a, b in zip(stretches(0.02, raw8888, "rate_share"), stretches(0.02, ref, "rate_share"))]
    assert ratios[0] < 0.5 and ratios[2] < 0.5, ratios
