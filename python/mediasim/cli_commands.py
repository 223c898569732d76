"""The ``mediasim`` commands other than ``run`` and ``validate``, loaded
only when one of them (or the command list) is asked for: their option
decorators are a few milliseconds of a 0.1 s ``mediasim run``."""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any

import click

from . import _engine
from .cli import POSITIVE, U64, _fail, _fmt_table, _load, _unique_pairs
from .errors import ScenarioError
from .experiments import STUDIES
from .reporting.tables import md_table
from .scenario import load_scenario, parse_value


def _address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A scheduler's address as given; an empty one (which would mean the
    local pool) is refused."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty address; give one such as tcp://host:8786", ctx, param)
    return value


@click.command("sweep", short_help="Run a scenario over a grid x replications.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--vary", "vary", multiple=True, metavar="PATH=V1,V2,...", required=True,
              help="A field (or an --alias) and the values to try (JSON each), e.g. "
                   "--vary 'links[name=bottleneck].rate_bps=1e6,2e6'. Several --vary make a grid.")
@click.option("--alias", "alias", multiple=True, metavar="NAME=PATH",
              help="A short name for a field, used in --vary and as the column name, e.g. "
                   "--alias rate=links[name=bottleneck].rate_bps (repeatable).")
@click.option("--replications", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--seed", type=U64, default=0, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Local processes (default: the CPUs this process may use).")
@click.option("--scheduler", default=None, metavar="ADDRESS", callback=_address,
              help="Run on a Dask cluster (tcp://host:8786) instead of local processes.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Campaign folder (resumable).")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Fixed overrides applied first.")
@click.option("--dry-run", is_flag=True, help="Check every grid point, and say what would run and what is already "
              "stored; run and write nothing.")
def sweep_cmd(scenario, vary, alias, replications, seed, workers, scheduler, out, overrides, dry_run) -> None:
    """Run SCENARIO over a grid of field values x replications. Each run is
    stored under OUT/runs/, keyed by its scenario, seed, replication and
    engine build: running again reuses finished runs and runs what changed,
    failed or was cut short."""
    aliases = _unique_pairs("--alias", "NAME=PATH", alias)
    try:
        axes = {k: [parse_value(x, k) for x in _split_values(vals)]
                for k, vals in _unique_pairs("--vary", "PATH=V1,V2,...", vary).items()}
    except ScenarioError as e:
        _fail(str(e))
    _run_grid(_load(scenario, overrides), axes, aliases, replications, seed, workers, scheduler, out, dry_run)


@click.command("campaign", short_help="Run a campaign defined in a file.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Campaign folder (default: the file's).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Local processes (default: the file's, "
              "else the CPUs this process may use).")
@click.option("--scheduler", default=None, metavar="ADDRESS", callback=_address,
              help="A Dask cluster (default: the file's).")
@click.option("--dry-run", is_flag=True, help="Check the file and every grid point, and say what would run and "
              "what is already stored; run and write nothing.")
def campaign_cmd(file, out, workers, scheduler, dry_run) -> None:
    """Run the campaign defined in FILE (TOML, YAML or JSON): over a
    scenario (scenario, out, grid, aliases, set, replications, seed,
    workers, scheduler) or over a reference study's parameters (study
    instead of scenario, plus quick, cases, sensitivity); see
    docs/campaigns.md. Resumable like sweep."""
    from .campaign.spec import CampaignSpec, load_campaign
    from .errors import CampaignError

    try:
        spec = load_campaign(file, out)
        if isinstance(spec, CampaignSpec):
            sc = load_scenario(spec.scenario).with_overrides(spec.overrides)
    except (CampaignError, ScenarioError) as e:
        _fail(str(e))
    if not isinstance(spec, CampaignSpec):
        _run_study_campaign(spec, workers, scheduler, dry_run)
        return
    _run_grid(sc, spec.grid, spec.aliases, spec.replications, spec.seed, workers or spec.workers,
              scheduler or spec.scheduler, str(spec.out), dry_run)


def _run_study_campaign(spec, workers, scheduler, dry_run: bool) -> None:
    import dataclasses

    from .campaign.study_plan import plan_study_campaign
    from .campaign.study_run import run_study_campaign
    from .errors import CampaignError

    spec = dataclasses.replace(spec, workers=workers or spec.workers, scheduler=scheduler or spec.scheduler)
    if dry_run:
        try:
            plan = plan_study_campaign(spec)
        except CampaignError as e:
            _fail(str(e))
        _check_scheduler(spec.scheduler)
        click.echo(plan)
        return
    try:
        report = run_study_campaign(spec)
    except CampaignError as e:
        _fail(str(e))
    click.echo(str(report))
    click.echo(f"written to {spec.out}/ (index.md; points/<point>/report.md; "
               f"read a table over all points with mediasim.read_sweep)")
    if report.failed:
        sys.exit(1)


