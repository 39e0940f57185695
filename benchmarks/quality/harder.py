"""The harder users of version 2: what retrieval gets wrong on real conversations (issue 13).

Each harder user has the same kind of year as a version-1 user (dated sessions wrapped in small
talk, a denser November and December) but is asked other things, one kind per case of the issue:

* ``recent`` — "lately", "these days", "at the moment": the latest mention of a topic that came up
  several times, often weeks or months before the question;
* ``anchor_day`` — "before / after <event>", where the answer sits in the event's own session, on
  the side of the turn naming the event that a literal reading leaves out;
* ``loose_date`` — "in March" for something told on 1-3 April about the end of March, "the weekend
  before 12 June", "on 14 May" for something told the day after;
* ``own_anchor`` — a weekday pinned by the date given with it ("last Monday, on 3 March"), or a
  time the memory states in other words ("back in 2023" asked as "two years ago");
* ``time_words`` — the memory uses the question's time words ("the road trip we took last
  summer", "last Christmas") while the range they name holds no memory, or not that one;
* ``generic_turns`` — a rare keyword shared by question and evidence, and short generic turns
  shaped like the question ("Sounds fun! Where are you off to?");
* ``reply_context`` — the answer is a reply ("Sure, I'll try that next week.") whose meaning is
  in the turn it answers;
* ``current_state`` — something that changed during the year ("which gym does she go to now?"):
  the latest state, in a history imported in one go after the fact;
* ``multi_memory`` — two turns are needed: linked by a person's name, or one story told over two
  turns of a session.

Harder users are marked ``"imported": true``: the benchmark observes their history the way an
application imports a chat export, with the clock at the import time rather than following the
turns. Questions are kept only if nobody but the evidence talks about their topic in the window
the wording implies (``_window``), as for version-1 temporal questions.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable, Sequence
from datetime import date, timedelta

from . import content as ct
from . import harder_content as hc
from .builder import Session, UserBuilder
from .slots import SlotValues
from .timeline import build_timeline, month_range, ts_of

KINDS = (
    "recent",
    "anchor_day",
    "loose_date",
    "own_anchor",
    "time_words",
    "generic_turns",
    "reply_context",
    "current_state",
    "multi_memory",
)
USERS = [
    ("isolde", "Isolde"),
    ("jomo", "Jomo"),
    ("kalani", "Kalani"),
    ("lucian", "Lucian"),
    ("mireya", "Mireya"),
    ("nuno", "Nuno"),
]
PER_KIND = 7
SHARED_SESSIONS = 8
ACQUAINTANCES = 5
DAY = 86_400
Block = list[tuple[str, str, str | None]]


class NamePool:
    """First names for the harder users' people, drawn without repeats across the dataset."""

    def __init__(self, seed: int) -> None:
        self.names = random.Random(f"{seed}:harder-names").sample(hc.EXTRA_NAMES, len(hc.EXTRA_NAMES))

    def take(self) -> str:
        return self.names.pop()


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _date(d: date, style: int) -> str:
    month = calendar.month_name[d.month]
    return [f"{d.day} {month}", f"{month} {_ordinal(d.day)}", f"the {_ordinal(d.day)} of {month}"][style % 3]


