"""Progress reporting for long work: export, import, re-embedding, bulk observe, consolidation.

A progress reporter is any callable ``progress(done, total, label)``: ``done`` of
``total`` units of the step called ``label`` are finished (``total`` is 0 when it is
not known). Library calls report nothing unless they are given one; the ``ucma``
command line passes :func:`auto_progress`'s choice.

Two reporters ship with UCMA:

* :class:`TerminalProgress` redraws one line on a terminal (stderr by default), and
  stays silent when the stream is not a terminal unless ``force=True``;
* :class:`TextProgress` prints a plain line every ``step`` percent, which reads well in
  a notebook's saved output and in a CI log.

Examples:
    >>> import io
    >>> out = io.StringIO()
    >>> bar = TextProgress(out, step=50)
    >>> for done in range(5):
    ...     bar(done, 4, "import")
    >>> print(out.getvalue(), end="")
    import: 0/4 (0%)
    import: 2/4 (50%)
    import: 4/4 (100%)
"""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

__all__ = ["ProgressCallback", "TerminalProgress", "TextProgress", "auto_progress", "notify"]


class ProgressCallback(Protocol):
    """What a long-running call reports to: ``done`` of ``total`` units of step ``label``."""

    def __call__(self, done: int, total: int, label: str) -> None: ...


def notify(progress: ProgressCallback | None, done: int, total: int, label: str) -> None:
    """Report to ``progress`` if there is one (the library calls' default is none)."""
    if progress is not None:
        progress(done, total, label)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class TerminalProgress:
    """A one-line bar redrawn in place: ``import [#######.....] 58% 580/1000 212/s 0:02 left``.

    Args:
        stream: where to draw (default ``sys.stderr``, so piped output stays clean).
        force: draw even when ``stream`` is not a terminal.
        width: characters of the bar itself.
        min_interval: seconds between redraws (the first and last are always drawn).
    """

    def __init__(
        self, stream: TextIO | None = None, *, force: bool = False, width: int = 30, min_interval: float = 0.1
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        isatty = getattr(self._stream, "isatty", None)
        self.enabled = force or bool(callable(isatty) and isatty())
        self._width = max(5, width)
        self._min_interval = min_interval
        self._label: str | None = None
        self._started = 0.0
        self._drawn_at = 0.0
        self._open = False  # a line is drawn and not yet ended

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if label != self._label:
            self._end_line()
            self._label, self._started, self._drawn_at = label, now, 0.0
        finished = total > 0 and done >= total
        if not finished and self._open and now - self._drawn_at < self._min_interval:
            return
        self._drawn_at = now
        self._stream.write("\r" + self._line(done, total, label, now - self._started) + "\x1b[K")
        self._open = True
        if finished:
            self._end_line()
        self._stream.flush()

    def _line(self, done: int, total: int, label: str, elapsed: float) -> str:
        rate = done / elapsed if elapsed > 0 else 0.0
        if total <= 0:
            return f"{label} {done} done" + (f" {rate:.0f}/s" if rate else "")
        share = min(1.0, done / total)
        filled = int(share * self._width)
        bar = "#" * filled + "." * (self._width - filled)
        tail = f" {rate:.0f}/s" if rate else ""
        if rate and done < total:
            tail += f" {_clock((total - done) / rate)} left"
        elif done >= total:
            tail += f" in {_clock(elapsed)}"
        return f"{label} [{bar}] {share:4.0%} {done}/{total}{tail}"

    def _end_line(self) -> None:
        if self._open:
            self._stream.write("\n")
            self._stream.flush()
            self._open = False

    def close(self) -> None:
        """End a line left open by a step that stopped before its total."""
        self._end_line()


class TextProgress:
    """Plain lines, one each time a step passes another ``step`` percent (and at its end):
    right for notebooks, logs and anything that is not a terminal.

    Args:
        stream: where to print (default ``sys.stdout``, which a notebook shows under the cell).
        step: percent between lines (1..100).
    """

    def __init__(self, stream: TextIO | None = None, *, step: int = 10) -> None:
        self._stream = stream
        self._step = min(100, max(1, int(step)))
        self._label: str | None = None
        self._next = 0

    def __call__(self, done: int, total: int, label: str) -> None:
        if label != self._label:
            self._label, self._next = label, 0
        if total <= 0:
            return
        percent = 100 * min(done, total) // total
        if percent < self._next:
            return
        self._next = (percent // self._step + 1) * self._step
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(f"{label}: {done}/{total} ({percent}%)\n")
        stream.flush()


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    kernel = get() if callable(get) else None
    return kernel is not None and type(kernel).__name__ == "ZMQInteractiveShell"


def auto_progress(stream: TextIO | None = None) -> ProgressCallback | None:
    """The reporter that suits where this runs: :class:`TextProgress` in a Jupyter kernel,
    :class:`TerminalProgress` when ``stream`` (default stderr) is a terminal, else ``None``."""
    if _in_notebook():
        return TextProgress(stream)
    bar = TerminalProgress(stream)
    return bar if bar.enabled else None
