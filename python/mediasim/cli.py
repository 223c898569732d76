"""The ``mediasim`` command line."""

from __future__ import annotations

import json
import math
import os
import sys
from typing import TYPE_CHECKING, NoReturn, cast

import click

from . import _engine
from .errors import ScenarioError
from .reporting.tables import md_table
from .scenario import load_scenario, parse_value, split_override

if TYPE_CHECKING:
    from .results import Tables

#: Seeds and replication numbers: the engine's unsigned 64-bit integers.
U64 = click.IntRange(0, 2 ** 64 - 1)


class FiniteFloat(click.FloatRange):
    """A float option in a range that is also a finite number: click's
    range lets nan through (no comparison with it holds) and inf past an
    open bound."""

    name = "finite float"

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


#: A positive, finite float option (times, sizes, rates).
POSITIVE = FiniteFloat(min=0, min_open=True)


def _fail(msg: str) -> NoReturn:
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


def _pair(option: str, form: str, text: str) -> tuple[str, str]:
    """An option's NAME=VALUE, split at the first '=' outside brackets;
    one without is named with its option and the form it takes."""
    try:
        return split_override(text)
    except ScenarioError:
        _fail(f"{option} {text}: expected {form}")


def _unique_pairs(option: str, form: str, texts) -> dict[str, str]:
    """NAME=VALUE options as a dict, each split at its first '=' outside
    brackets (``form`` says what one looks like); a NAME given twice is
    refused (the later would silently replace the earlier)."""
    out: dict[str, str] = {}
    for t in texts:
        k, v = _pair(option, form, t)
        if k in out:
            _fail(f"{option} {k}: given twice")
        out[k] = v
    return out


def _load(path: str, overrides: tuple[str, ...]):
    try:
        sc = load_scenario(path)
        values = {k: parse_value(v, k) for k, v in _unique_pairs("--set", "PATH=VALUE", overrides).items()}
        return sc.with_overrides(values)  # every path that leads nowhere named at once
    except FileNotFoundError as e:
        _fail(str(e))
    except ScenarioError as e:
        _fail(str(e))


def _allow(paths: tuple[str, ...], sc) -> None:
    """``--allow``: each path must lead to a field of the scenario (a typo
    would silence nothing)."""
    from .runner import allow

    try:
        allow(paths, sc)
    except ScenarioError as e:
        _fail("--allow " + "; ".join(f"{p}: {m}" for p, m in e.errors))


def _fmt_table(df) -> str:
    return md_table(df, 4)