class HarderUserBuilder(UserBuilder):
    """Plans one harder user's year; sessions are written by :class:`UserBuilder`."""

    kinds = KINDS

    def __init__(self, user_id: str, name: str, names: NamePool, seed: int) -> None:
        self.user_id = user_id
        self.name = name
        self.rng = random.Random(f"{seed}:{user_id}")
        self.slots = SlotValues(self.rng)
        self.companions = [names.take(), names.take()]
        self.acquaintances = [names.take() for _ in range(ACQUAINTANCES)]
        rels = self.rng.sample(sorted(r for r, g in ct.RELATIONS.items() if not g), 2)
        self.relations = list(zip(rels, self.acquaintances[:2], strict=True))
        self.people = self.companions + self.acquaintances
        self.tl = build_timeline(self.rng, n_main=self.rng.randint(48, 52))
        self.sessions = [Session(i, d, None) for i, d in enumerate(self.tl.days)]
        self.questions: list[dict] = []
        self.windows: list[tuple[set[str], int, int]] = []
        self.chosen: set[str] = set()
        self._queues: dict[int, list] = {}
        shared = self.rng.sample(
            [s for s in self.sessions if s.index != self.tl.yesterday_index], SHARED_SESSIONS
        )
        for s in shared:
            s.companion = self.rng.choice(self.companions)

    # -- helpers ---------------------------------------------------------------------------------
    def user_record(self) -> dict:
        return {**super().user_record(), "imported": True}

    def checked(self, q: dict) -> bool:
        return "_window" in q

    @property
    def asked_day(self) -> date:
        return self.tl.asked_day

    def between(self, first: date, last: date) -> list[Session]:
        """Sessions whose day lies in ``[first, last]``."""
        return [s for s in self.sessions if first <= s.day <= last]

    def put(self, block: Block, candidates: Sequence[Session], cap: int = 4) -> Session | None:
        """Place ``block`` in a random one of ``candidates`` that has room and no clash."""
        texts = [t for _, t, _ in block]
        fitting = [
            s for s in candidates if s.planted < cap and not any(self.clashes(t, s.day) for t in texts)
        ]
        if not fitting:
            return None
        session = self.rng.choice(fitting)
        session.blocks.append(block)
        return session

    def reserve(self, words: Sequence[str], start: int, end: int) -> tuple[int, int]:
        """From now on only what is already placed may use ``words`` in ``[start, end)``."""
        self.windows.append((set(words), start, end))
        return start, end

    def anywhere(self) -> list[Session]:
        return [s for s in self.sessions if s.day < self.asked_day]

    def away_from(self, day: date, days: int) -> list[Session]:
        return [s for s in self.sessions if abs((s.day - day).days) >= days]

    def reply(self) -> str:
        return str(self.cycle(ct.TOPIC_REPLIES))

    def pick(self, items: list[dict], n: int = PER_KIND) -> list[dict]:
        return self.rng.sample(items, min(n, len(items)))

    def each_until(self, items: list[dict], plant: Callable[[dict], bool], n: int = PER_KIND) -> None:
        """Plant items (in a random order) until ``n`` of them found a place."""
        done = 0
        for item in self.rng.sample(items, len(items)):
            if done < n and plant(item):
                done += 1

    # -- planning --------------------------------------------------------------------------------
    def plan(self) -> None:
        self.plan_anchor_day()  # windows that span the whole history first
        self.plan_generic_turns()
        self.plan_reply_context()
        self.plan_recent()
        self.plan_current_state()
        self.plan_loose_date()
        self.plan_own_anchor()
        self.plan_time_words()
        self.plan_multi_memory()

    def plan_recent(self) -> None:
        asked = self.asked_day

        def plant(key: str) -> bool:
            topic = hc.RECENT_TOPICS[key]
            n = self.rng.choice([3, 4])
            lasts = self.between(asked - timedelta(days=120), asked - timedelta(days=21))
            texts = [t for t, _ in topic["statements"][:n]]
            last = self.put([("user", texts[-1], f"recent:{key}"), ("assistant", self.reply(), None)], lasts)
            if last is None:
                return False
            day = last.day
            for text in reversed(texts[:-1]):
                earlier = self.between(day - timedelta(days=150), day - timedelta(days=30))
                placed = self.put([("user", text, None), ("assistant", self.reply(), None)], earlier)
                if placed is None:
                    break
                day = placed.day
            window = self.reserve(topic["words"], ts_of(last.day, 0), self.tl.asked_at)
            question = str(self.cycle(hc.RECENT_QUESTIONS)).format(u=self.name, label=topic["label"])
            self.ask(
                "recent",
                question,
                [f"recent:{key}"],
                topic["statements"][n - 1][1],
                _window=window,
                _words=set(topic["words"]),
            )
            return True

        done = 0
        for key in self.rng.sample(sorted(hc.RECENT_TOPICS), len(hc.RECENT_TOPICS)):
            if done < PER_KIND and plant(key):
                done += 1

    def plan_anchor_day(self) -> None:
        asked = self.asked_day

        def plant(event: dict) -> bool:
            side = self.rng.choice(["before", "after"])
            spec = event[side]
            key = event["key"]
            ev, anchor = f"anchor_day:{key}", f"anchor:{key}"
            if side == "before":
                block: Block = [
                    ("user", spec["anchor"], anchor),
                    ("assistant", self.reply(), None),
                    ("user", spec["evidence"], ev),
                    ("assistant", self.reply(), None),
                ]
            else:
                block = [
                    ("user", spec["evidence"], ev),
                    ("assistant", self.reply(), None),
                    ("user", spec["anchor"], anchor),
                    ("assistant", self.reply(), None),
                ]
            session = self.put(block, self.between(date(asked.year, 3, 1), date(asked.year, 10, 15)), cap=3)
            if session is None:
                return False
            self.reserve(event["words"], 0, self.tl.asked_at)
            day = session.day
            if side == "before":
                window = (0, ts_of(day + timedelta(days=21), 0))
                other = [s for s in self.sessions if s.day >= day + timedelta(days=30) and s.day < asked]
            else:
                window = (ts_of(day - timedelta(days=21), 0), self.tl.asked_at)
                other = [s for s in self.sessions if s.day <= day - timedelta(days=30)]
            self.reserve(
                spec["ev_words"], ts_of(day - timedelta(days=21), 0), ts_of(day + timedelta(days=22), 0)
            )
            self.put([("user", spec["distractor"], None), ("assistant", self.reply(), None)], other)
            self.ask(
                "anchor_day",
                spec["question"].format(u=self.name),
                [ev],
                spec["answer"],
                time_expr=f"{side} {event['event']}",
                anchor=anchor,
                _window=window,
                _words=set(spec["ev_words"]),
            )
            return True

        self.each_until(hc.ANCHOR_EVENTS, plant)

    def plan_loose_date(self) -> None:
        def plant(item: dict) -> bool:
            for variant in self.rng.sample(sorted(hc.LOOSE_WHEN), 3):
                if variant == "month_end":
                    pool = [s for s in self.anywhere() if s.day.day <= 3 and s.day.month > 1]
                elif variant == "weekend":
                    pool = [s for s in self.anywhere() if s.day.weekday() >= 5 and s.day.month < 12]
                else:
                    pool = [s for s in self.anywhere() if s.day.month > 1]
                key = f"loose_date:{item['key']}"
                session = self.put([("user", item[variant], key), ("assistant", self.reply(), None)], pool)
                if session is None:
                    continue
                day = session.day
                style = self.rng.randrange(3)
                if variant == "month_end":
                    month = day.month - 1
                    when = f"in {calendar.month_name[month]}"
                    literal = month_range(month, day.year)
                elif variant == "weekend":
                    saturday = day - timedelta(days=day.weekday() - 5)
                    ref = saturday + timedelta(days=2 + self.rng.randint(1, 3))
                    when = f"the weekend before {_date(ref, style % 2)}"
                    literal = (ts_of(saturday, 0), ts_of(saturday + timedelta(days=2), 0))
                else:
                    before = day - timedelta(days=1)
                    when = f"on {_date(before, style)}"
                    literal = (ts_of(before, 0), ts_of(day, 0))
                window = self.reserve(
                    item["words"], ts_of(day - timedelta(days=20), 0), ts_of(day + timedelta(days=21), 0)
                )
                self.put(
                    [("user", item["distractor"], None), ("assistant", self.reply(), None)],
                    [s for s in self.away_from(day, 25) if s.day < self.asked_day],
                )
                self.ask(
                    "loose_date",
                    item["question"].format(u=self.name, when=when),
                    [key],
                    item["answer"],
                    time_expr=when,
                    time_range=list(literal),
                    _window=window,
                    _words=set(item["words"]),
                )
                return True
            return False

        self.each_until(hc.LOOSE_DATES, plant)

    def plan_own_anchor(self) -> None:
        n_dates = self.rng.choice([3, 4])

        def plant_date(item: dict) -> bool:
            key = f"own_anchor:{item['key']}"
            pool = [s for s in self.anywhere() if s.day < self.asked_day - timedelta(days=14)]
            session = self.put([("user", item["text"], key), ("assistant", self.reply(), None)], pool)
            if session is None:
                return False
            day = session.day
            template = str(self.cycle(hc.OWN_DATE_WHEN))
            when = template.format(
                weekday=calendar.day_name[day.weekday()],
                date=_date(day, self.rng.randrange(2)),
                ordinal=_ordinal(day.day),
                month=calendar.month_name[day.month],
            )
            window = self.reserve(
                item["words"], ts_of(day - timedelta(days=20), 0), ts_of(day + timedelta(days=21), 0)
            )
            for line in item["distractors"]:
                self.put([("user", line, None), ("assistant", self.reply(), None)], self.away_from(day, 25))
            self.ask(
                "own_anchor",
                item["question"].format(u=self.name, when=when),
                [key],
                item["answer"],
                time_expr=when,
                time_range=[ts_of(day, 0), ts_of(day + timedelta(days=1), 0)],
                _window=window,
                _words=set(item["words"]),
            )
            return True

        self.each_until(hc.OWN_DATE_ITEMS, plant_date, n_dates)
        done = 0
        for family in self.rng.sample(hc.OWN_SELF_FAMILIES, len(hc.OWN_SELF_FAMILIES)):
            if done >= PER_KIND - n_dates:
                break
            asked_about = [i for i, st in enumerate(family["statements"]) if st[2]]
            target = self.rng.choice(asked_about)
            placed = {}
            for i, (text, _answer, _when, (m1, m2)) in enumerate(family["statements"]):
                pool = self.between(date(self.asked_day.year, m1, 1), date(self.asked_day.year, m2, 28))
                key = f"own_anchor:{family['key']}:{i}"
                session = self.put([("user", text, key), ("assistant", self.reply(), None)], pool)
                if session is not None:
                    placed[i] = key
            if target not in placed:
                continue
            text, answer, when, _months = family["statements"][target]
            self.ask(
                "own_anchor",
                family["question"].format(u=self.name, when=when),
                [placed[target]],
                answer,
                time_expr=when,
            )
            done += 1

    def plan_time_words(self) -> None:
        year = self.asked_day.year

        def months(span: tuple[int, int]) -> list[Session]:
            last = min(date(year, span[1], 28), self.asked_day - timedelta(days=1))
            return self.between(date(year, span[0], 1), last)

        def plant(item: dict) -> bool:
            key = f"time_words:{item['key']}"
            if (
                self.put(
                    [("user", item["text"], key), ("assistant", self.reply(), None)], months(item["told"])
                )
                is None
            ):
                return False
            for line, span in item["distractors"]:
                self.put([("user", line, None), ("assistant", self.reply(), None)], months(span))
            self.ask(
                "time_words",
                item["question"].format(u=self.name),
                [key],
                item["answer"],
                time_expr=item["phrase"],
            )
            return True

        self.each_until(hc.TIME_WORD_ITEMS, plant)

    def plan_generic_turns(self) -> None:
        def plant(item: dict) -> bool:
            key = f"generic_turns:{item['key']}"
            if (
                self.put([("user", item["text"], key), ("assistant", self.reply(), None)], self.anywhere())
                is None
            ):
                return False
            self.reserve(item["words"], 0, self.tl.asked_at)
            for echo in self.rng.sample(item["echoes"], 2):
                lead = str(self.cycle(hc.GENERIC_LEADS))
                self.put([("user", lead, None), ("assistant", echo, None)], self.anywhere(), cap=5)
            self.ask("generic_turns", item["question"].format(u=self.name), [key], item["answer"])
            return True

        self.each_until(hc.GENERIC_ITEMS, plant)

    def plan_reply_context(self) -> None:
        shared = [s for s in self.sessions if s.companion]
        plans = ["companion"] * 2 + ["suggest"] * 3 + ["continue"] * 2
        pools = {
            "companion": self.rng.sample(hc.REPLY_COMPANION, len(hc.REPLY_COMPANION)),
            "suggest": self.rng.sample(hc.REPLY_SUGGESTIONS, len(hc.REPLY_SUGGESTIONS)),
            "continue": self.rng.sample(hc.REPLY_CONTINUE, len(hc.REPLY_CONTINUE)),
        }
        for how in plans:
            while pools[how]:
                item = pools[how].pop()
                key = f"reply_context:{item['key']}"
                if how == "companion":  # asked in a shared session: that session's companion answers
                    fitting = [s for s in shared if s.planted < 4]
                    if not fitting:
                        continue
                    session = self.rng.choice(fitting)
                    c = session.companion or self.companions[0]
                    block: Block = [
                        ("user", item["ask"].format(c=c), None),
                        (c, item["answer_turn"], key),
                        ("assistant", self.reply(), None),
                    ]
                    session.blocks.append(block)
                    question = item["question"].format(u=self.name, c=c)
                elif how == "suggest":
                    block = [
                        ("user", item["prompt"], None),
                        ("assistant", item["suggestion"], None),
                        ("user", str(self.cycle(hc.REPLY_COMMITS)), key),
                        ("assistant", self.reply(), None),
                    ]
                    if self.put(block, self.anywhere()) is None:
                        continue
                    question = item["question"].format(u=self.name)
                else:
                    block = [
                        ("user", item["first"], None),
                        ("assistant", item["nudge"], None),
                        ("user", item["second"], key),
                        ("assistant", self.reply(), None),
                    ]
                    if self.put(block, self.anywhere()) is None:
                        continue
                    question = item["question"].format(u=self.name)
                self.reserve(item["words"], 0, self.tl.asked_at)
                self.ask("reply_context", question, [key], item["answer"])
                break

    def plan_current_state(self) -> None:
        asked = self.asked_day

        def plant(item: dict) -> bool:
            (old_text, _), (new_text, answer) = item["states"]
            key = f"current_state:{item['key']}"
            late = self.between(asked - timedelta(days=60), asked - timedelta(days=5))
            new = self.put([("user", new_text, key), ("assistant", self.reply(), None)], late)
            if new is None:
                return False
            early = self.between(date(asked.year, 1, 1), new.day - timedelta(days=100))
            old = self.put([("user", old_text, None), ("assistant", self.reply(), None)], early)
            if old is None:
                new.blocks.pop()
                return False
            window = self.reserve(item["words"], ts_of(old.day + timedelta(days=1), 0), self.tl.asked_at)
            self.ask(
                "current_state",
                self.rng.choice(item["questions"]).format(u=self.name),
                [key],
                answer,
                _window=window,
                _words=set(item["words"]),
            )
            return True

        self.each_until(hc.STATE_ITEMS, plant)

    def plan_multi_memory(self) -> None:
        people = list(self.acquaintances)
        n_chains = min(self.rng.choice([3, 4]), len(people))

        def plant_chain(item: dict) -> bool:
            person = people.pop()
            first, second = (f"multi_memory:{item['key']}:{i}" for i in (1, 2))
            a = self.put(
                [("user", item["first"].format(p=person), first), ("assistant", self.reply(), None)],
                self.anywhere(),
            )
            if a is None:
                return False
            b = self.put(
                [("user", item["second"].format(p=person), second), ("assistant", self.reply(), None)],
                [s for s in self.anywhere() if s.index != a.index],
            )
            if b is None:
                a.blocks.pop()
                return False
            for line in self.rng.sample(ct.HOP_NAME_DISTRACTORS, 2):
                self.put(
                    [("user", line.format(p=person), None), ("assistant", self.reply(), None)],
                    self.anywhere(),
                )
            self.ask(
                "multi_memory",
                item["question"].format(u=self.name),
                [first, second],
                item["answer"],
                person=person,
            )
            return True

        def plant_story(item: dict) -> bool:
            first, second = (f"multi_memory:{item['key']}:{i}" for i in (1, 2))
            block: Block = [
                ("user", item["first"], first),
                ("assistant", str(self.cycle(hc.STORY_NUDGES)), None),
                ("user", item["second"], second),
                ("assistant", self.reply(), None),
            ]
            if self.put(block, self.anywhere()) is None:
                return False
            self.ask("multi_memory", item["question"].format(u=self.name), [first, second], item["answer"])
            return True

        self.each_until(hc.MULTI_CHAINS, plant_chain, n_chains)
        self.each_until(hc.MULTI_STORIES, plant_story, PER_KIND - n_chains)
