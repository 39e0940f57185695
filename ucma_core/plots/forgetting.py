"""Forgetting curves: how a memory's retention falls, and where its reviews lifted it.

A memory's retention is ``R = exp(-t / S)`` (see :mod:`ucma_core.dynamics.retention`):
``t`` days since its last review, ``S`` its stability. The record keeps the current
state — ``stability``, ``last_access``, ``access_count`` — so the curve from the last
review on is exact. Earlier reviews are not stored; when the caller knows them (a
notebook that called ``remember`` at known times), :func:`retention_curve` rebuilds
the saw-tooth before the last review with the core's own reinforcement rule.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ucma_core.config import MemoryConfig
from ucma_core.dynamics.retention import DAY, initial_stability, reinforced_stability, retention
from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.plots.figure import PALETTE, new_figure, save, short
from ucma_core.records import Fact, MemoryRecord
from ucma_core.validation import to_epoch

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ucma_core.memory import Memory

MAX_WINDOW_DAYS = 36_500.0
"""The widest window either side of now that a forgetting plot draws (a century)."""

__all__ = ["fade_threshold", "fade_time", "plot_forgetting_curves", "retention_curve"]


def fade_threshold(record: MemoryRecord, config: MemoryConfig) -> float:
    """The retention below which the forgetting engine lets ``record`` go (unless a
    protection keeps it): ``config.forgetting.retention_threshold``, scaled by
    ``1.5 − confidence`` for facts."""
    threshold = config.forgetting.retention_threshold
    if isinstance(record, Fact):
        threshold *= 1.5 - record.confidence
    return threshold


def fade_time(record: MemoryRecord, config: MemoryConfig) -> float:
    """Epoch seconds at which ``record``'s retention reaches :func:`fade_threshold` if it is
    not reviewed again."""
    threshold = min(max(fade_threshold(record, config), 1e-9), 1.0)
    return record.last_access - math.log(threshold) * max(record.stability, 1e-6) * DAY


def retention_curve(
    record: MemoryRecord,
    config: MemoryConfig,
    *,
    start: float,
    end: float,
    reviews: Sequence[float] = (),
    points: int = 200,
) -> tuple[list[float], list[float]]:
    """``(times, retentions)`` of ``record`` from ``start`` to ``end`` (epoch seconds).

    From ``record.last_access`` on, the curve uses the stored stability (exact).
    Before it, if ``reviews`` are given (epoch seconds, the first being when the
    memory was stored), the curve is rebuilt from the initial stability of the
    record's importance, reinforced at each review as the core does; without
    ``reviews`` the curve starts at the last review.

    Examples:
        >>> from ucma_core import MemoryConfig
        >>> from ucma_core.records import Episode, MemoryType
        >>> ep = Episode("e1", MemoryType.EPISODIC, "hi", 0.0, None, None, None, 0.5, "user", (), {}, (),
        ...              stability=1.0, last_access=0.0, access_count=0)
        >>> times, values = retention_curve(ep, MemoryConfig(), start=0.0, end=2 * 86400.0, points=3)
        >>> [round(v, 3) for v in values]
        [1.0, 0.368, 0.135]
    """
    if end <= start:
        raise InvalidInputError("end must be after start")
    last = record.last_access
    marks = sorted(r for r in reviews if r < last)
    segments: list[tuple[float, float]] = []  # (segment start, stability)
    if marks:
        stability = initial_stability(record.importance, config.retention)
        for previous, current in zip(marks, [*marks[1:], last], strict=True):
            segments.append((previous, stability))
            stability = reinforced_stability(stability, previous, current, config.retention)
    segments.append((last, record.stability))
    times: list[float] = []
    values: list[float] = []
    step = (end - start) / max(points - 1, 1)
    ends = [s0 for s0, _ in segments[1:]] + [math.inf]
    for (s0, stability), s1 in zip(segments, ends, strict=True):
        lo, hi = max(start, s0), min(end, s1)
        if hi < lo:
            continue
        # each segment ends at the next review with the value just before it, so the
        # review shows as a jump back to 1
        n = max(2, int((hi - lo) / step) + 1)
        for k in range(n):
            t = lo + (hi - lo) * k / (n - 1)
            times.append(t)
            values.append(retention(stability, s0, t))
    return times, values


def plot_forgetting_curves(
    memory: Memory,
    memory_ids: Sequence[str],
    path: str | os.PathLike[str] | None = None,
    *,
    reviews: Mapping[str, Sequence[datetime | float]] | None = None,
    now: datetime | float | None = None,
    days_before: float = 14.0,
    days_after: float = 30.0,
) -> Figure:
    """Retention of each memory over time, with its reviews, the forgetting threshold and now.

    Args:
        memory: the memory holding them.
        memory_ids: the memories to draw (at most 12).
        path: write the image here (PNG unless the suffix says otherwise).
        reviews: known review times per memory id (see :func:`retention_curve`).
        now: the "now" line (default: the memory's clock).
        days_before / days_after: the window around ``now``, each from 0 to
            :data:`MAX_WINDOW_DAYS` days.

    Raises:
        InvalidInputError: a window that is not a finite number of days in that range, no
            memory or more than 12, or an unknown id (:class:`MemoryNotFoundError`).
    """
    for name, span in (("days_before", days_before), ("days_after", days_after)):
        if not (math.isfinite(span) and 0.0 <= span <= MAX_WINDOW_DAYS):
            raise InvalidInputError(
                f"{name} must be a number of days from 0 to {MAX_WINDOW_DAYS:g}, got {span!r}"
            )
    if days_before + days_after <= 0.0:
        raise InvalidInputError("days_before and days_after are both 0: the window is empty")
    ids = list(dict.fromkeys(memory_ids))
    if not 1 <= len(ids) <= 12:
        raise InvalidInputError("plot_forgetting_curves draws 1 to 12 memories")
    records = []
    for memory_id in ids:
        record = memory.get(memory_id)
        if record is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
        records.append(record)
    at = memory.now() if now is None else to_epoch(now, "now")
    start, end = at - days_before * DAY, at + days_after * DAY
    known = {k: [to_epoch(t, "review time") for t in v] for k, v in (reviews or {}).items()}
    figure = new_figure(9.0, 5.4)
    ax = figure.add_subplot()
    colours = [PALETTE[k] for k in ("episodic", "semantic", "procedural", "learning", "prospective")]
    for n, record in enumerate(records):
        colour = colours[n % len(colours)]
        times, values = retention_curve(
            record, memory.config, start=start, end=end, reviews=known.get(record.id, ())
        )
        days = [(t - at) / DAY for t in times]
        label = f"{short(record.content, 32)} ({record.access_count} reviews, S={record.stability:.1f} d)"
        ax.plot(days, values, color=colour, linewidth=1.8, label=label)
        drawn = [t for t in known.get(record.id, ()) if t < record.last_access] + [record.last_access]
        marks = [t for t in drawn if start <= t <= end]
        ax.plot([(t - at) / DAY for t in marks], [1.0] * len(marks), "o", color=colour, markersize=5)
        ax.axhline(fade_threshold(record, memory.config), color=colour, linewidth=0.6, linestyle=":")
    ax.axvline(0.0, color="black", linewidth=0.8, linestyle="--")
    ax.text(0.0, 1.02, " now", fontsize=8, va="bottom")
    ax.set_xlim(-days_before, days_after)
    ax.set_ylim(0.0, 1.08)
    ax.set_xlabel("days from now")
    ax.set_ylabel("retention  R = exp(−t / S)")
    ax.set_title("Forgetting curves (dots: reviews; dotted: prune threshold)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, fontsize=7, frameon=False)
    ax.grid(alpha=0.2)
    save(figure, path)
    return figure
