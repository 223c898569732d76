"""The IW10 study's pictures (mediasim.reporting.quality_plots): what each
draws, against small tables made by hand."""

import numpy as np
import pandas as pd
import pytest
from conftest import figures_saved_by
from matplotlib.colors import to_hex

from mediasim.reporting import quality_plots as qp


def _saved(fn, *args):
    """The figure ``fn(*args)`` saves (it is saved too)."""
    (fig,) = figures_saved_by(lambda: fn(*args))
    return fig


def _levels(accesses=("",), jbs=(60, 20)) -> pd.DataFrame:
    """Shares of levels 0-2 for two (flows, IW) pairs under each jitter
    buffer, per access; each pair's shares sum to 1."""
    rows = []
    for a, access in enumerate(accesses):
        for jb in jbs:  # out of order: panels go by size
            for f, iw in ((1, 3), (2, 10)):
                s0 = 0.9 - 0.01 * f - 0.001 * jb - 0.05 * a
                rows += [(access, jb, f, iw, 0, s0), (access, jb, f, iw, 1, 0.08), (access, jb, f, iw, 2, 0.92 - s0)]
    df = pd.DataFrame(rows, columns=["access", "jitter_buffer_ms", "flows", "iw", "level", "share_mean"])
    return df if accesses != ("",) else df.drop(columns="access")


def _bars(ax) -> dict:
    """Each level's bars in a panel: (label, bottom, height, colour) by level."""
    out: dict = {}
    for c in ax.containers:
        out[c.get_label()] = [(p.get_x(), p.get_y(), p.get_height(), to_hex(p.get_facecolor())) for p in c.patches]
    return out


def test_level_bars_stack_each_levels_share_per_flows_and_iw_one_panel_per_jitter_buffer(tmp_path):
    lv = _levels()
    fig = _saved(qp.plot_level_bars, lv, tmp_path / "l.png")
    assert (tmp_path / "l.png").stat().st_size > 0
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["jitter buffer 20 ms", "jitter buffer 60 ms"]
    for ax, jb in zip(axes, (20, 60)):
        assert [t.get_text() for t in ax.get_xticklabels()] == ["1f IW3", "2f IW10"]
        assert ax.get_ylim() == (0.8, 1.0)
        bars = _bars(ax)
        assert list(bars) == ["level 0", "level 1", "level 2"]
        for i, (f, iw) in enumerate(((1, 3), (2, 10))):
            share = lv[(lv["jitter_buffer_ms"] == jb) & (lv["flows"] == f) & (lv["iw"] == iw)].set_index("level")
            bottom = 0.0
            for level in (0, 1, 2):
                _, y, h, colour = bars[f"level {level}"][i]
                assert y == pytest.approx(bottom) and h == pytest.approx(share.loc[level, "share_mean"])
                assert colour == qp.LEVEL_COLOURS[level]
                bottom += h
            assert bottom == pytest.approx(1.0)
    assert axes[0].get_ylabel() == "share of voice packets (axis from 0.8)"
    assert axes[1].get_legend() is not None and axes[0].get_legend() is None
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    # The legend goes on the first row's last panel.
    fig = _saved(qp.plot_level_bars, _levels(jbs=(60, 20, 40)), tmp_path / "l3.png")
    assert [ax.get_legend() is not None for ax in fig.axes] == [False, False, True]


def test_level_bars_put_each_access_on_its_own_row(tmp_path):
    lv = _levels(("wired", "cellular"))
    fig = _saved(qp.plot_level_bars, lv, tmp_path / "l.png")
    assert [ax.get_title() for ax in fig.axes] == ["wired: jitter buffer 20 ms", "wired: jitter buffer 60 ms",
                                                   "cellular: jitter buffer 20 ms", "cellular: jitter buffer 60 ms"]
    cell = _bars(fig.axes[2])["level 0"]
    want = lv[(lv["access"] == "cellular") & (lv["jitter_buffer_ms"] == 20) & (lv["level"] == 0)]["share_mean"]
    assert [h for _, _, h, _ in cell] == pytest.approx(want.tolist())


