"""Two sessions with a coding assistant, with a real restart in between.

Session 1: Michael builds JWT authentication in FastAPI, hits a token-expiry bug and
fixes it, asks how to run the tests with coverage, changes his mind about where to
deploy and mentions a colleague. The assistant only observes the conversation (and
leaves itself one reminder); a sleep-consolidation cycle then learns from it: facts
(with the correction superseding the stale plan), a procedure from the how-to answer,
a procedure and a lesson from the fixed bug — each marked with the turns it was
learned from. The memory is closed.

Session 2: a new ``Memory`` object opens the same folder (``--fresh-process`` runs it
in a separate Python process), Michael comes back asking about refresh tokens, and
everything printed is what ``remember`` and friends return from disk. Last, one
forgetting step: what would fade if Michael came back in 90 days, and what stays.

Run offline on the embedded default (local Chroma + the MiniLM model from
``ucma[local]``)::

    python examples/two_sessions.py
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from ucma_core import Memory

USER = "michael"
CONVERSATION = [
    ("user", "I'm Michael. I'm building a FastAPI app with JWT authentication."),
    ("assistant", "Great, let's set up python-jose and an OAuth2 password flow."),
    ("user", "ok thanks"),
    ("user", "The JWT expiry is 30 minutes but users get logged out after 5 minutes."),
    ("assistant", "That smells like clock skew between the issuing and validating servers."),
    ("tool", "Fixed: added a 60-second leeway to jwt.decode(); the logout issue is resolved."),
    ("user", "h"),
    ("user", "Perfect. I prefer short answers with code, by the way."),
    ("user", "how do I run the test suite with coverage?"),
    (
        "assistant",
        "Run `pytest --cov=app --cov-report=term-missing` from the project root, then open htmlcov.",
    ),
    ("user", "I'm going to deploy on Heroku."),
    ("assistant", "Happy to help!"),
    ("user", "Actually I decided on Fly.io instead."),
    ("user", "My colleague Priya maintains the auth service."),
]


def _turn(mem: Memory, memory_id: str) -> str:
    record = mem.get(memory_id)
    return f"“{record.content}”" if record is not None else "(a turn since forgotten)"


def session_one(folder: Path) -> None:
    with Memory(folder) as mem:
        print(f"== Session 1 (memory folder: {folder})")
        for source, text in CONVERSATION:
            memory_id = mem.observe(
                text, source=source, user_id=USER, participants=["Michael"] * (source == "user")
            )
            verdict = f"kept …{memory_id[-6:]}" if memory_id else "not kept (noise)"
            print(f"  observe[{source:9}] {verdict:17} {text}")
        mem.intend(
            "Offer the refresh-token rotation checklist", ["refresh token", "refresh tokens"], user_id=USER
        )
        report = mem.consolidate()
        done = {phase: counts for phase, counts in report.phases.items() if counts}
        print(f"\n  sleep consolidation ({report.seconds:.2f} s): {done}")

        print("\n  learned facts (from the turns in quotes):")
        facts = mem.facts_about("Michael", user_id=USER, include_superseded=True)
        facts += [f for f in mem.facts_about("Priya", user_id=USER) if f.id not in {g.id for g in facts}]
        for fact in facts:
            status = f"superseded by “{_short(mem, fact.superseded_by)}”" if fact.valid_to else "current"
            turns = ", ".join(_turn(mem, i) for i in fact.source_ids)
            print(f"    {fact.content}  [{status}] ← {turns}")
        print("\n  learned procedures:")
        for proc in mem.list_memories(user_id=USER, memory_types=["procedural"]):
            print(f"    {proc.content.splitlines()[0]}")
            for step in proc.content.splitlines()[1:]:
                print(f"      {step}")
            print(
                f"      ← learned by {proc.source} from {len(proc.source_ids)} turn(s), "
                f"ending {_turn(mem, proc.source_ids[-1])}"
            )
        print("\n  learned lessons:")
        for lesson in mem.list_memories(user_id=USER, memory_types=["learning"]):
            print(
                f"    {lesson.content.splitlines()[0]}  "
                f"← learned by {lesson.source} from {len(lesson.source_ids)} turn(s)"
            )
        print(f"\n  stats: {mem.stats()['by_type']}")
    print("  (memory closed)\n")


def _short(mem: Memory, memory_id: str | None) -> str:
    record = mem.get(memory_id) if memory_id else None
    return record.content if record is not None else "?"


def session_two(folder: Path) -> None:
    with Memory(folder) as mem:
        print("== Session 2 (reopened from disk)")
        mem.new_session()
        text = "Michael is back: he wants to add refresh tokens to his FastAPI JWT setup."
        mem.observe(text, source="user", user_id=USER)
        print(f"  observe[user     ] {text}")
        for query in ("JWT authentication FastAPI token issues", "how do I run the tests?"):
            print(f"\n  remember({query!r}):")
            for hit in mem.remember(query, user_id=USER, k=4):
                print(f"    {hit.score:.3f}  {hit.memory_type.value:11} {hit.content.splitlines()[0][:100]}")
        print(
            "\n  remember('where do I deploy?', memory_types=['semantic'])  (what was learned, current only):"
        )
        for hit in mem.remember("where do I deploy?", user_id=USER, k=2, memory_types=["semantic"]):
            print(f"    {hit.score:.3f}  {hit.memory_type.value:11} {hit.content}")
        print("\n  facts about Michael:")
        for fact in mem.facts_about("Michael", user_id=USER):
            print(f"    {fact.subject} {fact.predicate} {fact.object}  (confidence {fact.confidence:.2f})")
        print("\n  procedures for ['jwt']:")
        for proc in mem.find_procedures(["jwt"], user_id=USER):
            print(
                f"    {proc.name}: {proc.success_rate:.0%} over {proc.executions} run(s), {proc.status.value}"
            )
        print("\n  intentions triggered by this session:")
        for intention in mem.intentions(status="triggered", user_id=USER):
            print(f"    {intention.description}")
        print(
            f"\n  what another user sees: {[h.content for h in mem.remember('JWT', user_id='someone-else')]}"
        )

        later = time.time() + 90 * 86_400  # one forgetting step, as if Michael came back in 90 days
        memories = mem.list_memories(user_id=USER, limit=1000)
        report = mem.prune(user_id=USER, now=later)
        stays = Counter(r.memory_type.value for r in memories if r.id not in set(report.forgotten))
        print(
            f"\n  forgetting, 90 days on (prune(now=+90 days)): {len(report.forgotten)} of {len(memories)} "
            f"memories faded {report.by_type}; these stay {dict(stays)} (protected: {report.protected})"
        )
        print("  remember('how do I like my answers?') after it:")
        for hit in mem.remember("how do I like my answers?", user_id=USER, k=2, now=later):
            print(f"    {hit.score:.3f}  {hit.memory_type.value:11} {hit.content.splitlines()[0][:100]}")
        stats = mem.stats()
        print(
            f"\n  stats: {stats['memories']} memories {stats['by_type']}, "
            f"{stats['entities']} entities, {stats['graph_edges']} graph edges, embedder {stats['embedder']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="memory folder (default: a new temporary one)")
    parser.add_argument("--fresh-process", action="store_true", help="run session 2 in a new Python process")
    parser.add_argument("--session", choices=["one", "two"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.session == "two":
        session_two(args.folder)
        return
    folder = args.folder or Path(tempfile.mkdtemp(prefix="ucma-demo-")) / "memory"
    if folder.exists() and args.folder is None:
        shutil.rmtree(folder)
    session_one(folder)
    if args.fresh_process:
        subprocess.run([sys.executable, __file__, "--session", "two", "--folder", str(folder)], check=True)
    else:
        session_two(folder)


if __name__ == "__main__":
    main()
