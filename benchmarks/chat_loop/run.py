"""What a memory keeps, learns and forgets in a chat loop: run the labelled sets, print the tables.

    python -m benchmarks.chat_loop.run [--providers offline,scripted] [--embedder hashing|local]
                                       [--days 0,90,365] [--json results.json] [--verbose]

Providers (columns): ``offline`` (the rule-based :class:`~ucma_core.providers.OfflineProvider`)
and ``scripted`` (an :class:`~ucma_core.providers.LLMProvider` over
:class:`~benchmarks.chat_loop.model.ScriptedModel`, a canned chat model; importance is asked
of the model in the keep / drop rows, as ``llm_importance=True`` does).

Tables:

1. keep / drop — each labelled turn is observed (``keep=False``): precision and recall of
   "kept" against the labels.
2. extraction — ``extract_facts`` on each labelled text: precision / recall of the facts
   (:mod:`~benchmarks.chat_loop.metrics`), facts that name themselves, near-duplicates,
   facts about someone else given to the speaker; and the facts the profile conversation
   leaves after one consolidation, against what a reader would have learned.
3. scenarios — each short history is observed (``keep=False``) and its question asked, once
   right after and once after a consolidation cycle. A result counts for the turn it is, or
   the turns it was learned from (``source_ids``). Knowledge updates: the revision ranks
   above the stale statement; the stale fact is superseded by one learned from the revision
   (history kept). Questions echoed: the answer (or what was learned from it) ranks above a
   memory that only repeats the question; how-to answers give a procedure. Whose fact: the
   user's own statement ranks above the one about someone they know; facts from the other
   person's turn given to the user are counted.
4. return after N days — the profile conversation, then one consolidation cycle per night
   for N nights, then the returning user's questions: answered when a top-5 result contains
   the answer's words; and what is left of the memory.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from ucma_core import Fact, Memory, RetrievalResult
from ucma_core.providers import LLMProvider, OfflineProvider

from .extraction import HELD_OUT as HELD_OUT_TEXTS
from .extraction import TEXTS
from .keep_drop import HELD_OUT as HELD_OUT_TURNS
from .keep_drop import TURNS
from .metrics import Counts, fact_matches, match_facts, near_duplicates
from .model import ScriptedModel
from .scenarios import (
    MULTI_TOPIC,
    PROFILE,
    PROFILE_FACTS,
    PROFILE_NAME,
    PROFILE_QUESTIONS,
    SCENARIOS,
    Scenario,
)
from .sleep import sleep_outputs

DAY = 86_400.0
START = 1_767_600_000.0  # 2026-01-05 08:00 UTC
PROFILE_USER = "ana"


class Clock:
    def __init__(self, t: float = START) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def make_provider(kind: str, *, llm_importance: bool = False) -> Any:
    if kind == "offline":
        return OfflineProvider()
    if kind == "scripted":
        return LLMProvider(ScriptedModel(), llm_importance=llm_importance, sleep=lambda s: None)
    raise ValueError(f"unknown provider {kind!r}")


@contextmanager
def memory(embedder_factory: Callable[[], Any], provider: Any, clock: Clock) -> Iterator[Memory]:
    with (
        tempfile.TemporaryDirectory(prefix="ucma-chat-loop-") as tmp,
        Memory(Path(tmp) / "m", embedder=embedder_factory(), provider=provider, clock=clock) as mem,
    ):
        yield mem


# ---------------------------------------------------------------------------------------- 1. keep / drop
def keep_drop(
    kind: str, embedder: Callable[[], Any], verbose: bool, turns: Sequence[tuple[str, str, bool]] = TURNS
) -> dict[str, Any]:
    counts = Counts()
    by_source: dict[str, Counts] = {}
    wrong = []
    clock = Clock()
    with memory(embedder, make_provider(kind, llm_importance=True), clock) as mem:
        for n, (source, text, keep) in enumerate(turns):
            clock.t += 60
            kept = mem.observe(text, source=source, user_id="kd", session_id=f"kd{n}") is not None
            for c in (counts, by_source.setdefault(source, Counts())):
                c.add(int(kept and keep), int(kept and not keep), int(keep and not kept))
            if kept != keep:
                wrong.append(f"{'kept' if kept else 'dropped'} [{source}] {text}")
    if verbose:
        print(f"keep/drop mistakes ({kind}):", *wrong, sep="\n  ")
    return {
        "precision": counts.precision,
        "recall": counts.recall,
        "f1": counts.f1,
        "accuracy": 1 - len(wrong) / len(turns),
        "n": len(turns),
        "recall_by_source": {s: c.recall for s, c in sorted(by_source.items())},
        "precision_by_source": {s: c.precision for s, c in sorted(by_source.items())},
    }


# ---------------------------------------------------------------------------------------- 2. extraction
def extraction(
    kind: str, verbose: bool, texts: Sequence[tuple[str, str, list[tuple[str, str, str]]]] = TEXTS
) -> dict[str, Any]:
    provider = make_provider(kind)
    found = provider.extract_facts([t for _, t, _ in texts], speakers=[s for s, _, _ in texts])
    counts = Counts()
    self_naming = duplicates = misattributed = 0
    for (speaker, text, gold), facts in zip(texts, found, strict=True):
        predicted = [(f.subject, f.predicate, f.object) for f in facts]
        tp, fp, fn = match_facts(predicted, gold)
        counts.add(tp, fp, fn)
        self_naming += sum(1 for s, _, o in predicted if s.strip().lower() == o.strip().lower())
        duplicates += near_duplicates(predicted)
        others = [g for g in gold if g[0].lower() != speaker.lower()]
        misattributed += sum(
            1
            for p in predicted
            if p[0].lower() == speaker.lower() and any(fact_matches((g[0], p[1], p[2]), g) for g in others)
        )
        if verbose and (fp or fn):
            print(f"  [{speaker}] {text}\n      got  {predicted}\n      want {gold}")
    return {
        "precision": counts.precision,
        "recall": counts.recall,
        "f1": counts.f1,
        "gold_facts": counts.tp + counts.fn,
        "self_naming": self_naming,
        "near_duplicates": duplicates,
        "misattributed": misattributed,
    }


# ---------------------------------------------------------------------------------------- 3. scenarios
def _ids(hit: RetrievalResult) -> set[str]:
    return {hit.id, *hit.source_ids}


def _first(hits: Sequence[RetrievalResult], good: set[str], bad: set[str], *, exclusive: bool) -> bool:
    """Whether the first hit that is evidence for ``good`` or ``bad`` is for ``good``.

    ``exclusive``: a hit for both counts for neither (updates, whose fact); otherwise a hit
    that holds a good turn counts as good (an answer that repeats its question is an answer).
    """
    for hit in hits:
        ids = _ids(hit)
        g, b = bool(ids & good), bool(ids & bad)
        if exclusive and g and b:
            continue
        if g:
            return True
        if b:
            return False
    return False


def scenarios(kind: str, embedder: Callable[[], Any], verbose: bool) -> dict[str, Any]:
    clock = Clock()
    roles: dict[str, dict[str, set[str]]] = {}
    with memory(embedder, make_provider(kind), clock) as mem:
        timeline = sorted(
            ((t.day, n, i, s, t) for n, s in enumerate(SCENARIOS) for i, t in enumerate(s.turns)),
            key=lambda x: x[:3],
        )
        for day, _, _, s, turn in timeline:
            clock.t = START + day * DAY
            memory_id = mem.observe(
                turn.text,
                source=turn.source,
                user_id=s.user_id,
                session_id=f"{s.user_id}-{int(day)}",
                participants=[s.name] if turn.source == "user" else None,
            )
            if memory_id and turn.role:
                roles.setdefault(s.user_id, {}).setdefault(turn.role, set()).add(memory_id)
        clock.t += 3600
        before = {s.user_id: mem.remember(s.question, user_id=s.user_id, k=10) for s in SCENARIOS}
        clock.t += DAY
        mem.consolidate()
        clock.t += 3600
        after = {s.user_id: mem.remember(s.question, user_id=s.user_id, k=10) for s in SCENARIOS}
        rows: dict[str, Counter[str]] = {}
        for s in SCENARIOS:
            r = roles.get(s.user_id, {})
            row = rows.setdefault(s.kind, Counter())
            row["n"] += 1
            good, bad, exclusive = _evidence(s, r)
            ok_before = _first(before[s.user_id], good, bad, exclusive=exclusive)
            ok_after = _first(after[s.user_id], good, bad, exclusive=exclusive)
            row["first_before"] += ok_before
            row["first_after"] += ok_after
            if s.kind == "update":
                row["superseded"] += _superseded(mem, s, r)
            elif s.kind == "echo":
                row["answer_kept"] += bool(r.get("answer"))
                if s.procedure:
                    row["howto"] += 1
                    row["procedures"] += _procedure_learned(mem, s)
            else:
                row["misattributed"] += _misattributed(mem, s, r)
            if verbose:
                print(f"  [{s.kind} {s.user_id}] {s.question!r}: before {ok_before}, after {ok_after}")
                for hit in after[s.user_id][:4]:
                    print(f"      {hit.score:.3f} {hit.memory_type.value:10} {hit.content[:90]!r}")
    return {kind: dict(row) for kind, row in rows.items()}


def _evidence(s: Scenario, roles: dict[str, set[str]]) -> tuple[set[str], set[str], bool]:
    good_role, bad_role = {"update": ("current", "stale"), "echo": ("answer", "question")}.get(
        s.kind, ("self", "other")
    )
    return roles.get(good_role, set()), roles.get(bad_role, set()), s.kind != "echo"


def _facts(mem: Memory, user_id: str) -> list[Fact]:
    return [
        r
        for r in mem.list_memories(user_id=user_id, memory_types=["semantic"], limit=1000)
        if isinstance(r, Fact)
    ]


def _superseded(mem: Memory, s: Scenario, roles: dict[str, set[str]]) -> bool:
    """A fact learned from the stale turn is superseded by one learned from the revision."""
    facts = {f.id: f for f in _facts(mem, s.user_id)}
    current, stale = roles.get("current", set()), roles.get("stale", set())
    for f in facts.values():
        newer = facts.get(f.superseded_by or "")
        if f.valid_to is not None and set(f.source_ids) & stale and newer and set(newer.source_ids) & current:
            return True
    return False


def _procedure_learned(mem: Memory, s: Scenario) -> bool:
    for record in mem.list_memories(user_id=s.user_id, memory_types=["procedural"], limit=100):
        text = " ".join([record.content, *getattr(record, "steps", ())]).lower()
        if all(word in text for word in s.procedure):
            return True
    return False


def _misattributed(mem: Memory, s: Scenario, roles: dict[str, set[str]]) -> int:
    """Current facts learned from the other person's turn that have the user as subject and
    are not the relation itself ("Ana has sister Marta" is right)."""
    other = roles.get("other", set())
    return sum(
        1
        for f in _facts(mem, s.user_id)
        if f.valid_to is None
        and set(f.source_ids) & other
        and f.subject.lower() == s.name.lower()
        and not f.predicate.startswith("has ")
    )


# ---------------------------------------------------------------------------------------- 3b. multi-topic
def multi_topic(kind: str, embedder: Callable[[], Any], verbose: bool) -> dict[str, Any]:
    """Corrections on several topics in one chat: questions per topic answered by the
    correction first, and supersessions that cross topics (turns marked ``revised_by`` a
    turn of another topic, facts superseded by a fact learned from another topic's turn),
    right after and after one consolidation cycle."""
    clock = Clock()
    topic_of: dict[str, str] = {}
    roles: dict[tuple[str, str, str], set[str]] = {}
    row: Counter[str] = Counter()
    with memory(embedder, make_provider(kind), clock) as mem:
        for user_id, name, turns, _ in MULTI_TOPIC:
            for turn in turns:
                clock.t = START + turn.day * DAY
                memory_id = mem.observe(
                    turn.text,
                    source=turn.source,
                    user_id=user_id,
                    session_id=f"{user_id}-{int(turn.day)}",
                    participants=[name] if turn.source == "user" else None,
                    keep=True,
                )
                if memory_id and turn.topic:
                    topic_of[memory_id] = turn.topic
                    roles.setdefault((user_id, turn.topic, turn.role), set()).add(memory_id)
        end = START + max(turn.day for _, _, turns, _ in MULTI_TOPIC for turn in turns) * DAY
        for label in ("before", "after"):
            clock.t = end + (DAY if label == "after" else 0.0)
            if label == "after":
                mem.consolidate()
            clock.t += 3600
            for user_id, _, _, questions in MULTI_TOPIC:
                for question, topic in questions:
                    hits = mem.remember(question, user_id=user_id, k=10)
                    good = roles.get((user_id, topic, "current"), set())
                    bad = roles.get((user_id, topic, "stale"), set())
                    ok = _first(hits, good, bad, exclusive=True)
                    row[f"first_{label}"] += ok
                    row["n"] += label == "before"
                    if verbose:
                        print(f"  [multi {user_id}] {question!r} {label}: {ok}")
                        for hit in hits[:3]:
                            print(f"      {hit.score:.3f} {hit.memory_type.value:10} {hit.content[:80]!r}")
            row[f"cross_{label}"] = _cross_topic(mem, topic_of)
            row[f"linked_{label}"] = _linked(mem, topic_of)
    return dict(row)


def _linked(mem: Memory, topic_of: dict[str, str]) -> int:
    """Corrections linked to the turn they correct on the same topic."""
    return sum(
        1
        for memory_id, topic in topic_of.items()
        for u, v, _, _ in mem.edges(memory_id, edge_type="supersedes", direction="out")
        if topic_of.get(v) == topic
    )


def _cross_topic(mem: Memory, topic_of: dict[str, str]) -> int:
    """Supersessions between two topics: episode links and fact supersessions."""
    crossed = sum(
        1
        for memory_id, topic in topic_of.items()
        for _, v, _, _ in mem.edges(memory_id, edge_type="supersedes", direction="out")
        if topic_of.get(v, topic) != topic
    )
    for user_id, *_ in MULTI_TOPIC:
        facts = {f.id: f for f in _facts(mem, user_id)}
        for f in facts.values():
            newer = facts.get(f.superseded_by or "")
            if newer is None:
                continue
            old_topics = {topic_of[i] for i in f.source_ids if i in topic_of}
            new_topics = {topic_of[i] for i in newer.source_ids if i in topic_of}
            crossed += bool(old_topics and new_topics and not old_topics & new_topics)
    return crossed


# ---------------------------------------------------------------------------------------- 3c. sleep outputs
def _sleep(kind: str, embedder: Callable[[], Any]) -> dict[str, Any]:
    clock = Clock()
    return sleep_outputs(partial(memory, embedder, make_provider(kind), clock), clock, START)


# ---------------------------------------------------------------------------------------- 4. profile
def profile(kind: str, embedder: Callable[[], Any], nights: int, verbose: bool) -> dict[str, Any]:
    clock = Clock()
    with memory(embedder, make_provider(kind), clock) as mem:
        for day, source, text in PROFILE:
            clock.t = START + day * DAY
            mem.observe(
                text,
                source=source,
                user_id=PROFILE_USER,
                session_id=f"p{int(day)}",
                participants=[PROFILE_NAME] if source == "user" else None,
            )
        end = clock.t
        learned = None
        for night in range(max(1, nights)):
            clock.t = end + (night + 0.6) * DAY
            mem.consolidate()
            if night == 0:
                current = [
                    (f.subject, f.predicate, f.object)
                    for f in _facts(mem, PROFILE_USER)
                    if f.valid_to is None
                ]
                learned = match_facts(current, PROFILE_FACTS)
                if verbose and nights == 0:
                    print("  learned facts:", *current, sep="\n    ")
        clock.t = end + nights * DAY + 0.7 * DAY
        left = Counter(r.memory_type.value for r in mem.list_memories(user_id=PROFILE_USER, limit=10_000))
        answered = 0
        for question, words in PROFILE_QUESTIONS:
            hits = mem.remember(question, user_id=PROFILE_USER, k=5)
            ok = any(all(w in h.content.lower() for w in words) for h in hits)
            answered += ok
            if verbose and not ok:
                print(f"  day {nights}: missed {question!r}: {[h.content[:60] for h in hits]}")
    assert learned is not None
    tp, fp, fn = learned
    return {
        "answered": answered,
        "questions": len(PROFILE_QUESTIONS),
        "left": dict(left),
        "learned_precision": tp / (tp + fp) if tp + fp else 1.0,
        "learned_recall": tp / (tp + fn) if tp + fn else 1.0,
        "learned_facts": tp + fp,
    }


# ---------------------------------------------------------------------------------------- tables
def _by_source(r: dict[str, Any], *, source: str) -> str:
    kd = r["keep_drop"]
    return f"{_pct(kd['precision_by_source'][source])} / {_pct(kd['recall_by_source'][source])}"


def _answered(r: dict[str, Any], *, day: int) -> str:
    return f"{r['profile'][str(day)]['answered']}/{r['profile'][str(day)]['questions']}"


def _left(r: dict[str, Any], *, day: int) -> str:
    left = r["profile"][str(day)]["left"]
    return " / ".join(str(left.get(t, 0)) for t in ("episodic", "semantic", "procedural", "learning"))


def _two(row: dict[str, int]) -> str:
    return f"{row.get('first_before', 0)} / {row.get('first_after', 0)}"


def _pct(x: float) -> str:
    return f"{x:.2f}"


def print_tables(results: dict[str, Any], kinds: list[str], days: list[int]) -> None:
    head = "| row | " + " | ".join(kinds) + " |"
    rule = "|---|" + "---|" * len(kinds)

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        print(f"| {label} | " + " | ".join(cell(results[k]) for k in kinds) + " |")

    print("\n1. keep / drop (precision / recall of kept)\n")
    print(head, rule, sep="\n")
    n = results[kinds[0]]["keep_drop"]["n"]
    row(
        f"all turns ({n})",
        lambda r: f"{_pct(r['keep_drop']['precision'])} / {_pct(r['keep_drop']['recall'])}",
    )
    for source in ("user", "assistant", "tool"):
        row(f"{source} turns", partial(_by_source, source=source))
    row("accuracy", lambda r: _pct(r["keep_drop"]["accuracy"]))
    n = results[kinds[0]]["keep_drop_held_out"]["n"]
    row(
        f"held-out turns ({n})",
        lambda r: f"{_pct(r['keep_drop_held_out']['precision'])} / {_pct(r['keep_drop_held_out']['recall'])}",
    )

    print("\n2. extraction\n")
    print(head, rule, sep="\n")
    g = results[kinds[0]]["extraction"]["gold_facts"]
    row(
        f"labelled texts: precision / recall ({g} facts)",
        lambda r: f"{_pct(r['extraction']['precision'])} / {_pct(r['extraction']['recall'])}",
    )
    g = results[kinds[0]]["extraction_held_out"]["gold_facts"]
    row(
        f"held-out texts: precision / recall ({g} facts)",
        lambda r: (
            f"{_pct(r['extraction_held_out']['precision'])} / {_pct(r['extraction_held_out']['recall'])}"
        ),
    )
    row("facts naming themselves", lambda r: str(r["extraction"]["self_naming"]))
    row("near-duplicate pairs", lambda r: str(r["extraction"]["near_duplicates"]))
    row("someone else's fact given to the speaker", lambda r: str(r["extraction"]["misattributed"]))
    p0 = results[kinds[0]]["profile"][str(days[0])]
    row(
        f"profile conversation, learned after one cycle: precision / recall ({len(PROFILE_FACTS)} facts)",
        lambda r: (
            f"{_pct(r['profile'][str(days[0])]['learned_precision'])} / "
            f"{_pct(r['profile'][str(days[0])]['learned_recall'])} "
            f"({r['profile'][str(days[0])]['learned_facts']} learned)"
        ),
    )
    del p0

    print("\n3. scenarios (right after / after one consolidation cycle)\n")
    print(head, rule, sep="\n")
    sc = results[kinds[0]]["scenarios"]
    row(
        f"knowledge update: revision ranks first ({sc['update']['n']})",
        lambda r: _two(r["scenarios"]["update"]),
    )
    row(
        "knowledge update: stale fact superseded, history kept",
        lambda r: str(r["scenarios"]["update"].get("superseded", 0)),
    )
    row(
        f"question echo: answer ranks above the question ({sc['echo']['n']})",
        lambda r: _two(r["scenarios"]["echo"]),
    )
    row("question echo: answer turn kept", lambda r: str(r["scenarios"]["echo"].get("answer_kept", 0)))
    row(
        f"question echo: how-to answer learned as a procedure ({sc['echo'].get('howto', 0)})",
        lambda r: str(r["scenarios"]["echo"].get("procedures", 0)),
    )
    row(
        f"whose fact: the user's own ranks first ({sc['whose']['n']})",
        lambda r: _two(r["scenarios"]["whose"]),
    )
    row(
        "whose fact: other person's fact given to the user",
        lambda r: str(r["scenarios"]["whose"].get("misattributed", 0)),
    )

    mt = results[kinds[0]]["multi_topic"]
    row(
        f"corrections on several topics: the topic's revision ranks first ({mt['n']})",
        lambda r: _two(r["multi_topic"]),
    )
    row(
        "corrections on several topics: linked on their topic (right after / after a cycle)",
        lambda r: f"{r['multi_topic']['linked_before']} / {r['multi_topic']['linked_after']}",
    )
    row(
        "corrections on several topics: cross-topic supersessions (right after / after a cycle)",
        lambda r: f"{r['multi_topic']['cross_before']} / {r['multi_topic']['cross_after']}",
    )

    print("\n3c. what the sleep cycle writes (one cycle)\n")
    print(head, rule, sep="\n")
    sl = next(results[k]["sleep"] for k in kinds if results[k]["sleep"] is not None)

    def srow(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        row(label, lambda r: "—" if r["sleep"] is None else cell(r))

    srow(
        f"procedures: every labelled step kept, in order ({sl['procedures']})",
        lambda r: str(r["sleep"]["procedures_in_order"]),
    )
    srow(
        f"procedures, held-out answers: every labelled step kept, in order ({sl['procedures_held_out']})",
        lambda r: str(r["sleep"]["procedures_held_out_in_order"]),
    )
    srow(
        f"lessons: one lesson per problem carrying both outcomes ({sl['problems']})",
        lambda r: f"{r['sleep']['lessons_merged']} ({r['sleep']['lessons']} lessons)",
    )
    srow(
        f"reminders: intention created ({sl['reminders']})",
        lambda r: str(r["sleep"]["reminders_created"]),
    )
    srow(
        "reminders: fired by a later mention",
        lambda r: str(r["sleep"]["reminders_fired"]),
    )
    srow("reminders: intentions from turns that ask none", lambda r: str(r["sleep"]["stray_intentions"]))
    srow("names: facts whose subject is a raw user id", lambda r: str(r["sleep"]["raw_id_subjects"]))
    srow(
        'names: facts of the user who said "I\'m Noor" about Noor',
        lambda r: f"{r['sleep']['named_facts']}/{r['sleep']['named_total']}",
    )

    print(
        f"\n4. return after N days, one consolidation per night "
        f"({len(PROFILE_QUESTIONS)} profile questions)\n"
    )
    print(head, rule, sep="\n")
    for d in days:
        row(f"day {d}: answered in top 5", partial(_answered, day=d))
        row(f"day {d}: memories left (episodic / semantic / procedural / learning)", partial(_left, day=d))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", default="offline,scripted")
    parser.add_argument("--embedder", choices=["hashing", "local"], default="hashing")
    parser.add_argument("--days", default="0,90,365", help="return scenarios: nights of consolidation")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.providers.split(",") if k.strip()]
    days = [int(d) for d in args.days.split(",")]
    from ucma_core.embedders import HashingEmbedder, LocalMiniLMEmbedder

    shared = LocalMiniLMEmbedder() if args.embedder == "local" else None

    def embedder() -> Any:
        return shared if shared is not None else HashingEmbedder(384)

    results: dict[str, Any] = {}
    started = time.perf_counter()
    for kind in kinds:
        results[kind] = {
            "keep_drop": keep_drop(kind, embedder, args.verbose),
            "keep_drop_held_out": keep_drop(kind, embedder, args.verbose, HELD_OUT_TURNS),
            "extraction": extraction(kind, args.verbose),
            "extraction_held_out": extraction(kind, args.verbose, HELD_OUT_TEXTS),
            "scenarios": scenarios(kind, embedder, args.verbose),
            "multi_topic": multi_topic(kind, embedder, args.verbose),
            # the scripted model has canned replies for the other sets only
            "sleep": _sleep(kind, embedder) if kind == "offline" else None,
            "profile": {str(d): profile(kind, embedder, d, args.verbose) for d in days},
        }
    print(f"embedder: {args.embedder}; providers: {', '.join(kinds)}; {time.perf_counter() - started:.1f} s")
    print_tables(results, kinds, days)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