#: What a sweep summarises of its media streams (mean and 95% CI per
#: configuration): the viewer's side of video and voice.
SWEEP_MEDIA = ["media_rate_bps", "frames_late", "frames_lost", "frame_delay_mean_ms", "frame_delay_p95_ms", "freezes",
               "freeze_total_s", "mouth_to_ear_ms", "r_factor", "mos"]
# The confidence intervals' bounds: counts are not negative; R and MOS
# keep to G.107's scales (0 to 100, 1 to 4.5).
SWEEP_MEDIA_BOUNDS = {"frames_late": (0.0, math.inf), "frames_lost": (0.0, math.inf), "freezes": (0.0, math.inf),
                      "r_factor": (0.0, 100.0), "mos": (1.0, 4.5)}


def _run_grid(sc, axes, aliases, replications, seed, workers, scheduler, out, dry_run: bool) -> None:
    from pathlib import Path

    import pandas as pd

    from .campaign.atomic import read_json, write_bytes
    from .errors import CampaignError
    from .stats import summarize
    from .sweep import grid, grid_problems, run_sweep

    try:
        jobs = grid(sc, axes, replications=replications, seed=seed, aliases=aliases)
    except (ScenarioError, ValueError) as e:
        _fail(str(e))
    problems = grid_problems(jobs, replications)
    if problems:
        _fail(problems)
    if dry_run:
        _dry_run(jobs, replications, scheduler, out)
        return
    try:
        flows = run_sweep(jobs, out, workers=workers, scheduler=scheduler, aliases=aliases)
    except CampaignError as e:
        _fail(str(e))
    done = read_json(Path(out) / "sweep.json")
    if done is None:  # run_sweep has just written it; only a disk fault leaves none
        _fail(f"{out}/sweep.json: missing or damaged")
    if not flows.empty:
        keys = list(axes) + ["flow", "receiver"]
        table = summarize(flows, keys, ["loss_rate", "throughput_bps", "delay_mean_ms", "delay_p99_ms", "jitter_ms"],
                          bounds={"loss_rate": (0.0, 1.0)})
        write_bytes(Path(out) / "summary.csv", table.to_csv(index=False).encode())
        click.echo(_fmt_table(table))
    media = pd.read_parquet(Path(out) / "media.parquet")
    media_summary = Path(out) / "media_summary.csv"
    if media.empty:
        media_summary.unlink(missing_ok=True)  # an earlier sweep's, in this folder
    else:
        table = summarize(media, list(axes) + ["flow"], SWEEP_MEDIA, bounds=SWEEP_MEDIA_BOUNDS)
        write_bytes(media_summary, table.to_csv(index=False).encode())
        click.echo("\nMedia:\n" + _fmt_table(table))
    click.echo(f"\n{done['runs']} runs: {done['reused']} already stored, {done['newly_run']} run now, "
               f"{len(done['failed'])} failed; tables in {out}/ (flows.parquet, summary.csv, "
               + ("" if media.empty else "media.parquet, media_summary.csv, ") + "runs/)")
    for f in done["failed"][:10]:
        click.echo(f"failed: {f['labels']} seed {f['seed']} replication {f['replication']}: {f['error']}", err=True)
    if done["failed"]:
        click.echo(f"{len(done['failed'])} runs failed; their errors are in {out}/failed/", err=True)
        sys.exit(1)


def _dry_run(jobs, replications: int, scheduler: str | None, out: str) -> None:
    """What a grid's campaign would run and reuse (``plan_campaign``), with
    nothing run or written."""
    from .campaign.run import plan_campaign
    from .errors import CampaignError

    try:
        plan = plan_campaign(jobs, out)
    except CampaignError as e:
        _fail(str(e))
    _check_scheduler(scheduler)
    points = len(jobs) // replications
    click.echo(f"{points} grid point{'s' * (points != 1)} x {replications} replication{'s' * (replications != 1)}: "
               f"{plan}")


