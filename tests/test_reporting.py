"""What reports say in words and numbers: Markdown tables, the summary
tables with intervals, the self-contained HTML page, and the topology's
labels, addresses and capacity curves (``mediasim show``)."""

from __future__ import annotations

import base64

import pandas as pd
import pytest

from mediasim.reporting.html import page, report_html
from mediasim.reporting.tables import ci_table, md_table
from mediasim.reporting.topology import capacity_curves, changes, link_label, node_addresses


def test_md_table_keeps_whole_floats_as_integers_and_rounds_the_rest_to_its_digits():
    df = pd.DataFrame({"name": ["a", "b"], "count": [3.0, float("nan")], "rate": [1234.5678, 0.000123456],
                       "n": [1, 2], "big": [1e15, 2.0]})
    # 1e15 is past the whole-number rule's range: that column stays floats.
    assert md_table(df, 3).splitlines() == [
        "| name   |   count |        rate |   n |   big |",
        "|:-------|--------:|------------:|----:|------:|",
        "| a      |       3 | 1230        |   1 | 1e+15 |",
        "| b      |         |    0.000123 |   2 | 2     |",
    ]
    assert md_table(df).splitlines()[2].split("|")[3].strip() == "1235"  # 4 digits by default


def test_md_table_whole_number_rule_in_detail():
    assert md_table(pd.DataFrame({"x": [2.0, -5.0]})).splitlines()[2:] == ["|   2 |", "|  -5 |"]
    assert md_table(pd.DataFrame({"x": [2.0, 2.5]})).splitlines()[2:] == ["| 2   |", "| 2.5 |"]
    assert md_table(pd.DataFrame({"x": [float("nan")]})).splitlines() == ["| x   |", "|:----|", "|     |"]
    assert md_table(pd.DataFrame({"x": [1 / 3]}), 2).splitlines()[2] == "| 0.33 |"
    assert md_table(pd.DataFrame({"x": [1 / 3]}), 5).splitlines()[2] == "| 0.33333 |"


def test_md_table_leaves_the_callers_frame_alone():
    df = pd.DataFrame({"x": [1.0, 2.5]})
    md_table(df)
    assert df["x"].tolist() == [1.0, 2.5]


def test_ci_table_gives_mean_and_half_width_scaled_and_a_dash_where_there_is_no_mean():
    t = pd.DataFrame({"k": ["a", "b"], "n": [5, 5], "loss_mean": [0.0123, float("nan")],
                      "loss_ci_low": [0.0100, float("nan")], "loss_ci_high": [0.0146, float("nan")],
                      "x_mean": [1234.0, 2.0], "x_ci_low": [1200.0, 1.0], "x_ci_high": [1268.0, 3.0],
                      "other": [9, 9]})
    out = ci_table(t, ["k"], ["loss", "x"], scale={"loss": 100})
    assert list(out.columns) == ["k", "n", "loss", "x"]
    assert out["loss"].tolist() == ["1.23 ± 0.23", "-"]
    assert out["x"].tolist() == ["1.23e+03 ± 34", "2 ± 1"]
    assert out["n"].tolist() == [5, 5] and "loss_mean" in t.columns  # the input keeps its columns


def test_page_escapes_its_title_and_meta_and_adds_meta_only_when_given():
    html = page("a <b> & c", "<p>body</p>", meta="seed <1>")
    assert html.startswith("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>a &lt;b&gt; &amp; c</title>")
    assert "<p class='meta'>seed &lt;1&gt;</p><p>body</p></body></html>\n" in html
    assert "border-collapse" in html  # the style travels with the page
    assert page("t", "<p>x</p>").endswith("</style></head><body><p>x</p></body></html>\n")


