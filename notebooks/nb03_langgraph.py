"""03 — LangGraph: UCMACheckpointer + UCMAStore + recall and consolidation nodes, two threads, a restart."""

from _cells import HELPERS, code, md

NAME = "03_langgraph.ipynb"

CELLS = [
    md("""
# LangGraph: threads that survive a restart, one memory across them

A small LangGraph agent with UCMA behind both of LangGraph's persistence surfaces:

- `UCMACheckpointer` keeps each **thread** (its checkpoints in `<folder>/checkpoints.sqlite3`, through
  LangGraph's own `SqliteSaver`) and turns its messages into memories of the user;
- `UCMAStore` is the graph's **Store**: a `profile` node writes notes to it and **searches it**;
- `recall_node` recalls, for the last user message, from every thread and the Store;
- `consolidation_node` (deferred) runs a sleep cycle every few turns.

Then: **two threads** of the same user, a **restart** (everything closed and opened again), and both
threads carry on.

**Offline, with a fake model.** The "model" node below is a deterministic stand-in written for this
notebook: it answers with the remembered lines of its prompt that share a word with the question.
It is not an LLM — it shows what reaches the model. The embedder is the local MiniLM model
(`ucma[local]`). With `OPENAI_API_KEY` set, `ChatOpenAI` (`pip install langchain-openai`) answers.
"""),
    code(HELPERS),
    code('''
import hashlib
import os
import tempfile
from pathlib import Path

from langchain_core.messages import AIMessage, SystemMessage


def rule_model(messages):
    """A deterministic stand-in for a chat model: quote the remembered lines that fit the question."""
    def words(text):
        return {w.strip("?.,!'").lower() for w in text.split()} - COMMON

    question = words(messages[-1].text)
    context = messages[0].text.splitlines()
    useful = [line[2:] for line in context if line.startswith("- ") and question & words(line)]
    return AIMessage("From memory: " + " / ".join(useful[:2]) if useful else "Noted.")


COMMON = {"what", "which", "when", "should", "still", "anything", "i", "my", "a", "the", "for", "did", "is"}


if os.environ.get("OPENAI_API_KEY"):  # never taken in CI
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)

    def ask_model(messages):
        return llm.invoke(messages)
else:
    ask_model = rule_model
'''),
    md("""
## The graph

`recall → profile → model`, and `consolidate` deferred to the end of the run. The `profile` node
gets the Store the graph was compiled with (`store: BaseStore`): it saves "remember that …" notes in
the user's namespace and searches that namespace for the question.
"""),
    code("""
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore, consolidation_node, recall_node


class State(MessagesState):
    memories: str  # written by recall_node
    profile: str   # written by the profile node


def profile(state: State, config: RunnableConfig, *, store: BaseStore) -> dict:
    user = config["configurable"]["user_id"]
    namespace = ("users", user, "profile")
    said = state["messages"][-1].text
    if said.lower().startswith("remember that "):
        note = said[len("remember that "):]
        store.put(namespace, hashlib.sha1(note.encode()).hexdigest()[:12], {"text": note})
    notes = store.search(namespace, query=said, limit=3)
    return {"profile": "\\n".join(f"- {item.value['text']}" for item in notes)}


def model(state: State) -> dict:
    system = SystemMessage(
        "You are a helpful assistant.\\n"
        f"Profile notes (Store search):\\n{state['profile']}\\n"
        f"{state['memories']}"
    )
    return {"messages": [ask_model([system, *state["messages"]])]}


consolidate = consolidation_node(consolidate_every=4, observe=False, timeout=60)  # the checkpointer observes
builder = StateGraph(State)
builder.add_node("recall", recall_node(output="state", k=4, max_tokens=300, include_generated=False))
builder.add_node("profile", profile)
builder.add_node("model", model)
builder.add_node("consolidate", consolidate, defer=True)
builder.add_edge(START, "recall")
builder.add_edge("recall", "profile")
builder.add_edge("profile", "model")
builder.add_edge("model", "consolidate")
_ = builder.add_edge("consolidate", END)
"""),
    code("""
from ucma_core import Memory

clock = Clock(datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc))
folder = Path(tempfile.mkdtemp()) / "memory"


def open_agent():
    mem = Memory(folder, clock=clock)
    saver = UCMACheckpointer(mem, background=False)  # observe inside put: simpler to follow here
    graph = builder.compile(checkpointer=saver, store=UCMAStore(mem, index={"fields": ["text"]}))
    return mem, saver, graph


def say(graph, thread, text):
    config = {"configurable": {"thread_id": thread, "user_id": "ana"}}
    out = graph.invoke({"messages": [("user", text)]}, config)
    print(f"[{thread}] Ana: {text}\\n[{thread}] AI:  {out['messages'][-1].text}")
    clock.advance(hours=1)
    return out


mem, saver, graph = open_agent()
"""),
    md("## Thread 1: Ana tells the agent a few things"),
    code("""
say(graph, "t1", "Remember that I'm vegetarian.")
say(graph, "t1", "My sister Carla is visiting from Porto on Saturday.")
out = say(graph, "t1", "I bought a new bike for the commute.")
"""),
    md("""
## Thread 2: a new conversation recalls thread 1

Thread `t2` starts empty, but `recall_node` reads Ana's memories of every thread (only what users
and tools said: `include_generated=False`), and the `profile` node finds the Store note.
"""),
    code("""
out = say(graph, "t2", "What should I cook for Saturday when my sister Carla visits? Anything vegetarian?")
print("recall_node's block (state['memories']):\\n" + out["memories"])
print("\\nStore search in the profile node (state['profile']):\\n" + out["profile"])
"""),
    md("""
The fourth turn triggered the deferred consolidation node (`consolidate_every=4`): one sleep cycle
ran after the turn. What it did:
"""),
    code("""
report = consolidate.last_report
table([{"phase": phase, "what it did": ", ".join(f"{k}={v}" for k, v in counts.items())}
       for phase, counts in report.phases.items() if counts], ["phase", "what it did"])
"""),
    md("""
## Restart

Close the checkpointer (it flushes what it was observing), then the memory — as when the process
ends — and open everything again.
"""),
    code("""
saver.close()
mem.close()
clock.advance(days=2)

mem, saver, graph = open_agent()
t1 = graph.get_state({"configurable": {"thread_id": "t1"}}).values["messages"]
print(f"thread t1 resumed with {len(t1)} messages:")
for message in t1:
    print(f"  {message.type:>5}: {message.text}")
"""),
    code("""
say(graph, "t1", "Which bike did I buy?")
out = say(graph, "t2", "Is Carla still coming on Saturday?")
"""),
    md("""
## What the memory holds

The threads' turns are episodes of the sessions `t1` / `t2` (the checkpointer maps `thread_id` to
`session_id`), the Store note is a memory of Ana's too, and the cycle added the facts it extracted.
"""),
    code("""
rows = []
for r in mem.list_memories(user_id="ana", newest_first=False):
    source = getattr(r.source, "value", r.source)
    rows.append({"type": r.memory_type.value, "session": r.session_id or "-", "source": source,
                 "content": r.content[:80]})
table(rows, ["type", "session", "source", "content"])
saver.close()
mem.close()
"""),
]