def _check_scheduler(scheduler: str | None) -> None:
    """A dry run's check that the Dask cluster answers (the local pool
    needs none)."""
    if not scheduler:
        return
    from .campaign.executors import DaskExecutor
    from .errors import CampaignError

    try:
        DaskExecutor(scheduler).close()
    except (CampaignError, ImportError) as e:
        _fail(str(e))


def _split_values(text: str) -> list[str]:
    """Splits V1,V2,... at commas outside brackets, braces and JSON's
    double-quoted strings ("a,b" is one value; \" inside one is a quote)."""
    parts, depth, cur = [], 0, ""
    quoted = escaped = False
    for ch in text:
        if quoted:
            quoted = escaped or ch != '"'
            escaped = not escaped and ch == "\\"
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


@click.command("show", short_help="Draw a scenario's topology (PNG, SVG, PDF).")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Picture file: .png, .svg or .pdf (default: SCENARIO with .png).")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a field first.")
def show_cmd(scenario, out, overrides) -> None:
    """Draw SCENARIO: nodes, links with rate and delay, group members, and
    the flows and sessions with their endpoints."""
    from pathlib import Path

    from .reporting.topology import draw

    sc = _load(scenario, overrides)
    try:
        sc.validate()
    except ScenarioError as e:
        _fail(str(e))
    path = Path(out) if out else Path(scenario).with_suffix(".png")
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        _fail(f"--out {path}: the picture must end in .png, .svg or .pdf")
    try:
        click.echo(f"written {draw(sc.to_dict(), path)}")
    except OSError as e:
        _fail(f"--out {path}: cannot write the picture ({e.strerror or e})")


@click.command("plot", short_help="Plot a run folder: throughput, delay, queues, cwnd, media rates.")
@click.argument("run", type=click.Path(file_okay=False, exists=True))
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Picture file (default RUN/plots.png).")
@click.option("--bin", "bin_s", type=POSITIVE, default=1.0, show_default=True,
              help="Throughput bin (simulated s).")
@click.option("--flows", "flows", multiple=True, metavar="PATTERN",
              help="Flows to draw: names or shell patterns (repeatable; '*' for all). Default: the media and data "
                   "flows, without the control flows the engine derives (names ending /ack, /rtcp, /fb, /hack).")
def plot_cmd(run, out, bin_s, flows) -> None:
    """Plot the run written to folder RUN (mediasim run ... --out RUN):
    per-flow throughput and one-way delay over time (needs --packets),
    queue lengths and sojourn times (measure.queue_sample_ms), TCP
    windows and media senders' rates, pacer queue and frame sizes
    (--series). A flow has one colour in every panel."""
    from pathlib import Path

    from .reporting.run_plots import plot_run

    if not (Path(run) / "meta.json").exists():
        _fail(f"{run}: not a run folder (no meta.json; write one with mediasim run SCENARIO --out {run})")
    try:
        click.echo(f"written {plot_run(run, out, bin_s, list(flows) or None)}")
    except ValueError as e:
        _fail(f"{run}: {e}")
    except OSError as e:
        _fail(f"--out {out or Path(run) / 'plots.png'}: cannot write the picture ({e.strerror or e})")


@click.command("schema", short_help="Print the JSON Schema of scenario files.")
def schema_cmd() -> None:
    """Print the JSON Schema of scenario files."""
    click.echo(_engine.schema())


#: bench's workloads: at most one per invocation (none: the fixed dumbbells).
BENCH_WORKLOADS = ("vs_ns2", "campaign_rate", "rtp_group", "rmtp", "gcc_calls", "calls", "memory")

#: bench's other options and the workloads each goes with (--quick and
#: --json go with all).
BENCH_MODIFIERS = {
    "repeats": ("vs_ns2", "campaign_rate"),
    "sizes": ("vs_ns2",),
    "with_ns3": ("vs_ns2",),
    "campaign_runs": ("campaign_rate",),
    "mix": ("gcc_calls",),
    "partitions": ("gcc_calls", "rmtp", "rtp_group"),
    "parts": ("calls",),
    "cache_counts": ("calls",),
    "profile": ("calls",),
}

#: The largest size --sizes and --campaign-runs take: the engine's default
#: limit on flows and nodes, far beyond any benchmark's.
BENCH_MAX_SIZE = 200_000


def _flag(ctx: click.Context, name: str) -> str:
    """An option's name as written on the command line (``--vs-ns2``)."""
    param = next(p for p in ctx.command.params if p.name == name)
    return max(param.opts, key=len)


