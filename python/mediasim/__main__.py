"""``python -m mediasim``: the same command line as ``mediasim``."""

from .cli import main

if __name__ == "__main__":
    main()