def _summary(accesses=("",)) -> pd.DataFrame:
    rows = []
    for a, access in enumerate(accesses):
        for jb in (80, 20, 40):  # out of order: each line is drawn by buffer size
            for f, iw in ((1, 3), (1, 10), (2, 4)):
                m = 0.5 + jb / 200 - 0.1 * (iw == 10) - 0.2 * a - 0.05 * f
                rows.append((access, f, iw, jb, m, m - 0.02, m + 0.03))
    cols = ["access", "flows", "iw", "jitter_buffer_ms", "good_quality_mean", "good_quality_ci_low",
            "good_quality_ci_high"]
    df = pd.DataFrame(rows, columns=cols)
    return df if accesses != ("",) else df.drop(columns="access")


def test_good_quality_draws_one_line_per_flows_and_iw_by_buffer_with_its_interval(tmp_path):
    s = _summary()
    fig = _saved(qp.plot_good_quality, s, tmp_path / "g.png")
    (ax,) = fig.axes
    drawn = {c.get_label(): c for c in ax.containers}  # errorbar's: (line, caps, bars)
    assert list(drawn) == ["1 flow(s), IW3", "1 flow(s), IW10", "2 flow(s), IW4"]
    # Solid with circles up to IW3, dashed with squares above.
    for label, iw, marker, style in (("1 flow(s), IW3", 3, "o", "-"), ("1 flow(s), IW10", 10, "s", "--"),
                                     ("2 flow(s), IW4", 4, "s", "--")):
        line, _, (bars,) = drawn[label].lines
        want = s[s["iw"] == iw].sort_values("jitter_buffer_ms")
        assert line.get_xdata().tolist() == [20, 40, 80]
        assert line.get_ydata().tolist() == pytest.approx(want["good_quality_mean"].tolist())
        assert line.get_marker() == marker and line.get_linestyle() == style
        # The error bars run from the interval's low to its high end.
        assert [seg[0][1] for seg in bars.get_segments()] == pytest.approx(want["good_quality_ci_low"].tolist())
        assert [seg[1][1] for seg in bars.get_segments()] == pytest.approx(want["good_quality_ci_high"].tolist())
    assert ax.get_xlabel() == "jitter buffer (ms)" and ax.get_ylabel() == "good quality (levels 0+1)"
    assert ax.get_title() == ""


def test_good_quality_has_a_panel_per_access(tmp_path):
    s = _summary(("wired", "cellular"))
    fig = _saved(qp.plot_good_quality, s, tmp_path / "g.png")
    assert [ax.get_title() for ax in fig.axes] == ["wired access", "cellular access"]
    assert fig.axes[0].get_shared_y_axes().joined(fig.axes[0], fig.axes[1])
    (cell,) = [c.lines[0] for c in fig.axes[1].containers if c.get_label() == "1 flow(s), IW3"]
    want = s[(s["access"] == "cellular") & (s["iw"] == 3)].sort_values("jitter_buffer_ms")["good_quality_mean"]
    assert cell.get_ydata().tolist() == pytest.approx(want.tolist())


def test_the_trace_is_drawn_as_its_capacity_per_bin_beside_the_wired_rate(tmp_path):
    # Opportunities at 1-1000 ms: a trace's ms t falls in the bin (t - 1) // bin (t = 500 is the first bin's last).
    ms = [1, 2, 500, 501, 501, 1000, 1001]
    fig = _saved(qp.plot_trace, ms, 2e6, tmp_path / "t.png")
    (ax,) = fig.axes
    trace, wired = ax.get_lines()
    assert trace.get_label() == "cellular downlink (trace)"
    assert trace.get_xdata().tolist() == [0.0, 0.5, 1.0]
    mbps = 1504 * 8 / 0.5 / 1e6  # one opportunity in a 0.5 s bin
    assert np.asarray(trace.get_ydata()).tolist() == pytest.approx([3 * mbps, 3 * mbps, mbps], rel=1e-12)
    assert trace.get_drawstyle() == "steps-post"
    assert wired.get_label() == "wired downlink" and list(wired.get_ydata()) == [2.0, 2.0]
    assert wired.get_linestyle() == "--"
    assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "capacity (Mbit/s, 0.5 s bins)"
    assert ax.get_xlabel() == "time (s)"
    fig = _saved(qp.plot_trace, ms, 2e6, tmp_path / "t1.png", 1.0)
    assert fig.axes[0].get_lines()[0].get_ydata().tolist() == pytest.approx([6 * 1504 * 8 / 1e6, 1504 * 8 / 1e6])
