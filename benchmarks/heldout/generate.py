"""Deterministic generator of the held-out benchmark: chats between named friends.

Pure standard library, fixed seed: the same code writes the same bytes on every machine.

    python -m benchmarks.heldout.generate                # rewrite data/conversations.json
    python -m benchmarks.heldout.generate --check benchmarks/heldout/data/conversations.json

Each conversation (one memory scope, ``user_id`` = the conversation's id) is two or three
friends talking over dozens of dated sessions, with no assistant. Every question names the
participant it is about. Question kinds:

* ``single``: one turn states a rare value once ("the code is 4172");
* ``spread``: the answer is 3 to 6 turns of one person on one topic, each in another session
  ("Which places has Maya visited?"); another participant may talk about the same topic;
* ``paraphrase``: the question shares no content word with the turn that answers it;
* ``distractor``: the person says one thing on a topic the others bring up 8 times, some of
  them addressing that person by name;
* ``correction``: a plan stated, then changed once or twice, several plans changing in
  parallel; the evidence is the latest statement (``superseded`` lists the earlier ones);
* ``imported``: questions of the five shapes above (``shape``) about conversations the runner
  imports after the fact and then consolidates once.

Every question is asked at 09:00 UTC the day after its conversation's last session.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..quality.baselines import tokenize
from ..quality.generate import run_cli
from . import chatter
from .facts import FACTS, PARAPHRASES
from .people import CHATS, Chat, Person
from .topics import CHAINS, CROWDED, SPREADS

SEED = 20261126
VERSION = 1
SHAPES = ("single", "spread", "paraphrase", "distractor", "correction")
KINDS = (*SHAPES, "imported")
DEFAULT_OUT = Path(__file__).parent / "data" / "conversations.json"

#: Questions per person, by shape (``correction``: pairs, trios).
PER_PERSON = {"single": 4, "spread": 3, "paraphrase": 3, "distractor": 2}
CHAINS_PER_PERSON = {2: 3, 3: 2}
CROWD_SIZE = 8  # turns by the others on a distractor question's topic
START = datetime(2025, 1, 6, tzinfo=timezone.utc)


def content_words(text: str, names: Iterable[str] = ()) -> set[str]:
    """Stemmed content words of ``text`` (the BM25 baseline's tokens), ``names`` left out."""
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", text)
    return set(tokenize(text))


class _Planned:
    """A content turn before it has an id: who says it, in which session, and its question key."""

    __slots__ = ("key", "session", "speaker", "text")

    def __init__(self, session: int, speaker: str, text: str, key: str | None = None) -> None:
        self.session, self.speaker, self.text, self.key = session, speaker, text, key


class ChatBuilder:
    """Builds one conversation: its sessions, turns and questions (deterministic per seed)."""

    def __init__(self, chat: Chat, index: int, seed: int) -> None:
        self.chat = chat
        self.rng = random.Random(seed * 1000 + index)
        self.start = START + timedelta(days=3 * index)
        self.n_sessions = self.rng.randint(28, 34)
        self.names = [p.name for p in chat.people]
        self.planned: list[_Planned] = []
        self.questions: list[dict[str, Any]] = []
        self.tags: dict[str, set[str]] = {p.name: set() for p in chat.people}

    # -- choosing what each person talks about -------------------------------------------------

    def _pick(self, options: list[Any], person: Person, what: str) -> Any:
        allowed = [o for o in options if not (o.tags & self.tags[person.name])]
        if not allowed:
            raise RuntimeError(f"{self.chat.conv_id}: no {what} left for {person.name}; add more content")
        choice = self.rng.choice(allowed)
        self.tags[person.name] |= choice.tags
        return choice

    def _sessions(self, n: int) -> list[int]:
        return sorted(self.rng.sample(range(self.n_sessions), n))

    def _ask(
        self, shape: str, person: Person, template: str, evidence: list[str], answer: str, **extra: Any
    ) -> None:
        question = template.format(p=person.name, their=person.their)
        self.questions.append(
            {
                "kind": "imported" if self.chat.imported else shape,
                "shape": shape,
                "person": person.name,
                "question": question,
                "evidence": evidence,
                "answer": answer,
                **extra,
            }
        )

    def plan(self) -> None:
        people = self.chat.people
        crowded = list(CROWDED)
        for person in people:
            others = [n for n in self.names if n != person.name]
            for _ in range(PER_PERSON["distractor"]):
                topic = self._pick(crowded, person, "distractor topic")
                crowded.remove(topic)
                key = self._say(self.rng.randrange(self.n_sessions), person.name, topic.evidence)
                crowd = [
                    self._say(
                        self.rng.randrange(self.n_sessions),
                        self.rng.choice(others),
                        text.format(o=person.name),
                    )
                    for text in self.rng.sample(topic.others, CROWD_SIZE)
                ]
                self._ask(
                    "distractor",
                    person,
                    topic.question,
                    [key],
                    topic.answer,
                    topic=topic.word,
                    distractors=crowd,
                )
                for name in others:  # they talk about it: none of their own questions may be on it
                    self.tags[name] |= topic.tags
        left = {s.question: list(s.statements) for s in SPREADS}
        for person in people:
            for _ in range(PER_PERSON["spread"]):
                options = [s for s in SPREADS if len(left[s.question]) >= 3]
                topic = self._pick(options, person, "spread topic")
                pool = left[topic.question]
                n = self.rng.randint(3, min(6, len(pool)))
                said = self.rng.sample(pool, n)
                for text in said:
                    pool.remove(text)
                keys = []
                for session, text in zip(self._sessions(n), said, strict=True):
                    keys.append(self._say(session, person.name, text))
                self._ask("spread", person, topic.question, keys, "; ".join(said))
        chains = list(CHAINS)
        for person in people:
            for _ in range(CHAINS_PER_PERSON[len(people)]):
                chain = self._pick(chains, person, "correction topic")
                chains.remove(chain)
                n = self.rng.choice((2, 3, 3))
                values = self.rng.sample(chain.values, n)
                steps = (
                    [chain.steps[0], chain.steps[self.rng.choice((1, 2))]] if n == 2 else list(chain.steps)
                )
                keys = [
                    self._say(s, person.name, step.format(x=value))
                    for s, step, value in zip(self._sessions(n), steps, values, strict=True)
                ]
                self._ask("correction", person, chain.question, keys[-1:], values[-1], superseded=keys[:-1])
        facts, paraphrases = list(FACTS), list(PARAPHRASES)
        for person in people:
            for _ in range(PER_PERSON["single"]):
                fact = self._pick(facts, person, "single fact")
                facts.remove(fact)
                value = self.rng.choice(fact.values)
                key = self._say(
                    self.rng.randrange(self.n_sessions), person.name, fact.statement.format(x=value)
                )
                self._ask("single", person, fact.question, [key], value)
            for _ in range(PER_PERSON["paraphrase"]):
                para = self._pick(paraphrases, person, "paraphrase")
                paraphrases.remove(para)
                question = para.question.format(p=person.name, their=person.their)
                shared = content_words(question, self.names) & content_words(para.statement)
                if shared:
                    raise RuntimeError(f"paraphrase {question!r} shares {sorted(shared)} with its evidence")
                key = self._say(self.rng.randrange(self.n_sessions), person.name, para.statement)
                self._ask("paraphrase", person, para.question, [key], para.answer)

    def _say(self, session: int, speaker: str, text: str) -> str:
        key = f"k{len(self.planned)}"
        self.planned.append(_Planned(session, speaker, text, key))
        return key

    # -- writing the sessions ----------------------------------------------------------------

    def _others(self, name: str) -> list[str]:
        return [n for n in self.names if n != name]

    def build(
        self,
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        self.plan()
        rng, conv = self.rng, self.chat.conv_id
        by_session: dict[int, list[_Planned]] = {}
        for item in self.planned:
            by_session.setdefault(item.session, []).append(item)
        ids: dict[str, str] = {}
        sessions: list[dict[str, Any]] = []
        turns: list[dict[str, Any]] = []
        day = self.start
        for s in range(self.n_sessions):
            if s:
                day += timedelta(days=rng.randint(6, 13))
            at = int((day + timedelta(hours=rng.randint(17, 21), minutes=rng.randrange(60))).timestamp())
            sid = f"{conv}-s{s + 1:02d}"
            sessions.append(
                {"session_id": sid, "user_id": conv, "started_at": at, "participants": self.names}
            )
            lines = self._session_lines(by_session.get(s, []))
            for n, (speaker, text, key) in enumerate(lines, 1):
                tid = f"{sid}-t{n:02d}"
                turns.append(
                    {
                        "turn_id": tid,
                        "user_id": conv,
                        "session_id": sid,
                        "speaker": speaker,
                        "timestamp": at,
                        "text": text,
                    }
                )
                if key is not None:
                    ids[key] = tid
                at += rng.randint(15, 150)
        asked = datetime.fromtimestamp(int(turns[-1]["timestamp"]), timezone.utc).replace(
            hour=9, minute=0, second=0
        )
        asked_at = int((asked + timedelta(days=1)).timestamp())
        for q in self.questions:
            q["user_id"] = conv
            q["asked_at"] = asked_at
            for field in ("evidence", "superseded", "distractors"):
                if field in q:
                    q[field] = [ids[k] for k in q[field]]
        user = {"user_id": conv, "participants": self.names, "imported": self.chat.imported}
        return user, sessions, turns, self.questions

    def _session_lines(self, content: list[_Planned]) -> list[tuple[str, str, str | None]]:
        rng = self.rng
        lines: list[tuple[str, str, str | None]] = []

        def line(speaker: str, pool: tuple[str, ...], to: str, key: str | None = None) -> None:
            lines.append((speaker, rng.choice(pool).format(o=to), key))

        opener = rng.choice(self.names)
        line(opener, chatter.OPENERS, rng.choice(self._others(opener)))
        for name in self._others(opener):
            line(name, chatter.REPLIES_TO_OPENER, opener)
        blocks: list[_Planned | None] = [*content, *([None] * rng.randint(4, 9))]
        rng.shuffle(blocks)
        for block in blocks:
            if block is None:
                self._filler(line)
                continue
            if rng.random() < 0.3:
                line(rng.choice(self._others(block.speaker)), chatter.ASKS, block.speaker)
            lines.append((block.speaker, block.text, block.key))
            r = rng.random()
            if r < 0.5:
                line(rng.choice(self._others(block.speaker)), chatter.NAMED, block.speaker)
            elif r < 0.75:
                line(rng.choice(self._others(block.speaker)), chatter.PLAIN, block.speaker)
        leaver = rng.choice(self.names)
        line(leaver, chatter.CLOSERS, rng.choice(self._others(leaver)))
        for name in self._others(leaver):
            line(name, chatter.CLOSERS, leaver)
        return lines

    def _filler(self, line: Any) -> None:
        rng = self.rng
        speaker = rng.choice(self.names)
        other = rng.choice(self._others(speaker))
        r = rng.random()
        if r < 0.5:
            line(speaker, chatter.IDLE, other)
            line(other, chatter.NAMED if rng.random() < 0.5 else chatter.PLAIN, speaker)
        elif r < 0.8:
            line(speaker, chatter.NAMED, other)
            line(other, chatter.PLAIN, speaker)
        else:
            line(speaker, chatter.PLAIN, other)


def build_dataset(seed: int = SEED) -> dict[str, Any]:
    """Build the whole dataset in memory (deterministic for a given seed)."""
    users: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    asked: list[dict[str, Any]] = []
    for index, chat in enumerate(CHATS):
        user, chat_sessions, chat_turns, chat_questions = ChatBuilder(chat, index, seed).build()
        users.append(user)
        sessions += chat_sessions
        turns += chat_turns
        asked += chat_questions
    questions = [{"qid": f"h{i:04d}", **q} for i, q in enumerate(asked, 1)]
    return {
        "name": "ucma-heldout",
        "version": VERSION,
        "seed": seed,
        "timezone": "UTC",
        "kinds": list(KINDS),
        "users": users,
        "sessions": sessions,
        "turns": turns,
        "questions": questions,
    }


def main(argv: list[str] | None = None) -> int:
    return run_cli(
        argv,
        doc=__doc__ or "",
        build=build_dataset,
        default_out=DEFAULT_OUT,
        seed=SEED,
        scopes="conversations",
    )


if __name__ == "__main__":
    sys.exit(main())
