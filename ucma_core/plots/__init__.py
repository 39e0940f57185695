"""Pictures of a memory: forgetting curves, the graph around a memory or entity, and what
each signal contributed to a search result.

Drawing needs matplotlib (``pip install 'ucma[plots]'``); it is imported only when a
plot is drawn, and a missing install raises
:class:`~ucma_core.errors.DependencyMissingError`. Figures are made with
matplotlib's object API on the Agg renderer, never through ``pyplot``, so drawing
does not touch a notebook's or an application's global matplotlib state. Every
plot function returns the :class:`matplotlib.figure.Figure` (a notebook shows it)
and, given a path, writes the image there (PNG, or the format the suffix names).

The numbers behind the pictures need no matplotlib: :func:`score_contributions`,
:func:`retention_curve`, :func:`fade_threshold` and :func:`neighbourhood`.
"""

from ucma_core.plots.forgetting import fade_threshold, plot_forgetting_curves, retention_curve
from ucma_core.plots.graph import Neighbourhood, neighbourhood, plot_memory_graph
from ucma_core.plots.signals import plot_signals, score_contributions

__all__ = [
    "Neighbourhood",
    "fade_threshold",
    "neighbourhood",
    "plot_forgetting_curves",
    "plot_memory_graph",
    "plot_signals",
    "retention_curve",
    "score_contributions",
]
