"""What one sleep cycle did."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ConsolidationReport"]


@dataclass
class ConsolidationReport:
    """What one cycle did: per phase, counters; plus provider errors and whether it was cut short."""

    phases: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    def count(self, phase: str, key: str, n: int = 1) -> None:
        bucket = self.phases.setdefault(phase, {})
        bucket[key] = bucket.get(key, 0) + n
