"""Two sessions with a coding assistant, with a real restart in between.

Session 1: Michael builds JWT authentication in FastAPI, hits a token-expiry bug
and fixes it. The assistant stores what happened, a fact, a procedure and a lesson,
and leaves itself a reminder; a sleep-consolidation cycle extracts facts from the
episodes. The memory is closed.

Session 2: a new ``Memory`` object opens the same folder (``--fresh-process`` runs
it in a separate Python process), Michael comes back asking about refresh tokens,
and everything printed is what ``remember`` and friends return from disk.

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
from pathlib import Path

from ucma_core import Memory

USER = "michael"


def session_one(folder: Path) -> None:
    with Memory(folder) as mem:
        print(f"== Session 1 (memory folder: {folder})")
        turns = [
            ("user", "I'm Michael. I'm building a FastAPI app with JWT authentication."),
            ("assistant", "Great, let's set up python-jose and an OAuth2 password flow."),
            ("user", "ok thanks"),
            ("user", "The JWT expiry is 30 minutes but users get logged out after 5 minutes."),
            ("assistant", "That smells like clock skew between the issuing and validating servers."),
            ("tool", "Fixed: added a 60-second leeway to jwt.decode(); the logout issue is resolved."),
            ("user", "Perfect. I prefer short answers with code, by the way."),
        ]
        ids = []
        for source, text in turns:
            memory_id = mem.observe(text, source=source, user_id=USER)
            ids.append(memory_id)
            verdict = f"kept …{memory_id[-6:]}" if memory_id else "not kept (noise)"
            print(f"  observe[{source:9}] {verdict:22} {text}")
        kept = [i for i in ids if i]
        mem.assert_fact(
            "Michael",
            "is building",
            "a FastAPI app with JWT auth",
            user_id=USER,
            source_ids=kept[:1],
            confidence=0.9,
        )
        mem.assert_fact(
            "Michael",
            "prefers",
            "short answers with code",
            user_id=USER,
            source_ids=kept[-1:],
            confidence=0.9,
            exclusive=True,
        )
        fix = mem.add_procedure(
            "debug early JWT expiry",
            ["compare server clocks", "add leeway to jwt.decode()", "re-test token lifetime"],
            trigger_tags=["jwt", "auth", "debugging"],
            user_id=USER,
            source_ids=kept[2:5],
        )
        mem.record_outcome(fix.id, True)
        mem.learn(
            "When JWTs expire early, check clock skew first; a decode leeway usually fixes it.",
            title="JWT clock skew",
            learning_type="failure_analysis",
            applicability=["jwt", "fastapi"],
            confidence=0.8,
            evidence=kept[2:5],
            user_id=USER,
        )
        mem.intend(
            "Offer the refresh-token rotation checklist", ["refresh token", "refresh tokens"], user_id=USER
        )
        report = mem.consolidate()
        done = {phase: counts for phase, counts in report.phases.items() if counts}
        print(f"  sleep consolidation ({report.seconds:.2f} s): {done}")
        print(f"  stats: {mem.stats()['by_type']}")
    print("  (memory closed)\n")


def session_two(folder: Path) -> None:
    with Memory(folder) as mem:
        print("== Session 2 (reopened from disk)")
        mem.new_session()
        text = "Michael is back: he wants to add refresh tokens to his FastAPI JWT setup."
        mem.observe(text, source="user", user_id=USER)
        print(f"  observe[user     ] {text}")
        print("\n  remember('JWT authentication FastAPI token issues'):")
        for hit in mem.remember("JWT authentication FastAPI token issues", user_id=USER, k=6):
            print(f"    {hit.score:.3f}  {hit.memory_type.value:11} {hit.content.splitlines()[0]}")
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
