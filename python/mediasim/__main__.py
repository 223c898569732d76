"""``python -m mediasim`` and the ``mediasim`` console script: the command
line, imported inside a guard, so that a Ctrl-C while it loads (click and
the command modules, about 0.05 s) ends the process as one during a
command does: status 130, no traceback. What comes before this module
(Python's own start-up and the package loading its engine, about 30 ms)
is out of its reach."""

from __future__ import annotations

import sys


def entry() -> None:
    try:
        from .cli import entry as command_line
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        raise SystemExit(130) from None
    command_line()


if __name__ == "__main__":
    entry()
