"""Deterministic generator of the conversational-memory retrieval benchmark.

Pure standard library, fixed seed: the same code writes the same bytes on every machine.

    python -m benchmarks.quality.generate --out benchmarks/quality/data/conversations.json
    python -m benchmarks.quality.generate --check benchmarks/quality/data/conversations.json

The dataset: several users, each with dozens of dated chat sessions over 2025 (some shared with a
second person), thousands of turns of chit-chat with facts planted among them, and questions
labelled with the turns that hold their answer. All times are UTC epoch seconds; every question
is asked after the user's whole history (``asked_at``), and relative wording ("yesterday",
"last week", "last month", "in March", "before the move") resolves against ``asked_at``:

* yesterday: the calendar day before ``asked_at``;
* last week: Monday to Sunday of the week before the one holding ``asked_at``;
* last month: the calendar month before the one holding ``asked_at``;
* in <Month>: that month of ``asked_at``'s year;
* before / after the move: before / after the turn ``anchor`` (the user announcing the move).

Temporal questions also carry ``time_range`` ``[start, end)`` as resolved here.

Version 2 keeps the eight version-1 users byte for byte (:mod:`.builder`) and adds six harder
users (:mod:`.harder`) whose questions are the cases of issue 13, one kind each.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import builder, harder
from .builder import UserBuilder
from .harder import HarderUserBuilder, NamePool
from .slots import NameBook

SEED = 20250611
VERSION = 2
KINDS = builder.KINDS + harder.KINDS
USERS = [
    ("ana", "Ana"),
    ("bilal", "Bilal"),
    ("chiara", "Chiara"),
    ("dmitri", "Dmitri"),
    ("emeka", "Emeka"),
    ("farah", "Farah"),
    ("grace", "Grace"),
    ("hiroshi", "Hiroshi"),
]
DEFAULT_OUT = Path(__file__).parent / "data" / "conversations.json"


def build_dataset(seed: int = SEED) -> dict:
    """Build the whole dataset in memory (deterministic for a given seed)."""
    names = NameBook(random.Random(seed))
    users, sessions, turns, questions = [], [], [], []
    builders: list[UserBuilder] = [UserBuilder(uid, name, names, seed) for uid, name in USERS]
    pool = NamePool(seed)
    builders += [HarderUserBuilder(uid, name, pool, seed) for uid, name in harder.USERS]
    for b in builders:
        u, s, t, q = b.build()
        users.append(u)
        sessions += s
        turns += t
        questions += q
    for i, q in enumerate(questions, 1):
        q["qid"] = f"q{i:04d}"
    return {
        "name": "ucma-convmem",
        "version": VERSION,
        "seed": seed,
        "timezone": "UTC",
        "kinds": list(KINDS),
        "users": users,
        "sessions": sessions,
        "turns": turns,
        "questions": questions,
    }


def dumps(dataset: dict) -> str:
    """Serialise with one record per line: small, diff-friendly and byte-stable."""

    def enc(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))

    head = ",".join(
        f"{enc(k)}:{enc(v)}" for k, v in dataset.items() if not isinstance(v, list) or k == "kinds"
    )
    parts = [f"{{{head}"]
    for key in ("users", "sessions", "turns", "questions"):
        rows = ",\n".join(enc(r) for r in dataset[key])
        parts.append(f"{enc(key)}:[\n{rows}\n]")
    return ",\n".join(parts) + "}\n"


def run_cli(
    argv: list[str] | None,
    *,
    doc: str,
    build: Callable[[int], dict[str, Any]],
    default_out: Path,
    seed: int,
    scopes: str = "users",
) -> int:
    """The command line of a dataset generator: write ``build(seed)`` serialised by :func:`dumps`
    (``--out``, else ``default_out``), or ``--check`` that a file equals a fresh generation.
    ``doc`` is the generator's docstring (its first paragraph describes the command) and
    ``scopes`` what the summary line calls the dataset's users."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write the dataset here")
    parser.add_argument("--check", type=Path, default=None, help="verify a file equals a fresh generation")
    parser.add_argument("--seed", type=int, default=seed)
    args = parser.parse_args(argv)
    text = dumps(build(args.seed))
    if args.check:
        same = args.check.read_text(encoding="utf-8") == text
        print(f"{args.check}: {'identical' if same else 'DIFFERS from a fresh generation'}")
        return 0 if same else 1
    out = args.out or default_out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    data = json.loads(text)
    print(
        f"wrote {out}: {len(data['users'])} {scopes}, {len(data['sessions'])} sessions, "
        f"{len(data['turns'])} turns, {len(data['questions'])} questions, {len(text.encode()) / 1e6:.2f} MB"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, doc=__doc__ or "", build=build_dataset, default_out=DEFAULT_OUT, seed=SEED)


if __name__ == "__main__":
    sys.exit(main())
