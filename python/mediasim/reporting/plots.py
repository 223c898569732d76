"""Figures that leave the process's matplotlib state alone.

Plots are drawn on a bare ``matplotlib.figure.Figure`` and saved from it:
no backend is selected and pyplot's list of open figures is never touched,
so plotting from mediasim changes nothing in a user's session (a Jupyter
notebook keeps its inline backend) and needs no display.
"""

from __future__ import annotations

from typing import Any


def subplots(*args: Any, figsize: tuple[float, float] | None = None, **kwargs: Any):
    """Like ``pyplot.subplots``: returns (figure, axes)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots(*args, **kwargs)