def test_report_html_renders_the_report_and_embeds_every_plot_in_order(tmp_path):
    (tmp_path / "report.md").write_text("intro\n\n# The study\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                        "```\ncode <x>\n```\n")
    png_a, png_b = b"\x89PNG first", b"\x89PNG second"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.png").write_bytes(png_b)
    (tmp_path / "a.png").write_bytes(png_a)
    out = report_html(tmp_path / "report.md", meta="engine x")
    assert out == tmp_path / "report.html"
    html = out.read_text()
    assert "<title>The study</title>" in html and "<p class='meta'>engine x</p>" in html
    assert "<table>" in html and "<td>1</td>" in html  # the tables extension
    assert "<code>code &lt;x&gt;\n</code>" in html  # fenced code
    a = html.index(base64.b64encode(png_a).decode())
    b = html.index(base64.b64encode(png_b).decode())
    assert html.index("<h2>Figures</h2>") < a < b  # sorted by path: a.png before sub/b.png
    assert "alt='a.png'" in html and "<figcaption><code>b.png</code></figcaption>" in html
    assert html.count("src='data:image/png;base64,") == 2
    assert "</figcaption></figure><figure><img alt='b.png'" in html  # one figure after the other


def test_report_html_without_a_heading_or_plots_is_named_after_its_folder(tmp_path):
    folder = tmp_path / "demo-run"
    folder.mkdir()
    (folder / "report.md").write_text("no heading here\n## a second-level one\n")
    html = report_html(folder / "report.md").read_text()
    assert "<title>demo-run</title>" in html and "Figures" not in html and "class='meta'" not in html
    assert html.endswith("<h2>a second-level one</h2></body></html>\n")


@pytest.mark.parametrize("bps, text", [(1e9, "1 Gbit/s"), (2.5e9, "2.5 Gbit/s"), (999_999_999, "1000 Mbit/s"),
                                       (1e6, "1 Mbit/s"), (1000, "1 kbit/s"), (999, "999 bit/s"),
                                       (64e3, "64 kbit/s")])
def test_link_labels_scale_the_rate_to_its_unit(bps, text):
    assert link_label({"rate_bps": bps, "delay_ms": 1}) == f"{text}, 1 ms"


def test_link_labels_show_a_schedule_in_turn_a_repeat_and_a_trace():
    four = [[0, 1e6], [1, 2e6], [2, 3e6], [3, 4e6]]
    assert link_label({"rate_bps": four, "delay_ms": 2}) == "1 Mbit/s > 2 Mbit/s > 3 Mbit/s > 4 Mbit/s, 2 ms"
    five = four + [[4, 5e6]]
    assert link_label({"rate_bps": five, "delay_ms": 2}).startswith("1 Mbit/s > 2 Mbit/s > 3 Mbit/s > 4 Mbit/s > ...")
    rep = {"steps": [[0, 1e6], [1, 2e6]], "repeat_s": 2.5}
    assert link_label({"rate_bps": rep, "delay_ms": [[0, 10], [1, 30]]}) == \
        "1 Mbit/s > 2 Mbit/s every 2.5 s, 10 ms > 30 ms"
    assert link_label({"trace": {"file": "/x/y/lte.trace"}, "delay_ms": 5, "jitter": {}}) == \
        "trace lte.trace, 5 ms (jitter)"
    assert link_label({"trace": {"opportunities_ms": [1, 2, 3]}, "delay_ms": 5}) == \
        "trace of 3 opportunities, 5 ms"
    assert link_label({"trace": {"builtin": "lte-short"}, "delay_ms": 5}) == "trace lte-short, 5 ms"
    assert link_label({"rate_bps": 1e6, "delay_ms": 5, "ba": {"trace": {"builtin": "lte-short"}}}) == \
        "1 Mbit/s, 5 ms / trace lte-short, 5 ms"
    assert link_label({"rate_bps": 1e6, "delay_ms": 5, "outages": {}, "ab": {"jitter": {}}}) == \
        "1 Mbit/s, 5 ms (outages, jitter) / 1 Mbit/s, 5 ms (outages)"
    # A direction's own delay with the link's rate.
    assert link_label({"rate_bps": 1e6, "delay_ms": 5, "ab": {"delay_ms": 7}}) == "1 Mbit/s, 7 ms / 1 Mbit/s, 5 ms"


def test_changes_finds_any_changing_part_in_either_direction():
    assert not changes({"rate_bps": 1e6, "delay_ms": 5})
    assert not changes({"rate_bps": 1e6, "delay_ms": 5, "ab": {"rate_bps": 2e6}, "ba": None})
    assert changes({"rate_bps": [[0, 1e6]], "delay_ms": 5})
    assert changes({"rate_bps": 1e6, "delay_ms": 5, "ba": {"delay_ms": [[0, 5]]}})
    for k in ("trace", "outages", "jitter"):
        assert changes({"rate_bps": 1e6, "delay_ms": 5, "ab": {k: {}}}), k
        assert changes({"rate_bps": 1e6, "delay_ms": 5, k: {}}), k


def _link_data(duration_s: float, **link) -> dict:
    return {"duration_s": duration_s, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "delay_ms": 1, **link}]}


