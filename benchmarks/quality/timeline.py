"""Session dates for one benchmark user, and the calendar windows questions refer to.

A user's history runs from early January to early December 2025 (UTC). Most sessions are spread
over January to October; a denser stretch in November and early December makes "yesterday",
"last week" and "last month" meaningful for questions asked the morning after the last session.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

YEAR = 2025
# Hours people chat at, weighted: mornings, lunch, evenings.
_HOURS = [7, 7, 8, 8, 9, 12, 12, 13, 17, 18, 19, 19, 20, 20, 21, 21, 22]


def ts_of(day: date, seconds: int) -> int:
    """Epoch seconds of ``day`` at 00:00 UTC plus ``seconds``."""
    return int(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()) + seconds


def month_range(month: int, year: int = YEAR) -> tuple[int, int]:
    """``[start, end)`` epoch seconds of a calendar month."""
    start = date(year, month, 1)
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return ts_of(start, 0), ts_of(end, 0)


@dataclass
class Timeline:
    rng: random.Random
    days: list[date]
    asked_day: date
    asked_at: int
    yesterday_index: int
    last_week_indices: list[int]
    last_month_indices: list[int]
    late_main_indices: list[int]
    move_index: int
    yesterday: tuple[int, int] = field(default=(0, 0))
    last_week: tuple[int, int] = field(default=(0, 0))
    last_month: tuple[int, int] = field(default=(0, 0))

    def session_start(self, day: date) -> int:
        """A plausible start time on ``day`` (ends before midnight even for a long session)."""
        return ts_of(
            day, self.rng.choice(_HOURS) * 3600 + self.rng.randint(0, 59) * 60 + self.rng.randint(0, 59)
        )


def build_timeline(rng: random.Random, n_main: int | None = None) -> Timeline:
    asked_day = date(YEAR, 12, rng.randint(2, 10))
    monday = asked_day - timedelta(days=asked_day.weekday())
    week_start, week_end = monday - timedelta(days=7), monday
    yesterday = asked_day - timedelta(days=1)

    last_week_days = [week_start + timedelta(days=i) for i in range(7)]
    last_week_days = rng.sample([d for d in last_week_days if d != yesterday], 2)
    november = [date(YEAR, 11, d) for d in range(1, 31)]
    november = [d for d in november if d < week_start - timedelta(days=1)]
    nov_days = rng.sample(november, 4)
    this_week = [monday + timedelta(days=i) for i in range((yesterday - monday).days)]
    extra = rng.sample(this_week, min(1, len(this_week)))

    n_main = n_main or rng.randint(34, 38)
    span = [date(YEAR, 1, 3) + timedelta(days=i) for i in range((date(YEAR, 10, 28) - date(YEAR, 1, 3)).days)]
    main_days = rng.sample(span, n_main)

    days = sorted(set(main_days + nov_days + last_week_days + extra + [yesterday]))
    index = {d: i for i, d in enumerate(days)}
    main_sorted = sorted(main_days)
    move_day = rng.choice(main_sorted[len(main_sorted) // 3 : 2 * len(main_sorted) // 3])
    asked_at = ts_of(asked_day, rng.randint(8, 11) * 3600 + rng.randint(0, 3599))
    month_start = date(YEAR, 11, 1)
    return Timeline(
        rng=rng,
        days=days,
        asked_day=asked_day,
        asked_at=asked_at,
        yesterday_index=index[yesterday],
        last_week_indices=sorted(index[d] for d in last_week_days),
        last_month_indices=sorted(index[d] for d in nov_days),
        late_main_indices=[index[d] for d in main_sorted if d >= date(YEAR, 6, 1)],
        move_index=index[move_day],
        yesterday=(ts_of(yesterday, 0), ts_of(asked_day, 0)),
        last_week=(ts_of(week_start, 0), ts_of(week_end, 0)),
        last_month=(ts_of(month_start, 0), ts_of(date(YEAR, 12, 1), 0)),
    )
