"""04 — LlamaIndex: a chat engine and a FunctionAgent with UCMA memory across sessions."""

from _cells import HELPERS, code, md

NAME = "04_llamaindex.ipynb"

CELLS = [
    md("""
# LlamaIndex: a chat engine and an agent that remember across sessions

`ucma_llamaindex` gives LlamaIndex:

- `UCMAChatMemory`: the `memory=` of a chat engine or an agent. It keeps one session, and its `get`
  starts with a system message of what UCMA recalls from the user's **other** sessions;
- `UCMAToolSpec`: recall / save / forget / facts tools for agents, bound to one user.

We chat on Monday, restart (close the `Memory`, open the folder again), chat on Tuesday in a new
session, then give a `FunctionAgent` the memory tools.

**Offline, with a fake model.** `RuleLLM` below is a deterministic stand-in written for this
notebook (a LlamaIndex `MockFunctionCallingLLM`): it calls a memory tool when asked to remember or
to look something up, and otherwise answers with the remembered lines of its system message that
share a word with the question. It is not an LLM — it shows what reaches the model. The embedder
is the local MiniLM model (`ucma[local]`). With `OPENAI_API_KEY` set, LlamaIndex's `OpenAI` LLM
(`pip install llama-index-llms-openai`) answers instead. Always pass `llm=`: LlamaIndex's defaults
reach for OpenAI.
"""),
    code(HELPERS),
    code('''
import json
import os
import tempfile
from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM

COMMON = {"what", "which", "when", "does", "should", "know", "about", "i", "my", "a", "the", "do", "you"}


def words(text):
    return {w.strip("?.,!'").lower() for w in text.split()} - COMMON


def rule_reply(messages, **kwargs):
    """What the fake model answers to a list of chat messages."""
    last = messages[-1]
    if last.role == "tool":  # answer with what the tool returned
        found = json.loads(last.content)
        if isinstance(found, dict):
            return ChatMessage(role="assistant", content=f"Saved it ({found['memory_type']} memory).")
        asked = next(m.content for m in reversed(messages) if m.role == "user")
        hits = [h["content"] for h in found if h["content"] != asked]  # not the question itself
        return ChatMessage(role="assistant", content="From memory: " + " / ".join(hits[:2]))
    text = last.content or ""
    if text.lower().startswith("remember that "):
        call = ToolCallBlock(tool_call_id="c1", tool_name="save_memory",
                             tool_kwargs={"content": text[len("remember that "):]})
        return ChatMessage(role="assistant", blocks=[call])
    if text.lower().startswith("look up "):
        call = ToolCallBlock(tool_call_id="c2", tool_name="recall_memory", tool_kwargs={"query": text[8:]})
        return ChatMessage(role="assistant", blocks=[call])
    system = "\\n".join(m.content or "" for m in messages if m.role == "system")
    lines = [line[2:] for line in system.splitlines() if line.startswith("- [")]
    useful = [line for line in lines if words(text) & words(line)]
    answer = "From memory: " + " / ".join(useful[:2]) if useful else "Noted."
    return ChatMessage(role="assistant", content=answer)


def make_llm():
    if os.environ.get("OPENAI_API_KEY"):  # never taken in CI
        from llama_index.llms.openai import OpenAI

        return OpenAI(model="gpt-4o-mini", temperature=0)
    return MockFunctionCallingLLM(response_generator=rule_reply, is_chat_model=True)
'''),
    code("""
from ucma_core import Memory

clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc))
folder = Path(tempfile.mkdtemp()) / "memory"
mem = Memory(folder, clock=clock)
"""),
    md("## Monday: a chat engine with `UCMAChatMemory`"),
    code("""
from llama_index.core.chat_engine import SimpleChatEngine

from ucma_llamaindex import UCMAChatMemory


def chat(mem, session, text):
    memory = UCMAChatMemory(mem, user_id="ana", session_id=session)
    engine = SimpleChatEngine.from_defaults(llm=make_llm(), memory=memory)
    print(f"[{session}] Ana: {text}\\n[{session}] AI:  {engine.chat(text)}")
    clock.advance(hours=1)
    return memory


chat(mem, "monday", "My sister Marta lives in Porto and works as a nurse.")
monday = chat(mem, "monday", "I'm allergic to cats, sadly.")
"""),
    md("## Restart, and a new session on Tuesday"),
    code("""
mem.close()
clock.advance(days=1)
mem = Memory(folder, clock=clock)

monday = UCMAChatMemory(mem, user_id="ana", session_id="monday")
print("Monday's session after the restart:", [m.content for m in monday.get_all()])
tuesday = chat(mem, "tuesday", "Marta asked me to look after her cat: good idea with my allergy?")
"""),
    md("What the model was given — the recalled system message first, then the session's messages:"),
    code("""
for message in tuesday.get("Marta asked me to look after her cat: good idea with my allergy?"):
    print(f"--- {message.role.value}\\n{message.content}")
"""),
    md("""
## A `FunctionAgent` with the memory tools

`UCMAToolSpec(mem, user_id="ana").to_tool_list()` gives `recall_memory`, `save_memory`,
`forget_memory` and `facts_about`, bound to Ana. The agent's own conversation is a `UCMAChatMemory`
session too. It keeps what Ana and the agent said; the calls and results of UCMA's own memory tools
are copies of memories and are not stored again (other tools' calls and results are kept with
`UCMAChatMemory(..., roles=("user", "assistant", "tool"))`), as in every UCMA adapter.
"""),
    code("""
from llama_index.core.agent.workflow import FunctionAgent

from ucma_llamaindex import UCMAToolSpec

agent = FunctionAgent(
    tools=UCMAToolSpec(mem, user_id="ana").to_tool_list(),
    llm=make_llm(),
    system_prompt="You are Ana's assistant. Use your memory tools.",
)
agent_memory = UCMAChatMemory(mem, user_id="ana", session_id="agent")

for text in ["Remember that Marta's birthday is on the 14th of April.", "look up Marta's birthday"]:
    answer = await agent.run(user_msg=text, memory=agent_memory)
    print(f"Ana: {text}\\nAI:  {answer}")
"""),
    md("The agent's session, as stored:"),
    code("""
for message in agent_memory.get_all():
    calls = [(b.tool_name, b.tool_kwargs) for b in message.blocks if isinstance(b, ToolCallBlock)]
    text = message.content or ""
    if message.role.value == "tool":
        text = json.dumps([{k: v for k, v in hit.items() if k != "id"} for hit in json.loads(text)]
                          if text.startswith("[") else {"memory_type": json.loads(text)["memory_type"]})
    print(f"{message.role.value:>9}: {(text or f'calls {calls}')[:120]}")
"""),
    md("## Every session, one memory"),
    code("""
rows = []
for r in mem.list_memories(user_id="ana", newest_first=False):
    source = getattr(r.source, "value", r.source)
    rows.append({
        # save_memory writes to the session its tools are bound to: here none, so the memory's
        # current session (a random id, shown as "current")
        "session": r.session_id if r.session_id in {"monday", "tuesday", "agent"} else "current",
        "source": source,
        "content": "(a tool result, JSON)" if source == "tool" else r.content[:90],
    })
table(rows, ["session", "source", "content"])
mem.close()
"""),
]
