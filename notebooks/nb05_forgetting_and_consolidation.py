"""05 — forgetting and consolidation: retention curves with reinforcements, one sleep cycle, the graph."""

from _cells import HELPERS, code, md

NAME = "05_forgetting_and_consolidation.ipynb"

CELLS = [
    md("""
# Forgetting and consolidation

UCMA memories fade on an Ebbinghaus curve unless they are used, and a sleep cycle turns a pile of
turns into something smaller and more useful. This notebook draws both:

1. the **retention curves** of a few memories, one of them reinforced by being recalled three times;
2. what **one sleep cycle** (`Memory.consolidate`) compressed, grouped, merged, extracted and pruned
   (`ConsolidationReport.phases`), memory by memory;
3. the **memory graph** around the user, and the **signals** behind one search.

**Offline.** The embedder is the local MiniLM model (`ucma[local]`) and the model work
(importance, summaries, facts, procedures) is UCMA's deterministic `OfflineProvider`; with
`OPENAI_API_KEY` set, an OpenAI model does that work instead. The pictures come from
`ucma_core.plots` (`pip install 'ucma[plots]'`). A fixed clock, moved by hand, makes every run
draw the same curves.
"""),
    code(HELPERS),
    code("""
import os
import tempfile

from ucma_core import Memory
from ucma_core.plots import plot_forgetting_curves, plot_memory_graph, plot_signals

DAY = 86400
start = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)
clock = Clock(start)

provider = None  # the offline, deterministic provider
if os.environ.get("OPENAI_API_KEY"):  # never taken in CI
    from ucma_core.providers import OpenAIProvider

    provider = OpenAIProvider(model="gpt-4o-mini")

mem = Memory(tempfile.mkdtemp(), clock=clock, provider=provider)
"""),
    md("""
## A morning of turns

Ten turns of one session, ten minutes apart: who Ana is, a how-to question and its answer, the same
sentence said twice, small talk, and a work story.
"""),
    code("""
turns = [
    ("user", "I'm Ana. I live in Lisbon and I work as a data engineer."),
    ("user", "My brother Tomas lives in Berlin."),
    ("user", "how do I renew my passport?"),
    ("assistant", "Book an appointment at the citizen's office, bring your old passport and a photo, "
                  "then pay the fee at the counter."),
    ("user", "My passport expires in June."),
    ("user", "My passport expires in June."),
    ("user", "The weather was grey today."),
    ("user", "I had a sandwich for lunch."),
    ("user", "The deploy of the billing pipeline failed because the staging database was full; "
             "we fixed it by purging the old partitions and it worked."),
    ("user", "At the standup we talked about the billing pipeline, the warehouse migration "
             "and the on-call rota for June."),
]
ids = mem.observe_many(
    [{"content": text, "source": source, "timestamp": clock.now + n * 600}
     for n, (source, text) in enumerate(turns)],
    user_id="ana", session_id="monday",
)
assert all(ids), "every turn was kept"
by_text = {}
for memory_id, (_, text) in zip(ids, turns, strict=True):
    by_text.setdefault(text, memory_id)
"""),
    md("""
## Reinforcement: recalling a memory resets its curve

Ana asks about her passport on days 1, 3 and 8. Each recall reinforces the memory it returns: its
retention goes back to 1 and its stability grows, so the next decline is slower.
"""),
    code("""
reviews = {}
for day in (1, 3, 8):
    clock.now = start.timestamp() + day * DAY
    top = mem.remember("when does my passport expire?", user_id="ana", k=1)[0]
    reviews.setdefault(top.id, [start.timestamp()]).append(clock.now)
    print(f"day {day}: recalled “{top.content}” (retention before this recall {top.retention:.2f})")
passport = top.id
"""),
    code("""
chosen = [passport, by_text["My brother Tomas lives in Berlin."], by_text["I had a sandwich for lunch."]]
figure = plot_forgetting_curves(mem, chosen, reviews=reviews, days_before=9, days_after=40)
show(figure)
"""),
    md("""
The dotted line is the forgetting threshold (`ForgettingConfig.retention_threshold`): a memory whose
retention falls below it may be pruned, unless a protection keeps it (important, central in the
graph, a confident fact about the user, pinned). The reinforced memory stays above the line weeks
longer than the sandwich.

## One sleep cycle, 40 days later
"""),
    code("""
clock.now = start.timestamp() + 40 * DAY
before = {r.id: r for r in mem.list_memories(user_id="ana")}
report = mem.consolidate()
table([{"phase": phase, "what it did": ", ".join(f"{k}={v}" for k, v in counts.items()) or "-"}
       for phase, counts in report.phases.items()], ["phase", "what it did"])
"""),
    md("""
- **compress**: turns older than the short-term window move to the medium-term tier; the unimportant
  ones lose half their stability, so they fade sooner;
- **group**: the session's turns are summarised into one consolidated episode linked to them;
- **extract**: facts (subject, predicate, object) are learned from the turns;
- **patterns**: the answered how-to question becomes a draft procedure;
- **merge**: the sentence said twice becomes one memory (the other gets `similar_to` edges);
- **prune**: what faded below the threshold, unprotected, is let go.

What happened to each turn:
"""),
    code("""
after = {r.id: r for r in mem.list_memories(user_id="ana")}
kept_texts = {r.content for r in after.values()}
rows = []
for memory_id, (_, text) in zip(ids, turns, strict=True):
    if memory_id in after:
        fate = "kept"
    elif text in kept_texts:
        fate = "merged into its twin"
    else:
        fate = "pruned (faded)"
    rows.append({"turn": text[:70], "fate": fate})
table(rows, ["turn", "fate"])
"""),
    md("What the cycle created:"),
    code("""
new = [r for memory_id, r in after.items() if memory_id not in before]
table([{"type": r.memory_type.value, "content": r.content[:110],
        "learned from": f"{len(r.source_ids)} turn(s)"}
       for r in sorted(new, key=lambda r: (r.memory_type.value, r.content))],
      ["type", "content", "learned from"])
"""),
    md("""
## The memory graph

Episodes, the facts learned from them, the consolidated episode, the procedure and the entities
they mention are nodes of one graph; `plot_memory_graph` draws the neighbourhood of a memory or an
entity.
"""),
    code("""
show(plot_memory_graph(mem, entity="Ana", user_id="ana", hops=2, max_nodes=25))
"""),
    md("""
## Why a search result ranks where it does

`plot_signals` splits each result's score into its factors (relevance, importance, recency,
retention) and shows the retrieval signals behind relevance.
"""),
    code("""
results = mem.remember("where does my brother live?", user_id="ana", k=4)
show(plot_signals(results, ranking=mem.config.ranking, title="where does my brother live?"))
mem.close()
"""),
]