def test_capacity_curves_follow_a_schedule_its_repeat_and_outages():
    data = _link_data(3.0, rate_bps={"steps": [[0, 1e6], [0.5, 3e6]], "repeat_s": 1.0},
                      outages={"down_s": [[2.0, 2.25]]})
    curves = capacity_curves(data, bin_s=0.25)
    assert [name for name, _, _ in curves] == ["a->b", "b->a"]
    name, times, mbps = curves[0]
    assert times == [k * 0.25 for k in range(13)]
    assert mbps == [1, 1, 3, 3, 1, 1, 3, 3, 0.0, 1, 3, 3, 1]
    assert curves[1][2] == mbps  # the link's rate and outages hold both ways


def test_capacity_curves_count_a_traces_opportunities_per_bin_and_repeat_it():
    # Four opportunities every 100 ms, of Mahimahi's 1504 bytes unless the
    # trace says: one in a 0.1 s bin is 1504 * 8 / 0.1 bit/s = 0.12032 Mbit/s.
    trace = {"opportunities_ms": [10, 30, 50, 100]}
    data = _link_data(0.3, rate_bps=1e6, ab={"trace": trace})
    curves = dict((n, (t, r)) for n, t, r in capacity_curves(data, bin_s=0.1))
    t, r = curves["a->b"]
    assert len(t) == 4
    # Bin 0 holds 10, 30 and 50 ms; bin 1 the 100 ms one and the repeat's 110, 130 and 150 ms.
    assert r[:3] == pytest.approx([3 * 0.12032, 4 * 0.12032, 4 * 0.12032])
    assert curves["b->a"][1] == [1.0] * 4  # the other direction keeps the link's rate
    once = dict((n, r) for n, _, r in capacity_curves(_link_data(0.3, ab={"trace": {**trace, "repeat": False,
                                                                              "bytes_per_opportunity": 100}},
                                                                  rate_bps=1e6), bin_s=0.1))
    assert once["a->b"] == pytest.approx([3 * 8e-3, 8e-3, 0, 0])


def test_capacity_curves_leave_out_links_that_do_not_change():
    assert capacity_curves(_link_data(1.0, rate_bps=1e6)) == []
    data = _link_data(0.2, rate_bps=1e6)
    data["links"].append({"a": "b", "b": "a", "delay_ms": 1, "rate_bps": [[0, 1e6], [0.1, 5e5]]})
    assert [(n, r) for n, _, r in capacity_curves(data)] == [("b->a", [1, 0.5, 0.5]), ("a->b", [1, 0.5, 0.5])]


def test_capacity_curves_take_a_directions_own_rate_and_outages_and_the_default_bin():
    data = _link_data(0.3, rate_bps=[[0, 4e6]],
                      ba={"rate_bps": [[0, 1e6], [0.2, 2e6]], "outages": {"down_s": [[0, 0.1]]}})
    curves = dict((n, (t, r)) for n, t, r in capacity_curves(data))
    assert curves["a->b"] == ([0, 0.1, 0.2, 0.30000000000000004], [4, 4, 4, 4])  # bins of 0.1 s by default
    assert curves["b->a"][1] == [0.0, 1, 2, 2]
    short = capacity_curves(_link_data(0.01, rate_bps=[[0, 1e6]]), bin_s=1.0)
    assert short[0][1] == [0, 1.0]  # a run shorter than a bin still gets one


def test_capacity_curves_count_opportunities_in_the_last_bin_exactly():
    data = _link_data(0.2, ab={"trace": {"opportunities_ms": [200], "repeat": False}}, rate_bps=1e6)
    (_, t, r), _ = capacity_curves(data, bin_s=0.1)
    assert t == [0, 0.1, 0.2] and r == [0, 0, 1504 * 8 / 0.1 / 1e6]


def test_node_addresses_count_from_10_0_0_1_in_the_nodes_order():
    data = {"nodes": [{"name": f"n{i}"} for i in range(300)]}
    addr = node_addresses(data)
    assert addr["n0"] == "10.0.0.1" and addr["n254"] == "10.0.0.255" and addr["n255"] == "10.0.1.0"
    assert list(addr) == [f"n{i}" for i in range(300)]
