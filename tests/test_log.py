"""mediasim's messages (mediasim.log): the command line's levels, warnings
routed into logging as their category and message, and progress bars
that are off without tqdm. (The subprocess tests in test_package.py check
the same from a whole `mediasim` process, where logging is imported late.)"""

import logging
import warnings
from types import SimpleNamespace

import pytest

from mediasim import log

ALL = ["DEBUG mediasim.t: seen 1", "INFO mediasim.t: seen 2", "WARNING mediasim.t: seen 3",
       "ERROR mediasim.t: seen 4", "WARNING py.warnings: UserWarning: a unit slip"]


@pytest.mark.parametrize("verbose, quiet, shown", [
    (0, False, [ALL[2], ALL[3], ALL[4]]),
    (1, False, ALL[1:]),
    (2, False, ALL),
    (7, False, ALL),
    (2, True, [ALL[3]]),  # -q wins: errors only
])
def test_the_command_lines_levels_show_messages_and_warnings_on_stderr(capsys, caplog, monkeypatch, verbose, quiet,
                                                                       shown):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    root = logging.getLogger()
    root_handlers = root.handlers[:]
    log.configure(verbose, quiet)
    said = log.get("t")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        said.debug("seen %d", 1)
        said.info("seen %d", 2)
        said.warning("seen %d", 3)
        said.error("seen %d", 4)
        warnings.warn("a unit slip", UserWarning)
    assert capsys.readouterr().err.splitlines() == shown
    assert caplog.records == []  # mediasim's own handler only: nothing reaches the root logger's
    assert root.handlers == root_handlers  # the user's own logging is left alone
    assert log._pending is None  # applied once
    # Quiet turns progress bars off in this process and in the workers it starts.
    assert isinstance(log.bar(3, "runs"), log._NoBar) == quiet


def test_by_default_the_command_line_shows_warnings_and_errors(capsys, monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    log.configure()
    said = log.get("t")
    said.info("seen %d", 2)
    said.warning("seen %d", 3)
    assert capsys.readouterr().err.splitlines() == [ALL[2]]
    assert not isinstance(log.bar(3, "runs", leave=False), log._NoBar)


def test_a_warning_before_logging_is_set_up_sets_it_up_and_is_shown_once(capsys):
    """Where logging was not yet imported, configure only notes the levels
    and puts a hook in warnings.showwarning; the first warning applies
    them and goes through logging like any other."""
    log._pending = (0, False)
    warnings.showwarning = log._first_warning
    warnings.formatwarning = lambda message, category, *_a, **_k: f"{category.__name__}: {message}"
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("first", UserWarning)
        warnings.warn("second", UserWarning)
    assert capsys.readouterr().err.splitlines() == ["WARNING py.warnings: UserWarning: first",
                                                    "WARNING py.warnings: UserWarning: second"]
    assert log._pending is None and logging.getLogger(log.LOGGER).level == logging.WARNING


@pytest.mark.parametrize("verbose, quiet, dropped", [
    (0, False, ["debug", "info"]), (1, False, ["debug"]), (2, False, []), (3, True, ["debug", "info", "warning"]),
])
def test_before_logging_is_imported_a_message_the_level_drops_is_dropped_without_it(monkeypatch, capsys, verbose,
                                                                                     quiet, dropped):
    """`mediasim -q run` logs a line at INFO: dropped without importing
    logging. configure only notes the levels then, and the first message
    shown (or the first warning) applies them."""
    monkeypatch.setattr(log, "sys", SimpleNamespace(modules={}))  # as if logging were not imported yet
    log.configure(verbose, quiet)
    assert log._pending == (verbose, quiet) and warnings.showwarning is log._first_warning
    said = log.get("t")
    for level in dropped:
        assert getattr(said, level) is log._ignore and log._pending == (verbose, quiet)
    shown = [level for level in ("debug", "info", "warning", "error") if level not in dropped]
    for level in shown:
        getattr(said, level)("said at %s", level)
    assert log._pending is None
    assert capsys.readouterr().err.splitlines() == [f"{lv.upper()} mediasim.t: said at {lv}" for lv in shown]
    # Anything else is the logger's own.
    assert said.isEnabledFor(logging.ERROR) and said.name == "mediasim.t"


@pytest.mark.parametrize("progress, tqdm_disable, off", [
    (True, None, False), (True, "", False), (True, "0", False),
    (False, None, True), (True, "1", True), (True, "true", True), (True, "True", True),
])
def test_a_bar_is_off_when_asked_or_under_tqdm_disable_and_counts_either_way(monkeypatch, progress, tqdm_disable,
                                                                             off):
    if tqdm_disable is None:
        monkeypatch.delenv("TQDM_DISABLE", raising=False)
    else:
        monkeypatch.setenv("TQDM_DISABLE", tqdm_disable)
    b = log.bar(5, "runs", progress, leave=False)
    assert isinstance(b, log._NoBar) == off
    assert (b.n, b.total) == (0, 5)
    b.update()
    b.update(2)
    b.set_postfix_str("x")
    b.close()
    assert (b.n, b.total) == (3, 5)
    if not off:
        assert (b.unit, b.desc) == ("run", "runs")
        assert log.bar(1, "s", unit="sim s", leave=False).unit == "sim s"