def _given(ctx: click.Context, name: str) -> bool:
    """Whether option ``name`` was given (not left at its default)."""
    return ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)


def _check_bench_options(ctx: click.Context) -> None:
    """One workload at most, and every option given with a workload it
    applies to: an option that would be ignored is refused instead."""
    chosen = [w for w in BENCH_WORKLOADS if ctx.params[w]]
    if len(chosen) > 1:
        _fail(f"{' and '.join(_flag(ctx, w) for w in chosen)}: choose one workload per run")
    for name, goes_with in BENCH_MODIFIERS.items():
        if _given(ctx, name) and not any(ctx.params[w] for w in goes_with):
            _fail(f"{_flag(ctx, name)} goes with {' or '.join(_flag(ctx, w) for w in goes_with)}")


def _positive_ints(option: str, text: str) -> tuple[int, ...]:
    """A comma-separated list of distinct sizes from 1 to BENCH_MAX_SIZE."""
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        _fail(f"{option} {text!r}: expected comma-separated integers")
    if any(not 1 <= v <= BENCH_MAX_SIZE for v in values):
        _fail(f"{option} {text!r}: each must be from 1 to {BENCH_MAX_SIZE:,}")
    if len(set(values)) != len(values):
        _fail(f"{option} {text!r}: a size is given twice")
    return values


@click.command("bench", short_help="Benchmarks: events/s, packets/s, wall, memory.")
@click.option("--quick", is_flag=True, help="A short run (a smoke test, not a measurement).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--vs-ns2", is_flag=True, help="Run the TCP dumbbell in mediasim and ns-2 in alternation and compare.")
@click.option("--repeats", type=click.IntRange(min=1), default=5, show_default=True, help="With --vs-ns2: runs per size; with --campaign: rounds (one process and the pool in alternation, medians).")
@click.option("--sizes", default="1,8,64,256", show_default=True, help="With --vs-ns2: numbers of TCP flows.")
@click.option("--ns3", "with_ns3", is_flag=True,
              help="With --vs-ns2: also time ns-3's Simulator::Run on the same dumbbell (median of 3 runs in one "
                   "process per size, against the engine timed just before and after; needs ns-3).")
@click.option("--campaign", "campaign_rate", is_flag=True,
              help="Campaign throughput: short TCP-dumbbell runs in one process, then on the local pool (runs/s, "
                   "the speedup per round, and the share of the pool's time spent inside runs); then the same "
                   "campaign as the whole `mediasim campaign` command, which also stores every run.")
@click.option("--campaign-runs", default="40,200", show_default=True,
              help="With --campaign: campaign sizes in runs, comma-separated (each gives both rows).")
@click.option("--rtp-group", "rtp_group", is_flag=True,
              help="The large-group workload: one multicast RTP/AVPF session of 10,000 members for 500 s "
                   "(with --quick: 1,000 members for 50 s).")
@click.option("--rmtp", "rmtp", is_flag=True,
              help="The large-tree workload: one RMTP session of 10,000 receivers under 100 DRs for 500 s "
                   "(with --quick: 1,000 receivers for 50 s).")
@click.option("--calls", "calls", is_flag=True,
              help="64 paced video calls with transport-wide feedback every 50 ms through one bottleneck for 60 s, "
                   "beside one CBR flow per path at the same rate: wall time per delivered media packet and its "
                   "ratio, the fastest of 5 rounds in turn (with --quick: 8 calls for 5 s, one round).")
@click.option("--gcc-calls", "gcc_calls", is_flag=True,
              help="1,000 GCC calls and 10 CUBIC flows through one 1 Gbit/s bottleneck for 300 s: calls x simulated "
                   "seconds per wall second, beside one CBR flow per call on the same paths (what the network alone costs; "
                   "with --quick: 50 calls for 10 s).")
@click.option("--mix", is_flag=True,
              help="With --gcc-calls: GCC, NADA and SCReAM calls in turn instead of GCC alone.")
@click.option("--partitions", type=click.IntRange(1, 16), default=1, show_default=True,
              help="With --gcc-calls, --rmtp or --rtp-group: run each workload split into this many partitions, "
                   "one thread each (the scenario's parallel.partitions).")
@click.option("--parts", is_flag=True,
              help="With --calls: the calls also with their feedback, playout buffer or pacer off, and with all "
                   "three off and constant frames (what each part costs).")
