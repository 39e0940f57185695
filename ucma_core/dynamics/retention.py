"""Ebbinghaus retention with spaced reinforcement, as pure functions.

Retention ``R = exp(-t / S)``: ``t`` is days since the memory was last reviewed
(stored, retrieved or reinforced) and ``S`` its stability in days. Each review adds
``boost × spacing`` to ``S``, where spacing is the number of days since the previous
review (at least 1, at most ``max_spacing_factor``): reviews spread over time make
a memory last longer than the same number of reviews in a burst.
"""

from __future__ import annotations

import math

from ucma_core.config import RetentionConfig

__all__ = ["DAY", "initial_stability", "recency", "reinforced_stability", "retention"]

DAY = 86_400.0


def retention(stability_days: float, last_review: float, now: float) -> float:
    """Current retention in (0, 1]; 1.0 at (or before) the last review."""
    elapsed_days = max(0.0, now - last_review) / DAY
    return math.exp(-elapsed_days / max(stability_days, 1e-6))


def reinforced_stability(
    stability_days: float, last_review: float, now: float, config: RetentionConfig
) -> float:
    """Stability after a review at ``now`` (never lower than before)."""
    spacing = min(max(1.0, max(0.0, now - last_review) / DAY), config.max_spacing_factor)
    return stability_days + config.stability_boost * spacing


def initial_stability(importance: float, config: RetentionConfig) -> float:
    """Stability of a new memory: important memories start out more stable."""
    return config.initial_stability_days + config.importance_stability_bonus * min(max(importance, 0.0), 1.0)


def recency(timestamp: float, now: float, half_life_days: float) -> float:
    """1.0 for a memory from ``now``, halving every ``half_life_days``; future times count as now."""
    age_days = max(0.0, now - timestamp) / DAY
    return float(0.5 ** (age_days / half_life_days))
