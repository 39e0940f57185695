"""One benchmark user's history: sessions, planted facts and the questions about them.

:class:`UserBuilder` plans what a user says (the version-1 kinds: single facts, multi-hop
relations, temporal topics, preferences, who said what), places it in dated sessions wrapped in
small talk, and writes the turns and the questions labelled with their evidence turns. The harder
users of version 2 (:mod:`.harder`) plan other things on the same machinery.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

from . import chatter as ch
from . import content as ct
from .slots import NameBook, SlotValues
from .timeline import Timeline, build_timeline, month_range, ts_of

KINDS = ("single_fact", "multi_hop", "temporal", "preference", "who_said")
PER_USER = {"single_fact": 8, "multi_hop": 7, "preference": 8, "who_said": 8}
SHARED_SESSIONS = 6
# Planted items that must not meet in one user's history (they would make an answer ambiguous).
EXCLUSIVE = [
    {"who:bike", "fact:wheel"},
    {"fact:puppy", "topic:dog", "pref:dogs"},
    {"fact:notice", "topic:job_search"},
    {"topic:landlord", "fact:rent"},
    {"pref:swimming", "fact:wake"},
    {"pref:swimming", "topic:knee"},
    {"pref:not_morning", "fact:wake"},
    {"pref:window_seat", "fact:flight"},
]
EXTRAS = ("time_expr", "time_range", "anchor", "relation", "person")


class Session:
    def __init__(self, index: int, day: date, companion: str | None) -> None:
        self.index = index
        self.day = day
        self.companion = companion
        self.blocks: list[list[tuple[str, str, str | None]]] = []  # (role, text, evidence key)

    @property
    def planted(self) -> int:
        return len(self.blocks)


class UserBuilder:
    """Plans and writes one user's sessions and questions."""

    kinds: tuple[str, ...] = KINDS

    def __init__(self, user_id: str, name: str, names: NameBook, seed: int) -> None:
        self.user_id = user_id
        self.name = name
        self.rng = random.Random(f"{seed}:{user_id}")
        self.slots = SlotValues(self.rng)
        self.companions = [names.take(""), names.take("")]
        relations = self.rng.sample(sorted(ct.RELATIONS), PER_USER["multi_hop"])
        self.relations = [(rel, names.take(ct.RELATIONS[rel])) for rel in relations]
        self.people = self.companions + [p for _, p in self.relations]  # everyone the user talks about
        self.tl: Timeline = build_timeline(self.rng)
        self.sessions = [Session(i, d, None) for i, d in enumerate(self.tl.days)]
        self.questions: list[dict] = []
        self.windows: list[
            tuple[set[str], int, int]
        ] = []  # topic words, [start, end) where only evidence may say them
        self.chosen: set[str] = set()
        self._queues: dict[int, list] = {}

    # -- helpers ---------------------------------------------------------------------------------
    def cycle(self, options: list) -> object:
        """The next of ``options`` in a per-user shuffled order (a user repeats a phrasing rarely)."""
        queue = self._queues.setdefault(id(options), [])
        if not queue:
            queue.extend(self.rng.sample(options, len(options)))
        return queue.pop()

    def fmt(self, text: str, **values: str) -> str:
        return text.format(u=self.name, **values)

    def allowed(self, tag: str) -> bool:
        return not any(tag in group and (group - {tag}) & self.chosen for group in EXCLUSIVE)

    def pick_items(self, items: list[dict], n: int, prefix: str) -> list[dict]:
        out = []
        for item in self.rng.sample(items, len(items)):
            tag = f"{prefix}:{item['key']}"
            if len(out) < n and self.allowed(tag):
                self.chosen.add(tag)
                out.append(item)
        return out

    def clashes(self, text: str, day: date) -> bool:
        start = ts_of(day, 0)
        words = set(re.findall(r"[a-z]+", text.lower()))
        return any(words & w and s <= start < e for w, s, e in self.windows)

    def place(
        self, block: list[tuple[str, str, str | None]], *, shared: bool = False, exclude: tuple[int, ...] = ()
    ) -> Session | None:
        candidates = [
            s
            for s in self.sessions
            if (s.companion is not None) == shared
            and s.index not in exclude
            and s.planted < 4
            and not any(self.clashes(t, s.day) for _, t, _ in block)
        ]
        if not candidates:
            return None
        session = self.rng.choice(candidates)
        session.blocks.append(block)
        return session

    def ask(self, kind: str, question: str, evidence: list[str], answer: str, **extra: object) -> None:
        self.questions.append(
            {"kind": kind, "question": question, "evidence": evidence, "answer": answer, **extra}
        )

    # -- planning --------------------------------------------------------------------------------
    def plan_temporal(self) -> None:
        rng, tl = self.rng, self.tl
        topics = [k for k in rng.sample(sorted(ct.TOPICS), len(ct.TOPICS))]
        chosen: list[str] = []
        for key in topics:
            if len(chosen) < 5 and self.allowed(f"topic:{key}"):
                self.chosen.add(f"topic:{key}")
                chosen.append(key)
        last_sessions = [
            tl.yesterday_index,
            rng.choice(tl.last_week_indices),
            rng.choice(tl.last_month_indices),
            rng.choice(tl.late_main_indices),
            rng.choice(tl.late_main_indices),
        ]
        for rank, (key, last) in enumerate(zip(chosen, last_sessions, strict=False)):
            topic = ct.TOPICS[key]
            n = rng.choice([3, 4])
            mention_sessions = [last]
            while len(mention_sessions) < n:
                prev = self.sessions[mention_sessions[0]].day
                early = [s.index for s in self.sessions if s.day <= prev - timedelta(days=35)]
                if not early:
                    break
                near = [i for i in early if self.sessions[i].day >= prev - timedelta(days=150)]
                mention_sessions.insert(0, rng.choice(near or early))
            statements = (
                topic["statements"][-len(mention_sessions) :]
                if rank < 3
                else topic["statements"][: len(mention_sessions)]
            )
            keys = []
            for idx, (text, _answer) in zip(mention_sessions, statements, strict=True):
                k = f"topic:{key}:{idx}"
                self.sessions[idx].blocks.append(
                    [("user", text, k), ("assistant", self.cycle(ct.TOPIC_REPLIES), None)]
                )
                keys.append(k)
            whens: list[tuple[int, str, int, int]] = []  # (position, wording, start, end)
            last_pos = len(keys) - 1
            if rank == 0:
                whens.append((last_pos, "yesterday", *tl.yesterday))
            elif rank == 1:
                whens.append((last_pos, "last week", *tl.last_week))
            elif rank == 2:
                whens.append((last_pos, "last month", *tl.last_month))
            pos = (
                rng.randrange(len(keys) - 1)
                if rank < 2
                else (None if rank == 2 else rng.randrange(len(keys)))
            )
            if pos is not None:
                month = self.sessions[mention_sessions[pos]].day.month
                whens.append((pos, f"in {ct.MONTH_NAMES[month - 1]}", *month_range(month)))
            words = set(topic["words"])
            for p, wording, start, end in whens:
                self.windows.append((words, start, end))
                q = self.cycle(ct.TOPIC_QUESTIONS).format(u=self.name, label=topic["label"], when=wording)
                self.ask(
                    "temporal",
                    q,
                    [keys[p]],
                    statements[p][1],
                    time_expr=wording,
                    time_range=[start, end],
                    _words=words,
                )

    def plan_move(self) -> None:
        rng, tl = self.rng, self.tl
        move = self.sessions[tl.move_index]
        street = self.slots.draw("street")["street"]
        move.blocks.append(
            [
                ("user", rng.choice(ct.MOVE_STATEMENTS).format(street=street), "move"),
                ("assistant", self.cycle(ct.MOVE_REPLIES), None),
            ]
        )
        self.ask("single_fact", self.fmt(rng.choice(ct.MOVE_QUESTIONS)), ["move"], street)
        key = rng.choice(sorted(ct.MOVE_TOPICS))
        topic = ct.MOVE_TOPICS[key]
        words = set(topic["words"])
        move_ts = ts_of(move.day, 0)
        before = rng.choice([s.index for s in self.sessions if s.day < move.day - timedelta(days=7)])
        after = rng.choice(
            [s.index for s in self.sessions if move.day + timedelta(days=7) < s.day < tl.asked_day]
        )
        for idx, side, wording, start, end in (
            (before, "before", "before the move", 0, move_ts),
            (after, "after", "after the move", move_ts + 86400, tl.asked_at),
        ):
            text, answer = topic[side]
            k = f"move:{key}:{side}"
            self.sessions[idx].blocks.append(
                [("user", text, k), ("assistant", self.cycle(ct.TOPIC_REPLIES), None)]
            )
            self.windows.append((words, 0, tl.asked_at))  # nobody else talks about it at all
            q = rng.choice(topic["questions"]).format(u=self.name, when=wording)
            self.ask(
                "temporal",
                q,
                [k],
                answer,
                time_expr=wording,
                time_range=[start, end],
                anchor="move",
                _words=words,
            )

    def plan_facts(self) -> None:
        rng = self.rng
        for item in self.pick_items(ct.SINGLE_FACTS, PER_USER["single_fact"], "fact"):
            values: dict[str, str] = {}
            for slot in item["slots"]:
                values.update(self.slots.draw(slot))
            k = f"fact:{item['key']}"
            if (
                self.place(
                    [
                        ("user", self.fmt(rng.choice(item["statements"]), **values), k),
                        ("assistant", self.cycle(ct.FACT_REPLIES), None),
                    ]
                )
                is None
            ):
                continue
            self.ask(
                "single_fact",
                self.fmt(rng.choice(item["questions"]), **values),
                [k],
                item["answer"].format(**values),
            )

    def plan_hops(self) -> None:
        rng = self.rng
        attributes = rng.sample(sorted(ct.HOP_ATTRIBUTES), PER_USER["multi_hop"])
        for (rel, person), attr in zip(self.relations, attributes, strict=True):
            spec = ct.HOP_ATTRIBUTES[attr]
            values = self.slots.draw(spec["slot"])
            if attr == "pet":
                values.update(self.slots.draw("pet"))
            ka, kb = f"hop:{rel}:intro", f"hop:{rel}:{attr}"
            first = self.place(
                [
                    ("user", self.cycle(ct.HOP_INTROS).format(rel=rel, p=person), ka),
                    ("assistant", self.cycle(ct.HOP_INTRO_REPLIES), None),
                ]
            )
            if (
                first is None
                or self.place(
                    [
                        ("user", rng.choice(spec["statements"]).format(p=person, **values), kb),
                        ("assistant", self.cycle(ct.FACT_REPLIES), None),
                    ],
                    exclude=(first.index,),
                )
                is None
            ):
                continue
            for line in rng.sample(ct.HOP_NAME_DISTRACTORS, 2):
                self.place(
                    [
                        ("user", line.format(p=person), None),
                        ("assistant", rng.choice(ch.FOLLOWUPS_ASSISTANT), None),
                    ]
                )
            q = rng.choice(spec["questions"]).format(u=self.name, rel=rel, **values)
            self.ask("multi_hop", q, [ka, kb], spec["answer"].format(**values), relation=rel, person=person)

    def plan_preferences(self) -> None:
        rng = self.rng
        for item in self.pick_items(ct.PREFERENCES, PER_USER["preference"], "pref"):
            k = f"pref:{item['key']}"
            statement, question = rng.choice(item["pairs"])
            if self.place([("user", statement, k), ("assistant", self.cycle(ct.PREF_REPLIES), None)]) is None:
                continue
            for line in item["distractors"]:
                self.place(
                    [
                        ("user", line.format(p=rng.choice(self.people[2:])), None),
                        ("assistant", rng.choice(ch.FOLLOWUPS_ASSISTANT), None),
                    ]
                )
            self.ask("preference", self.fmt(question), [k], item["answer"])

    def plan_who_said(self) -> None:
        rng = self.rng
        shared = rng.sample(
            [s for s in self.sessions if s.index not in (self.tl.yesterday_index, self.tl.move_index)],
            SHARED_SESSIONS,
        )
        for s in shared:
            s.companion = rng.choice(self.companions)
        events = self.pick_items(ct.WHO_SAID, PER_USER["who_said"], "who")
        for i, item in enumerate(events):
            session = shared[i % len(shared)]
            speaker = session.companion if rng.random() < 0.6 else self.name
            other = self.name if speaker != self.name else session.companion
            k = f"who:{item['key']}"
            block = [
                (speaker, rng.choice(item["statements"]), k),
                (other, item["reaction"], None),
                ("assistant", self.cycle(ct.WHO_SAID_REPLIES), None),
            ]
            if any(self.clashes(t, session.day) for _, t, _ in block):
                continue
            session.blocks.append(block)
            self.ask("who_said", rng.choice(item["questions"]), [k], speaker)

    # -- writing ---------------------------------------------------------------------------------
    def filler_pair(self, pool: list[tuple[str, str]], used: set[str], day: date) -> tuple[str, str] | None:
        rng = self.rng
        for _ in range(12):
            raw, reply = rng.choice(pool)
            values = {
                "u": self.name,
                "p": rng.choice(self.people),
                "rel": rng.choice(self.relations)[0],
                "day": rng.choice(ch.DAYS),
                "time": rng.choice(ch.TIMES),
                "food": rng.choice(ch.FOODS),
                "n": str(rng.randint(12, 240)),
            }
            text = raw.format(**values)
            if raw not in used and not self.clashes(text, day):
                used.add(raw)
                return text, reply.format(**values)
        return None

    def chatty(self, text: str, session: Session, themes: list[str], used: set[str]) -> str:
        """Wrap a message in the small talk people put around what they mean to say."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return f"{rng.choice(ch.LEAD_INS)} {text}"
        extra = self.filler_pair(ch.THEMES[rng.choice(themes)], used, session.day) if roll < 0.8 else None
        if extra is None:
            return text
        if roll < 0.6:
            return f"{text} {extra[0]}"
        return f"{rng.choice(ch.LEAD_INS)} {text} {extra[0]}"

    def filler_exchange(
        self, session: Session, themes: list[str], used: set[str]
    ) -> list[tuple[str, str, str | None]]:
        rng = self.rng
        if rng.random() < 0.12:
            pool = [
                (line, rng.choice(ch.FOLLOWUPS_ASSISTANT)) for t in ct.TOPICS.values() for line in t["filler"]
            ]
        else:
            pool = ch.THEMES[rng.choice(themes)]
        pair = self.filler_pair(pool, used, session.day)
        if pair is None:
            return []
        line, reply = pair
        if rng.random() < 0.2:
            line = (
                rng.choice(["Honestly, ", "Ugh. ", "So, ", "Also, ", "Random thought: ", "Oh and "])
                + line[0].lower()
                + line[1:]
            )
        if rng.random() < 0.3:
            more = self.filler_pair(ch.THEMES[rng.choice(themes)], used, session.day)
            if more is not None:
                line, reply = f"{line} {more[0]}", f"{reply} {more[1]}"
        elif rng.random() < 0.3:
            reply = f"{reply} {rng.choice(ch.FOLLOWUPS_ASSISTANT)}"
        out = [(self.name, line, None), ("assistant", reply, None)]
        if rng.random() < 0.3:
            out += [
                (self.name, rng.choice(ch.ACKS_USER), None),
                ("assistant", rng.choice(ch.FOLLOWUPS_ASSISTANT), None),
            ]
        if session.companion and rng.random() < 0.5:
            out.insert(
                1,
                (
                    session.companion,
                    rng.choice(ch.COMPANION_CHATTER).format(u=self.name, c=session.companion),
                    None,
                ),
            )
        return out

    def write_session(self, session: Session) -> tuple[dict, list[dict], dict[str, str]]:
        rng = self.rng
        sid = f"{self.user_id}-s{session.index:02d}"
        themes = rng.sample(sorted(ch.THEMES), 3)
        used: set[str] = set()
        middle = [
            [
                (self.name if r == "user" else r, self.chatty(t, session, themes, used) if k else t, k)
                for r, t, k in block
            ]
            for block in session.blocks
        ]
        target = rng.randint(12, 22)
        filler_turns = target - sum(len(b) for b in middle) - 4
        while filler_turns > 0:
            ex = self.filler_exchange(session, themes, used)
            if not ex:
                break
            middle.append(ex)
            filler_turns -= len(ex)
        rng.shuffle(middle)
        opening = [(self.name, rng.choice(ch.OPENERS_USER), None)]
        if session.companion:
            opening.append(
                (
                    session.companion,
                    rng.choice(ch.COMPANION_OPENERS).format(u=self.name, c=session.companion),
                    None,
                )
            )
            opening.append(("assistant", rng.choice(ch.ASSISTANT_TO_PAIR), None))
        else:
            opening.append(("assistant", rng.choice(ch.OPENERS_ASSISTANT).format(u=self.name), None))
        closing = [
            (self.name, rng.choice(ch.CLOSERS_USER), None),
            ("assistant", rng.choice(ch.CLOSERS_ASSISTANT).format(u=self.name), None),
        ]
        lines = opening + [t for block in middle for t in block] + (closing if rng.random() < 0.8 else [])
        ts = session_start = self.tl.session_start(session.day)
        turns, keys = [], {}
        for i, (speaker, text, key) in enumerate(lines):
            if i:
                ts += rng.randint(2, 14) if speaker == "assistant" else rng.randint(15, 240)
            tid = f"{sid}-t{i:02d}"
            turns.append(
                {
                    "turn_id": tid,
                    "user_id": self.user_id,
                    "session_id": sid,
                    "speaker": speaker,
                    "timestamp": ts,
                    "text": text,
                }
            )
            if key:
                keys[key] = tid
        participants = [self.name] + ([session.companion] if session.companion else []) + ["assistant"]
        meta = {
            "session_id": sid,
            "user_id": self.user_id,
            "started_at": session_start,
            "participants": participants,
        }
        return meta, turns, keys

    def unambiguous(self, q: dict, turns: list[dict], keys: dict[str, str]) -> bool:
        """True when no person but the evidence talks about the question's topic in its window
        (``_window`` when the question has one, else its ``time_range``)."""
        start, end = q.get("_window") or q["time_range"]
        evidence = {keys[k] for k in q["evidence"]}
        for t in turns:
            if (
                t["speaker"] != "assistant"
                and start <= t["timestamp"] < end
                and t["turn_id"] not in evidence
                and set(re.findall(r"[a-z]+", t["text"].lower())) & q["_words"]
            ):
                return False
        return True

    def plan(self) -> None:
        """Decide what the user says and what they are asked (before any session is written)."""
        self.plan_move()  # the time windows come first: later items keep out of them
        self.plan_temporal()
        self.plan_hops()
        self.plan_facts()
        self.plan_preferences()
        self.plan_who_said()

    def checked(self, q: dict) -> bool:
        """Whether ``q`` must pass :meth:`unambiguous` to be kept."""
        return q["kind"] == "temporal"

    def user_record(self) -> dict:
        return {
            "user_id": self.user_id,
            "name": self.name,
            "companions": self.companions,
            "relations": {rel: p for rel, p in self.relations},
        }

    def build(self) -> tuple[dict, list[dict], list[dict], list[dict]]:
        self.plan()
        sessions, turns, keys = [], [], {}
        for s in self.sessions:
            meta, t, k = self.write_session(s)
            sessions.append(meta)
            turns.extend(t)
            keys.update(k)
        asked = self.tl.asked_at
        questions = []
        for kind in self.kinds:
            for q in (q for q in self.questions if q["kind"] == kind):
                if self.checked(q) and not self.unambiguous(q, turns, keys):
                    continue
                out = {
                    "qid": "",
                    "user_id": self.user_id,
                    "kind": kind,
                    "question": q["question"],
                    "asked_at": asked,
                    "evidence": [keys[k] for k in q["evidence"]],
                    "answer": q["answer"],
                }
                for extra in EXTRAS:
                    if extra in q:
                        out[extra] = keys[q[extra]] if extra == "anchor" else q[extra]
                questions.append(out)
        return self.user_record(), sessions, turns, questions