@click.option("--counts", "cache_counts", is_flag=True,
              help="With --calls: instead of timing them, count instructions (in all and in each part, as --profile "
                   "splits them), cache misses and mispredicted branches per delivered media packet under "
                   "valgrind's cache and branch simulators (the difference between 10 and 20 simulated seconds; "
                   "needs valgrind).")
@click.option("--profile", is_flag=True,
              help="With --calls: instead of timing them whole, sample them with Linux perf (a software clock) and "
                   "give a media packet's time in each part: event loop and network, sender, receiver, RTCP, "
                   "per-packet feedback, libc (the difference between 60 and 600 simulated seconds; needs perf).")
@click.option("--memory", is_flag=True,
              help="Engine memory per TCP flow, per packet queued and per packet propagating (slopes of peak RSS).")
def bench_cmd(quick, as_json, vs_ns2, repeats, sizes, with_ns3, campaign_rate, campaign_runs, rtp_group, rmtp,
              calls, gcc_calls, mix, partitions, parts, cache_counts, profile, memory) -> None:
    """Run the fixed benchmark workloads and print events/s, packets/s,
    wall time and peak memory (or, with --vs-ns2, the side-by-side with ns-2)."""
    _check_bench_options(click.get_current_context())
    if vs_ns2:
        from .validation.ns2_compare import compare

        ns = _positive_ints("--sizes", sizes)
        try:
            rows = compare(ns, repeats, ns3=with_ns3)
        except RuntimeError as e:
            _fail(str(e))
    elif campaign_rate:
        from .validation.campaign_bench import campaign_rate as measure
        from .validation.campaign_bench import cli_campaign_rate

        counts = list(_positive_ints("--campaign-runs", campaign_runs))
        if any(n < 2 for n in counts):
            _fail(f"--campaign-runs {campaign_runs!r}: a campaign needs at least 2 runs")
        counts, rounds = ([10], 1) if quick else (counts, repeats)
        rows = []
        for runs in counts:
            rows.append(measure(runs=runs, repeats=rounds))
            try:
                rows.append(cli_campaign_rate(runs=runs, repeats=rounds))
            except RuntimeError as e:  # the command failed: its own message
                _fail(str(e))
    elif rtp_group:
        from .validation.bench import run_one

        n, dur = (1000, 50.0) if quick else (10_000, 500.0)
        rows = [run_one("rtp_group", n, dur, partitions)]
    elif rmtp:
        from .validation.bench import run_one

        n, dur = (1000, 50.0) if quick else (10_000, 500.0)
        rows = [run_one("rmtp", n, dur, partitions)]
    elif gcc_calls:
        from .validation.bench import run_scale_calls

        rows = run_scale_calls(quick=quick, mix=mix, partitions=partitions)
    elif calls and cache_counts and profile:
        _fail("--counts and --profile: choose one")
    elif calls and profile:
        from .validation.bench import run_calls_profile

        try:
            rows = run_calls_profile(quick=quick, parts=parts)
        except RuntimeError as e:
            _fail(str(e))
    elif calls and cache_counts:
        from .validation.bench import run_calls_counts

        try:
            rows = run_calls_counts(quick=quick, parts=parts)
        except RuntimeError as e:
            _fail(str(e))
    elif calls:
        from .validation.bench import run_calls

        rows = run_calls(quick=quick, parts=parts)
    elif memory:
        from .validation.memory_bench import engine_memory

        rows = engine_memory(quick=quick)
    else:
        from .validation.bench import run_benchmarks

        rows = run_benchmarks(quick=quick)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        import pandas as pd

        click.echo(_fmt_table(pd.DataFrame(rows)))


@click.command("crosscheck", short_help="Compare TCP or RED with ns-2 and ns-3.")
@click.option("--impatient", is_flag=True, help="Use mediasim's default NewReno timer variant (RFC 6582) instead of ns-2's.")
@click.option("--no-ns3", is_flag=True, help="Compare with ns-2 only.")
@click.option("--save-references", is_flag=True,
              help="Run the reference simulators and store their figures (tests/data/crosscheck_references.json), "
                   "which the test suite checks mediasim against.")