class _LazyGroup(click.Group):
    """The group whose commands other than ``run`` and ``validate`` live in
    ``mediasim.cli_commands``, imported when one of them, or the list, is
    asked for (click's documented pattern for lazy subcommands)."""

    LAZY = {"sweep": "sweep_cmd", "campaign": "campaign_cmd", "show": "show_cmd", "plot": "plot_cmd",
            "schema": "schema_cmd", "bench": "bench_cmd", "crosscheck": "crosscheck_cmd",
            "media-rates": "media_rates_cmd", "reproduce": "reproduce_cmd", "demo": "demo_cmd",
            "trace": "trace_cmd"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            from . import cli_commands

            return getattr(cli_commands, self.LAZY[cmd_name])
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context):
        """Runs the command; Ctrl-C ends it with the shell's status for
        SIGINT (128 + 2) and says where a run was stopped, where click
        alone would say "Aborted!" and exit with 1, as for any failure."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as e:
            click.echo(f"\n{str(e) or 'interrupted'}", err=True)  # on its own line below a progress bar
            ctx.exit(130)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
@click.version_option(_engine.version(), prog_name="mediasim")
@click.option("-v", "--verbose", count=True, help="More messages: -v each run, -vv details.")
@click.option("-q", "--quiet", is_flag=True, help="Errors only (no warnings, no progress bars).")
def main(verbose: int, quiet: bool) -> None:
    """mediasim: packet-level network simulation for real-time media.

    Shell completion (bash; zsh and fish alike, see click's docs):
    eval "$(_MEDIASIM_COMPLETE=bash_source mediasim)"
    """
    from .log import configure

    configure(verbose, quiet)
    # A command is mediasim's own process: mediasim does no linear algebra
    # and gets its parallelism from processes, so numpy's BLAS keeps to one
    # thread in it and in its workers (set before a command imports numpy).
    # Importing the library never touches the environment.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


@main.command("run", short_help="Run one scenario file and print its flows.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--seed", type=U64, default=0, show_default=True, help="Random seed.")
@click.option("--replication", type=U64, default=0, show_default=True, help="Replication number.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Write Parquet tables (and pcap) here.")
@click.option("--overwrite", is_flag=True,
              help="Replace OUT if it holds an earlier output (whole, once this run is complete).")
@click.option("--pcap", is_flag=True, help="Write one pcap file per link into OUT/pcap.")
@click.option("--trace", is_flag=True, help="Record the per-hop packet trace table into OUT.")
@click.option("--packets", is_flag=True,
              help="Keep the packets and drops tables (measure.packets): one row per packet, memory grows.")
@click.option("--series", is_flag=True,
              help="Keep the *_series tables (measure.series) in OUT: TCP window, TFRC rate, ... over time.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE",
              help="Override a scenario field, e.g. --set links[0].rate_bps=2e6 (repeatable).")
@click.option("--allow", "allow", multiple=True, metavar="PATH",
              help="Accept an implausible value of this field, or of the fields under it, without a warning "
                   "(repeatable; 'all' for every one).")
@click.option("--max-events", type=click.IntRange(1, 2 ** 64 - 1), default=None,
              help="End the run cleanly after this many events, with what was measured so far.")
@click.option("--max-wall", "max_wall_s", type=POSITIVE, default=None,
              metavar="SECONDS", help="End the run cleanly after this much wall time.")
@click.option("--max-memory", "max_memory_mb", type=POSITIVE, default=None,
              metavar="MIB", help="End the run cleanly once this process holds this much memory.")
def run_cmd(scenario, seed, replication, out, overwrite, pcap, trace, packets, series, overrides, allow,
            max_events, max_wall_s, max_memory_mb) -> None:
    """Run SCENARIO (.toml, .yaml or .json) and print the per-flow table,
    and the TCP, RTP member and media tables when the run has such flows."""
    import warnings

    from .errors import RunStoppedEarly
    from .run_report import run_text

    sc = _load(scenario, overrides)
    _allow(allow, sc)
    if packets:
        sc.measure(packets=True)
    if series:
        sc.measure(series=True)
    # What these record is written to OUT, not printed (--packets also makes
    # the printed delay percentiles exact, so it stands alone).
    for flag, given in (("--pcap", pcap), ("--trace", trace), ("--series", series), ("--overwrite", overwrite)):
        if given and out is None:
            _fail(f"{flag} needs --out DIR")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RunStoppedEarly)
            tables, meta = _run_for_print(sc, seed, replication, out, overwrite, pcap, trace, max_events,
                                          max_wall_s, max_memory_mb)
    except ScenarioError as e:
        _fail(str(e))
    except (OSError, RuntimeError) as e:
        _fail(str(e))
    if meta.get("stopped_early"):
        click.echo(f"warning: run stopped early: {meta['stopped_early']}; the tables cover the time up to there",
                   err=True)
    click.echo(run_text(sc.name, seed, replication, tables, meta))
    if out:
        click.echo(f"tables written to {out}/")
    else:
        _exit_now()


def _run_for_print(sc, seed, replication, out, overwrite, pcap, trace, max_events, max_wall_s, max_memory_mb):
    """Runs for ``mediasim run``: without ``out``, the lean way (the
    printed tables only, as lists: no pandas, no numpy); with it, as
    Results, written as Parquet."""
    import json

    from .run_report import TABLES, printed_columns
    from .runner import engine_run, run

    budgets = dict(max_events=max_events, max_wall_s=max_wall_s, max_memory_mb=max_memory_mb)
    if out is None:
        raw, meta = engine_run(sc, seed, replication, progress=True, only=TABLES, lists=True, **budgets)
        return raw, json.loads(meta)
    res = run(sc, seed=seed, replication=replication, out=out, overwrite=overwrite, pcap=pcap, trace=trace,
              progress=True, **budgets)
    return printed_columns(cast("Tables", res.tables)), res.meta  # a run's own tables are the engine's Tables


@main.command("validate", short_help="Check a scenario; name every bad field.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a field first.")
@click.option("--allow", "allow", multiple=True, metavar="PATH",
              help="Accept an implausible value of this field, or of the fields under it, without a warning "
                   "(repeatable; 'all' for every one).")
def validate_cmd(scenario, overrides, allow) -> None:
    """Check SCENARIO and report every problem with its field path, and
    warn of values that are valid but probably unit slips."""
    sc = _load(scenario, overrides)
    _allow(allow, sc)
    try:
        sc.validate()
    except ScenarioError as e:
        _fail(str(e))
    click.echo(f"{scenario}: valid")


# Set by `entry` when the command is this process's whole life.
_OWN_PROCESS = False


def entry() -> None:
    """The command line as its own process (the ``mediasim`` console script
    and ``python -m mediasim``, through ``mediasim.__main__``)."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    main()


def _exit_now() -> None:
    """Ends a command that has written everything and holds no open file:
    its process skips the interpreter's teardown (freeing every module and
    object, ~7 ms of a 0.1 s ``mediasim run``). Called in-process (tests,
    notebooks, ``main()`` itself), it returns and changes nothing."""
    if _OWN_PROCESS:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe (mediasim run ... | head)
            os._exit(1)
        os._exit(0)


if __name__ == "__main__":
    entry()
