"""The demo study: how big should a bottleneck buffer be for voice?

The dumbbell of examples/dumbbell.toml (voice, video and Poisson background
over a 2 Mbit/s bottleneck offered 94% of its capacity) is run with
the bottleneck's drop-tail buffer swept over {5, 10, 25, 50, 100} packets,
with replications. Small buffers lose voice packets; large ones delay them.
Writes tables (Parquet, CSV, Markdown), plots (PNG) and report.md.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.ticker import NullFormatter

from ..outfolder import one_output
from ..reporting.plots import subplots
from ..scenario import load_scenario
from ..reporting.tables import md_table
from ..stats import summarize
from ..sweep import Job, combine, run_many
from .params import MAX_REPLICATIONS, ParamsError

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "dumbbell.toml"
BUFFERS = [3, 5, 10, 20, 50]
METRICS = ["loss_rate", "delay_mean_ms", "delay_p99_ms", "jitter_ms", "throughput_bps"]


@one_output("demo")
def run_demo(out: Path, replications: int = 8, seed: int = 1, workers: int | None = None,
             overwrite: bool = False) -> Path:
    if not 1 <= replications <= MAX_REPLICATIONS:
        raise ParamsError("demo", [f"replications must be from 1 to {MAX_REPLICATIONS:,} (got {replications})"])
    base = load_scenario(EXAMPLE)
    jobs = []
    for b in BUFFERS:
        sc = base.with_overrides({"links[name=bottleneck].queue": {"type": "droptail", "limit_packets": b}})
        jobs += [Job(sc.to_dict(), seed=seed, replication=r, labels={"buffer_packets": b}) for r in range(replications)]
    results = run_many(jobs, workers=workers, desc="demo runs")

    flows = combine(results, "flows")
    flows.to_parquet(out / "flows.parquet", index=False)
    table = summarize(flows, ["flow", "buffer_packets"], METRICS, bounds={"loss_rate": (0.0, 1.0)})
    table.to_csv(out / "summary.csv", index=False)
    table.to_parquet(out / "summary.parquet", index=False)

    # One replication's queue trace at the largest and smallest buffer.
    samples = {}
    for r in results:
        b = r.meta["labels"]["buffer_packets"]
        if r.meta["replication"] == 0 and b in (BUFFERS[0], BUFFERS[-1]):
            q = r.queue_samples
            samples[b] = q[q["link_dir"] == "bottleneck:r1->r2"]

    fig, axes = subplots(1, 2, figsize=(10, 4))
    for flow, g in table.groupby("flow"):
        for ax, m, label in [(axes[0], "loss_rate", "loss rate"), (axes[1], "delay_p99_ms", "99th pct one-way delay (ms)")]:
            y = g[f"{m}_mean"]
            err = [y - g[f"{m}_ci_low"], g[f"{m}_ci_high"] - y]
            ax.errorbar(g["buffer_packets"], y, yerr=err, marker="o", capsize=3, label=flow)
            ax.set_xscale("log")
            # The buffers as plain numbers, no minor labels (3x10^0 ... overlap).
            ax.set_xticks(BUFFERS, [str(b) for b in BUFFERS])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("bottleneck buffer (packets)")
            ax.set_ylabel(label)
    axes[0].legend()
    fig.suptitle(f"Buffer size trade-off ({replications} replications, 95% CI)")
    fig.tight_layout()
    fig.savefig(out / "buffer_tradeoff.png", dpi=120)

    fig, ax = subplots(figsize=(10, 3.5))
    for b, q in sorted(samples.items()):
        ax.step(q["time_s"], q["packets"], where="post", label=f"buffer {b} packets")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck queue (packets)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "queue_length.png", dpi=120)

    voice = table[table["flow"] == "voice"]
    cols = ["buffer_packets", "n"] + [f"{m}_{s}" for m in ["loss_rate", "delay_p99_ms", "jitter_ms"] for s in ("mean", "ci_low", "ci_high")]
    md = [
        "# mediasim demo: bottleneck buffer size versus voice quality",
        "",
        f"Scenario: `{EXAMPLE.name}` (voice 64 kbit/s, video 1.2 Mbit/s, Poisson background 0.55 Mbit/s over a",
        "2 Mbit/s, 20 ms drop-tail bottleneck), bottleneck buffer swept; "
        f"{replications} replications per point, seed {seed}, 95% Student-t confidence intervals.",
        "",
        "## Voice",
        "",
        md_table(voice[cols], 4),
        "",
        "## All flows",
        "",
        md_table(table, 4),
        "",
        "Plots: `buffer_tradeoff.png` (loss and delay versus buffer), `queue_length.png` (queue over time).",
        "",
    ]
    report = out / "report.md"
    report.write_text("\n".join(md))
    (out / "summary.md").write_text(md_table(table, 4) + "\n")
    return report