@click.option("--red", is_flag=True, help="Compare RED (average queue, drops) instead, on the same dumbbell.")
def crosscheck_cmd(impatient, no_ns3, save_references, red) -> None:
    """Compare TCP behaviour (or, with --red, RED) on the reference dumbbell
    with ns-2 and ns-3 (install them with scripts/install-reference-simulators)."""
    from .validation.crosscheck import compare, ns3_python
    from .validation.crosscheck import save_references as save

    if red:
        return _red_crosscheck(save_references)

    if save_references:
        try:
            path = save(with_ns3=not no_ns3)
        except RuntimeError as e:
            _fail(str(e))
        click.echo(f"reference figures written to {path}")
        return

    try:
        df = compare(newreno_timer="impatient" if impatient else "slow_but_steady", with_ns3=not no_ns3)
    except (RuntimeError, FileNotFoundError) as e:
        _fail(str(e))
    click.echo(md_table(df.map(lambda x: f"{x:.4g}" if isinstance(x, float) else x)))
    click.echo("\nverdict: closest reference's difference (absolute for utilisation and jain, relative otherwise); "
               "ok = within 0.02 / 0.05 / 15% / 15% of at least one reference")
    if no_ns3 or ns3_python() is None:
        click.echo("compared with ns-2 only")


@click.command("media-rates", short_help="Print each media scale's average rate.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="An MPEG frame trace file (see mediasim.media); default the study's synthetic trace.")
@click.option("--gop", default="IBBPBBPBB", show_default=True, help="GOP pattern of the synthetic trace.")
@click.option("--frame-rate", type=POSITIVE, default=30.0, show_default=True, help="Frame slots per second at scale 4.")
@click.option("--mm", is_flag=True, help="MM_APP's scales (the study's rates) instead.")
def media_rates_cmd(trace_path, gop, frame_rate, mm) -> None:
    """Print each scale's average rate (payload and on the wire) of a
    media-scaling flow: MPEG_APP on a trace, or MM_APP."""
    import pandas as pd

    ctx = click.get_current_context()
    given = [p for p in ("trace_path", "gop", "frame_rate") if _given(ctx, p)]
    if mm and given:
        _fail(f"{', '.join(_flag(ctx, p) for p in given)}: MM_APP (--mm) has fixed rates, no frames")
    if trace_path and "gop" in given:
        _fail("--gop: the trace (--trace) gives the frames")

    from . import media

    # The problems name the options they came from (the flow's fields are
    # the options here; a trace file's problems name the file and line).
    options = {"flow.gop": "--gop", "flow.frame_rate": "--frame-rate"}
    fields: dict[str, Any]
    try:
        if mm:
            fields = {"app": "mm"}
        elif trace_path:
            fields = {"app": "mpeg", "frames": media.read_trace(trace_path), "frame_rate": frame_rate}
        else:
            fields = {"app": "mpeg", "gop": gop, "frame_rate": frame_rate}
        rows = media.scale_rates(**fields)
    except ScenarioError as e:
        _fail("; ".join(f"{options.get(p, p)}: {m}" for p, m in e.errors))
    click.echo(_fmt_table(pd.DataFrame(rows).round(1)))


def _red_crosscheck(save_references: bool) -> None:
    import subprocess

    import pandas as pd

    from .validation import red_crosscheck as rc

    try:
        if save_references:
            rc.REFERENCES.write_text(json.dumps(rc.reference_runs(), indent=1) + "\n")
            click.echo(f"reference figures written to {rc.REFERENCES}")
            return
        rows = rc.compare()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        _fail(str(e))
    click.echo(md_table(pd.DataFrame(rows).map(lambda x: f"{x:.4g}" if isinstance(x, float) else x)))


@click.command("reproduce", short_help="Run a reference study: tables, plots, report.")
@click.argument("study", type=click.Choice([*STUDIES, "all"]))
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Output folder (default results/STUDY).")
@click.option("--replications", type=click.IntRange(min=1), default=None, help="Replications per configuration.")
@click.option("--seed", type=U64, default=None)
@click.option("--quick", is_flag=True, help="Small version (few replications), for a fast look.")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Processes (default: all cores).")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              help="Override a study parameter, e.g. --set bottleneck_rate_bps=4e6 --set flows=1,6 (lists "
                   "comma-separated, true/false, groups of numbers separated by ';').")
@click.option("--case", "cases", multiple=True, type=int, help="Only these cases (studies with cases, e.g. avpf).")
@click.option("--sensitivity", is_flag=True,
              help="Also vary each value the study leaves open, one at a time (studies that support it, e.g. avpf).")
@click.option("--overwrite", is_flag=True,
              help="Replace OUT if it holds an earlier output (whole, once this one is complete).")
@click.option("--runs", "runs_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Store every run in campaign folder DIR as it finishes, and reuse the runs stored there: a "
                   "study cut short, or failing after its runs, resumes from them.")
@click.option("--dry-run", is_flag=True, help="Check the parameters, the options, OUT and every scenario the study "
              "would run, and count its runs; run and write nothing.")
def reproduce_cmd(study, out, replications, seed, quick, workers, overrides, cases, sensitivity, overwrite,
                  runs_dir, dry_run) -> None:
    """Run reference study STUDY and write its tables, plots and report:

    \b
    iw10           IW10 and VoIP over an access link (TCP initial windows)
    avpf           RTP/AVPF early feedback (RFC 4585) in nine cases
    media-scaling  media scaling with RED or drop-tail at a bottleneck
    svc            scalable video over DiffServ: TFRC vs PPACC, FEC at AF13
    rmtp           RMTP reliable multicast with designated receivers
    rmcat          GCC, NADA and SCReAM on RFC 8867's cases and cellular traces
    all            every study, plus an index (index.md, index.html)

    Each study writes report.md and a self-contained report.html.
    """
    from pathlib import Path

    from . import experiments
    from .errors import CampaignError
    from .experiments.params import ParamsError

    if study == "all":
        if overrides or cases or sensitivity or replications is not None or seed is not None or runs_dir:
            _fail("reproduce all takes only --out, --quick, --workers, --overwrite and --dry-run")
        if dry_run:
            folder = Path(out or "results")
            _dry_run_output(folder, overwrite)
            for name in STUDIES:
                params = experiments.get(name).Params()
                click.echo(_study_runs_line(name, params.quick() if quick else params, {}))
            click.echo(f"output into {folder}/ (index.md, index.html, one folder per study)\n"
                       "nothing was run or written (dry run)")
            return
        from .experiments.all import reproduce_all

        t0 = time.perf_counter()
        try:
            index = reproduce_all(Path(out or "results"), quick=quick, workers=workers, overwrite=overwrite)
        except OSError as e:
            _fail(str(e))
        click.echo(index.read_text())
        click.echo(f"written to {index.parent}/ (index.md, index.html, one folder per study) "
                   f"in {time.perf_counter() - t0:.0f} s (each study's time with -v)")
        return
    try:
        mod = experiments.get(study)
    except KeyError as e:
        _fail(str(e.args[0]))
    params = mod.Params()
    if quick:
        params = params.quick()
    ov = _unique_pairs("--set", "NAME=VALUE", overrides)
    for name, option in (("replications", replications), ("seed", seed)):
        if option is not None:
            if name in ov:
                # One of the two would be dropped without a word.
                _fail(f"--{name} and --set {name}=...: give one of them")
            ov[name] = str(option)
    try:
        params = params.with_overrides(ov)
    except ParamsError as e:  # each problem on its own line
        _fail("\n".join(f"{study}: {x}" for x in e.problems))
    out_dir = Path(out or f"results/{study}")
    try:
        options = experiments.options(study, cases, sensitivity)  # before any run: what the study offers
        if dry_run:
            _dry_run_output(out_dir, overwrite)
            if runs_dir is not None:
                experiments.check_apart(runs_dir, out_dir)
            click.echo(f"{_study_runs_line(study, params, options, runs_dir)}\noutput into {out_dir}/\n"
                       "nothing was run or written (dry run)")
            return
        report = experiments.reproduce(study, params, out_dir, workers=workers, overwrite=overwrite, cases=cases,
                                       sensitivity=sensitivity, runs=runs_dir)
    except experiments.OptionError as e:
        _fail(f"--{'case' if e.option == 'cases' else e.option}: {e}")
    except (ValueError, OSError, CampaignError) as e:
        _fail(str(e))
    click.echo(report.read_text())
    click.echo(f"\nwritten to {out_dir}/")


def _dry_run_output(folder, overwrite: bool) -> None:
    """A dry run's check that ``folder`` would take the output."""
    from .outfolder import check_free

    try:
        check_free(folder, overwrite)
    except OSError as e:
        _fail(str(e))


def _study_runs_line(study: str, params, options: dict, runs_dir: str | None = None) -> str:
    """What a study's dry run says of its runs (each scenario checked),
    and with ``runs_dir`` how many of them are stored there."""
    from .campaign.keys import engine_identity
    from .campaign.store import RunStore
    from .campaign.study_plan import study_runs
    from .errors import CampaignError

    try:
        runs = study_runs(study, params, options)
        store = RunStore.check(runs_dir, engine_identity()) if runs_dir is not None else None
    except (ValueError, CampaignError) as e:
        _fail(str(e))
    n, s = runs.jobs, runs.scenarios
    line = f"{study}: {n} run{'s' * (n != 1)} of {s} scenario{'s' * (s != 1)}, every one valid"
    if store is not None:
        stored = sum(store.status(k) == "done" for k in runs.keys)
        line += f"\nruns in {runs_dir}/: {stored} of {len(runs.keys)} stored, {len(runs.keys) - stored} to run"
    return line


@click.command("demo", short_help="The demo study (voice over a dumbbell).")
@click.option("--out", type=click.Path(file_okay=False), default="results/demo", show_default=True)
@click.option("--replications", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--seed", type=U64, default=1, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Processes (default: all cores).")
@click.option("--overwrite", is_flag=True,
              help="Replace OUT if it holds an earlier output (whole, once this one is complete).")
def demo_cmd(out, replications, seed, workers, overwrite) -> None:
    """The demo study: voice over a congested dumbbell, bottleneck buffer
    swept, with replications; writes tables, plots and a report."""
    from pathlib import Path

    from .experiments.demo import run_demo
    from .experiments.params import ParamsError

    try:
        report = run_demo(Path(out), replications=replications, seed=seed, workers=workers, overwrite=overwrite)
    except ParamsError as e:
        _fail(str(e))
    except OSError as e:
        _fail(str(e))
    click.echo(report.read_text())
    click.echo(f"\nwritten to {out}/")


@click.group("trace", short_help="Link traces (Mahimahi format): list, write, stats.")
def trace_cmd() -> None:
    """Delivery-opportunity traces for trace-driven links (docs/models/links.md)."""


@trace_cmd.command("list", short_help="The project's generated traces.")
def trace_list_cmd() -> None:
    """List the builtin traces (give one as trace = {builtin = NAME})."""
    from . import traces

    for b in traces.BUILTIN.values():
        click.echo(f"{b.name:16} {b.description}")


def _trace_ms(name_or_file: str) -> list[int]:
    from pathlib import Path

    from . import traces

    if name_or_file not in traces.BUILTIN and not Path(name_or_file).exists():
        _fail(f"{name_or_file}: no such trace file, nor a builtin trace (builtin: {', '.join(sorted(traces.BUILTIN))})")
    if name_or_file in traces.BUILTIN:
        return traces.builtin(name_or_file)
    try:
        return traces.read(name_or_file)
    except ScenarioError as e:  # said of the trace file (each message names it), not as an invalid scenario
        _fail("\n".join(m for _, m in e.errors))


@trace_cmd.command("write", short_help="Write a builtin trace to a file.")
@click.argument("name")
@click.argument("path", type=click.Path(dir_okay=False))
def trace_write_cmd(name, path) -> None:
    """Write builtin trace NAME to PATH in Mahimahi's format."""
    from . import traces

    if name not in traces.BUILTIN:
        _fail(f"{name}: no builtin trace of that name (builtin: {', '.join(sorted(traces.BUILTIN))})")
    try:
        click.echo(f"written {traces.write(path, _trace_ms(name))}")
    except OSError as e:
        _fail(f"{path}: cannot write the trace ({e.strerror or e})")


@trace_cmd.command("stats", short_help="A trace's length, opportunities and mean rate.")
@click.argument("name_or_file")
def trace_stats_cmd(name_or_file) -> None:
    """Print NAME_OR_FILE's length (one pass), opportunities, mean rate,
    and the lowest and highest rate over 1 s windows."""
    from . import traces

    ms = _trace_ms(name_or_file)
    # Opportunities in each whole second of a pass (a partial last second
    # left out), counted from the opportunities, not by walking every
    # second: a sparse trace may span years.
    windows = max(1, ms[-1] // 1000)
    per_s: dict[int, int] = {}
    for m in ms:
        k = (m - 1) // 1000
        if k < windows:
            per_s[k] = per_s.get(k, 0) + 1
    lowest = min(per_s.values()) if len(per_s) == windows else 0
    mbps = lambda n: n * traces.OPPORTUNITY_BYTES * 8 / 1e6  # noqa: E731
    click.echo(f"{name_or_file}: {ms[-1] / 1000:g} s, {len(ms)} opportunities of {traces.OPPORTUNITY_BYTES} bytes, "
               f"mean {traces.mean_rate_bps(ms) / 1e6:.3f} Mbit/s, per 1 s from {mbps(lowest):.3f} to "
               f"{mbps(max(per_s.values(), default=0)):.3f} Mbit/s")
