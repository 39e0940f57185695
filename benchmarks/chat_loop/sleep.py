"""What the sleep cycle writes: procedures, lessons, reminders and whose facts, checked.

Written for this benchmark. Each case is a short chat observed for one user; one
consolidation cycle runs; then:

* **procedures** — a how-to question and the answer that gives its steps: is a procedure
  learned with every labelled step, in order (each labelled step's words found in a step
  after the previous one's)?
* **lessons** — two stories about one problem, the first ending in failure and the second in
  success: is there one lesson about it, carrying both what failed and what worked?
* **reminders** — "Remind me to …" turns (and turns that only look alike): is an intention
  created for each reminder and none for the others, and does it fire when a later turn
  mentions it?
* **names** — users who pass no name (their ids "u-4821", "sam-laptop"…), one of whom says
  "I'm Noor": does any fact have a raw user id as subject, and are the facts of the one who
  gave a name about that name?
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ucma_core import Memory

__all__ = ["LESSONS", "NAMES", "PROCEDURES", "PROCEDURES_HELD_OUT", "REMINDERS", "sleep_outputs"]

DAY = 86_400.0

#: ``(question, answer, labelled steps: words each step contains, in order)``.
PROCEDURES: list[tuple[str, str, list[str]]] = [
    (
        "how do I set up the dev environment?",
        "1. Clone the repo. 2. Install the requirements with pip. 3. Run the tests.",
        ["clone", "install", "run the tests"],
    ),
    (
        "how can I publish the docs?",
        "First, build the site with mkdocs build. Next, copy the site folder to the bucket. "
        "Finally, invalidate the CDN cache.",
        ["build the site", "copy the site", "invalidate"],
    ),
    (
        "how do I rotate the API key?",
        "Generate a new key in the dashboard, store it in the vault, then revoke the old key.",
        ["generate", "store it", "revoke"],
    ),
    (
        "what's the best way to back up the database?",
        "You need to dump it with pg_dump, then compress the file and upload it to S3.",
        ["dump", "compress", "upload"],
    ),
    (
        "how do I reset the router?",
        "Hold the reset button on the back for 10 seconds until the lights blink. Then wait two "
        "minutes and reconnect with the password printed on the sticker.",
        ["hold the reset", "wait", "reconnect"],
    ),
    (
        "how do I deploy the staging app?",
        "Build the image with `docker build -t web .`, push it with `docker push registry/web`, "
        "then run `kubectl apply -f k8s/staging.yaml`.",
        ["docker build", "docker push", "kubectl"],
    ),
]

#: Written after the rules were fitted on :data:`PROCEDURES` (which added the verbs those
#: answers use to the lists); looked at once.
PROCEDURES_HELD_OUT: list[tuple[str, str, list[str]]] = [
    (
        "how do I repot a cactus?",
        "Wear thick gloves, loosen the soil around the edges, then lift the cactus out and settle it "
        "in the new pot.",
        ["wear", "loosen", "lift", "settle"],
    ),
    (
        "how do I get a refund for the order?",
        "Go to Orders, choose the item, then tap Return and print the label.",
        ["go to orders", "choose", "tap", "print"],
    ),
    (
        "how do I bleed the radiator?",
        "1. Turn off the heating. 2. Attach the key to the valve. 3. Open it a quarter turn until water "
        "drips. 4. Tighten the valve.",
        ["turn off", "attach", "open it", "tighten"],
    ),
]

#: ``(failed story, working story, words of the failed attempt, words of the fix)``.
LESSONS: list[tuple[list[str], list[str], str, str]] = [
    (
        ["My build fails on CI with a numpy error.", "I upgraded pip.", "Still failing."],
        ["My build fails on CI with a numpy error.", "I pinned numpy to 1.26.", "Works now!"],
        "pip",
        "numpy to 1.26",
    ),
    (
        ["The VPN drops every night at 2am.", "I restarted the router.", "It still drops."],
        ["The VPN drops every night at 2am.", "I disabled the power saving mode on the adapter.", "Fixed!"],
        "router",
        "power saving",
    ),
    (
        ["The worker runs out of memory on large uploads.", "I increased the swap.", "Didn't help."],
        [
            "The worker runs out of memory on large uploads.",
            "I switched to streaming the file.",
            "Works now.",
        ],
        "swap",
        "streaming",
    ),
]

#: ``(turn, later turn that should fire it, or None for a turn that asks no reminder)``.
REMINDERS: list[tuple[str, str | None]] = [
    ("Remind me to call the dentist tomorrow.", "The dentist's office is closed on Mondays."),
    ("Can you remind me to buy oat milk when I'm at the store?", "Ok I'm at the store now."),
    ("Don't let me forget to renew my passport.", "Where do I renew a passport in Lisbon?"),
    ("Remind me about the quarterly report on Friday.", "The quarterly report template changed."),
    ("Note to self: water the plants.", "The plants look dry."),
    ("I reminded my brother to call mum.", None),
    ("Did you remember my birthday?", None),
]

#: ``(user_id, turns)``: users who pass no name; one gives hers.
NAMES: list[tuple[str, list[str]]] = [
    ("u-4821", ["I live in Porto and I work at Acme.", "I love bouldering."]),
    ("sam-laptop", ["I'm going to buy the ThinkPad X1 Carbon for work.", "I use vim for everything."]),
    ("noor-7", ["Hi, I'm Noor!", "I live in Cairo.", "I'm a pharmacist."]),
]


def _procedures(mem: Memory, cases: list[tuple[str, str, list[str]]], prefix: str) -> tuple[int, int]:
    kept = 0
    for n, (_, _, labelled) in enumerate(cases):
        for record in mem.list_memories(user_id=f"{prefix}-{n}", memory_types=["procedural"], limit=10):
            steps = [s.lower() for s in getattr(record, "steps", ())]
            at, ok = -1, True
            for words in labelled:
                later = [i for i, s in enumerate(steps) if i > at and words in s]
                if not later:
                    ok = False
                    break
                at = later[0]
            if ok and len(steps) >= len(labelled):
                kept += 1
                break
    return kept, len(cases)


def _lessons(mem: Memory) -> tuple[int, int, int]:
    merged = lessons = 0
    for n, (_, _, failed, fixed) in enumerate(LESSONS):
        found = mem.list_memories(user_id=f"lesson-{n}", memory_types=["learning"], limit=10)
        lessons += len(found)
        merged += len(found) == 1 and all(w in found[0].content.lower() for w in (failed, fixed))
    return merged, len(LESSONS), lessons


def sleep_outputs(memory: Callable[[], Any], clock: Any, start: float) -> dict[str, Any]:
    """Run every case in one memory (``memory()`` opens it; ``clock.t`` is its time)."""
    clock.t = start
    with memory() as mem:
        for prefix, cases in (("howto", PROCEDURES), ("howto-held-out", PROCEDURES_HELD_OUT)):
            for n, (question, answer, _) in enumerate(cases):
                for source, text in (("user", question), ("assistant", answer), ("user", "thanks")):
                    clock.t += 60
                    mem.observe(text, source=source, user_id=f"{prefix}-{n}", session_id="s", keep=True)
        for n, (failed, worked, _, _) in enumerate(LESSONS):
            for k, story in enumerate((failed, worked)):
                for text in story:
                    clock.t += 60
                    mem.observe(text, user_id=f"lesson-{n}", session_id=f"s{k}", keep=True)
        for n, (text, _) in enumerate(REMINDERS):
            clock.t += 60
            mem.observe(text, user_id=f"remind-{n}", session_id="s", keep=True)
        for user_id, turns in NAMES:
            for text in turns:
                clock.t += 60
                mem.observe(text, user_id=user_id, session_id="s", keep=True)
        clock.t += DAY
        mem.consolidate()
        wanted = sum(1 for _, later in REMINDERS if later is not None)
        created = stray = fired = 0
        for n, (_, later) in enumerate(REMINDERS):
            intentions = mem.intentions(user_id=f"remind-{n}")
            if later is None:
                stray += len(intentions)
                continue
            created += bool(intentions)
            clock.t += 60
            mem.observe(later, user_id=f"remind-{n}", session_id="s2", keep=True)
            fired += any(i.status.value == "triggered" for i in mem.intentions(user_id=f"remind-{n}"))
        raw_ids = named = named_total = 0
        for user_id, _ in NAMES:
            facts = [f for f in mem.list_memories(user_id=user_id, memory_types=["semantic"], limit=100)]
            raw_ids += sum(1 for f in facts if getattr(f, "subject", "").lower() == user_id.lower())
            if user_id == "noor-7":
                about = [f for f in facts if getattr(f, "predicate", "") != "is named"]
                named_total = len(about)
                named += sum(1 for f in about if getattr(f, "subject", "") == "Noor")
        procedures, n_procedures = _procedures(mem, PROCEDURES, "howto")
        held_out, n_held_out = _procedures(mem, PROCEDURES_HELD_OUT, "howto-held-out")
        merged, n_problems, n_lessons = _lessons(mem)
    return {
        "procedures_in_order": procedures,
        "procedures": n_procedures,
        "procedures_held_out_in_order": held_out,
        "procedures_held_out": n_held_out,
        "lessons_merged": merged,
        "problems": n_problems,
        "lessons": n_lessons,
        "reminders_created": created,
        "reminders": wanted,
        "reminders_fired": fired,
        "stray_intentions": stray,
        "raw_id_subjects": raw_ids,
        "named_facts": named,
        "named_total": named_total,
    }
