"""Helpers shared by the notebook definitions: cell constructors and the setup cell."""

from __future__ import annotations


def md(text: str) -> tuple[str, str]:
    """A markdown cell."""
    return ("md", text)


def code(text: str) -> tuple[str, str]:
    """A code cell."""
    return ("code", text)


# Two small display helpers every notebook defines in its first code cell: a table as
# Markdown (rendered by Jupyter and by code hosts) and a matplotlib figure as a PNG output.
HELPERS = '''
import io
from datetime import datetime, timezone

from IPython.display import Image, Markdown, display


def table(rows, columns):
    """Show rows (dicts) as a Markdown table with these columns."""
    def cell(value):
        if isinstance(value, float):
            value = f"{value:.3f}"
        return str(value).replace("|", "\\\\|").replace("\\n", " ")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    display(Markdown("\\n".join(lines)))


def show(figure):
    """Show a matplotlib figure as a PNG image."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=72, bbox_inches="tight")
    display(Image(data=buffer.getvalue(), format="png"))


class Clock:
    """A clock that stands still until moved: every run of this notebook prints the same."""

    def __init__(self, start):
        self.now = start.timestamp()

    def __call__(self):
        return self.now

    def advance(self, days=0.0, hours=0.0):
        self.now += days * 86400 + hours * 3600
'''
