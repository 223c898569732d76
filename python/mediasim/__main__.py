"""``python -m mediasim``: the same command line as ``mediasim``."""

from .cli import entry

if __name__ == "__main__":
    entry()
