"""Making and saving a figure without ``pyplot``, and matplotlib imported only when needed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.errors import DependencyMissingError, InvalidInputError, StorageError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PALETTE", "new_figure", "save", "short"]

#: One colour per memory type (and entities), the same in every plot.
PALETTE = {
    "episodic": "#4C78A8",
    "semantic": "#F58518",
    "procedural": "#54A24B",
    "learning": "#B279A2",
    "prospective": "#E45756",
    "entity": "#9D9D9D",
}


def new_figure(width: float, height: float) -> Figure:
    """A blank figure of ``width`` × ``height`` inches, rendered by Agg."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise DependencyMissingError(
            "plots need matplotlib, which is not installed: pip install 'ucma[plots]'"
        ) from e
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save(figure: Figure, path: str | os.PathLike[str] | None, **options: Any) -> None:
    """Write ``figure`` to ``path`` (PNG unless the suffix names another format)."""
    if path is None:
        return
    target = Path(path)
    try:
        figure.savefig(target, format=target.suffix[1:].lower() or "png", dpi=120, **options)
    except ValueError as e:  # matplotlib's answer to a suffix it cannot write
        raise InvalidInputError(f"cannot write the plot to {target}: {e}") from e
    except OSError as e:
        raise StorageError(f"cannot write the plot to {target}: {e}") from e


def short(text: str, limit: int = 40) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
