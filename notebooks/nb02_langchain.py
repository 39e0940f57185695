"""02 — LangChain: a chain and a create_agent agent with UCMA memory, across a restart."""

from _cells import HELPERS, code, md

NAME = "02_langchain.ipynb"

CELLS = [
    md("""
# LangChain: a chain and an agent that remember

`ucma_langchain` plugs UCMA into LangChain:

- a **chain** (LCEL) whose conversation is kept by `UCMAChatMessageHistory` (through
  `RunnableWithMessageHistory`) and whose context comes from `UCMARetriever`;
- a **`create_agent` agent** with `UCMAMiddleware` (recall before the model, observe after the turn)
  and the memory tools of `create_memory_tools` (recall / save / forget / facts);
- a **restart** in between: the `Memory` is closed and opened again, as a new process would.

**Offline, with a fake model.** The chat model below is a small deterministic stand-in written
for this notebook (`RuleModel`): it calls a memory tool when asked to remember or to search, and
answers a question with the remembered lines of its system message that share a word with it (and
a statement with "Noted."). It is not an LLM — it shows what reaches the model. The embedder is
the local MiniLM model (`ucma[local]`). With `OPENAI_API_KEY` set, `ChatOpenAI`
(`pip install langchain-openai`) replaces the fake model.
"""),
    code(HELPERS),
    code('''
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class RuleModel(BaseChatModel):
    """A deterministic stand-in for a chat model; `prompts` keeps every prompt it got."""

    prompts: list = Field(default_factory=list)
    tools: list = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "rules"

    def bind_tools(self, tools, **kwargs):
        return self.model_copy(update={"tools": [t.name for t in tools]})

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def reply(self, messages) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):  # answer with what the tool returned
            found = json.loads(last.content)
            if last.name == "save_memory":
                return AIMessage(f"Saved it ({found['memory_type']} memory).")
            return AIMessage("From memory: " + " / ".join(hit["content"] for hit in found[:2]))
        question = last.text
        if "save_memory" in self.tools and question.lower().startswith("remember that "):
            content = question[len("remember that "):]
            call = {"name": "save_memory", "args": {"content": content}, "id": "c1"}
            return AIMessage("", tool_calls=[call])
        if "recall_memory" in self.tools and question.lower().startswith("search your memory for "):
            query = question[len("search your memory for "):]
            return AIMessage("", tool_calls=[{"name": "recall_memory", "args": {"query": query}, "id": "c2"}])
        if not question.endswith("?"):
            return AIMessage("Noted.")
        # answer with the remembered lines of the prompt that share a word with the question
        words = {w.strip("?.,!'").lower() for w in question.split() if len(w) > 4}
        context = "\\n".join(m.text for m in messages if isinstance(m, SystemMessage))
        lines = [line[2:] for line in context.splitlines() if line.startswith("- [")]
        useful = [line for line in lines if words & {w.strip("?.,!'").lower() for w in line.split()}]
        return AIMessage("From memory: " + " / ".join(useful) if useful else "I don't know yet.")


def show_messages(messages):
    """Print an agent's messages, one line each (tool results without their random ids)."""
    for message in messages:
        if isinstance(message, ToolMessage):
            found = json.loads(message.content)
            for item in found if isinstance(found, list) else [found]:
                item.pop("id", None)
            text = json.dumps(found)
        else:
            text = message.text or f"calls {[(c['name'], c['args']) for c in message.tool_calls]}"
        print(f"{message.type:>5}: {text[:140]}")


if os.environ.get("OPENAI_API_KEY"):  # never taken in CI
    from langchain_openai import ChatOpenAI

    def make_model():
        return ChatOpenAI(model="gpt-4o-mini", temperature=0)
else:
    def make_model():
        return RuleModel(prompts=[])
'''),
    code("""
from ucma_core import Memory

clock = Clock(datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc))
folder = Path(tempfile.mkdtemp()) / "memory"
mem = Memory(folder, clock=clock)
"""),
    md("""
## A chain: chat history and a retriever

The prompt gets two things: `{history}`, the session's messages (kept by `UCMAChatMessageHistory`),
and `{context}`, what `UCMARetriever` recalls for the question from **all** of Ana's sessions.
"""),
    code("""
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory

from ucma_langchain import UCMAChatMessageHistory, UCMARetriever

prompt = ChatPromptTemplate.from_messages([
    ("system", "You are Ana's assistant. What you remember:\\n{context}"),
    MessagesPlaceholder("history"),
    ("human", "{question}"),
])


def dated(docs):
    return "\\n".join(f"- [{d.metadata['timestamp_iso'][:10]}] {d.page_content}" for d in docs)


# LangChain 1.x marks RunnableWithMessageHistory deprecated (in favour of LangGraph persistence,
# see 03_langgraph.ipynb); it still works and many chains use it.
warnings.filterwarnings("ignore", message="RunnableWithMessageHistory is deprecated")


def make_chain(mem, model):
    retriever = UCMARetriever(memory=mem, user_id="ana", k=3)
    chain = RunnablePassthrough.assign(context=(lambda x: x["question"]) | retriever | dated) | prompt | model
    return RunnableWithMessageHistory(
        chain,
        lambda session_id: UCMAChatMessageHistory(mem, session_id, user_id="ana"),
        input_messages_key="question",
        history_messages_key="history",
    )


model = make_model()
chat = make_chain(mem, model)
monday = {"configurable": {"session_id": "monday"}}
for question in ["Hi! My sister Carla lives in Porto.", "I'm training for the Lisbon half marathon in May."]:
    answer = chat.invoke({"question": question}, monday)
    print(f"Ana: {question}\\nAI:  {answer.content}")
    clock.advance(hours=1)
"""),
    md("""
## Restart

Close the memory (as when the process ends) and open the folder again. The chat history of Monday
is still there, message for message, and a new session on Tuesday recalls it.
"""),
    code("""
mem.close()
clock.advance(days=1)
mem = Memory(folder, clock=clock)

print([m.content for m in UCMAChatMessageHistory(mem, "monday", user_id="ana").messages])

model = make_model()
chat = make_chain(mem, model)
answer = chat.invoke({"question": "Where does my sister live?"}, {"configurable": {"session_id": "tuesday"}})
print("AI:", answer.content)
"""),
    md("What the model received in its system message (the retriever's context):"),
    code("""
if isinstance(model, RuleModel):
    print(model.prompts[-1][0].content)
"""),
    md("""
## An agent: `create_agent` + `UCMAMiddleware` + memory tools

The middleware recalls before the agent runs and appends the memories to the system message of
each model call (never to the agent's messages), and observes the turn after it. The tools let the
model save and search on purpose; they are bound to Ana, so nothing a model passes reaches another
user's memories.
"""),
    code("""
from langchain.agents import create_agent

from ucma_langchain import UCMAMiddleware, create_memory_tools


def make_agent(mem, model):
    return create_agent(
        model,
        tools=create_memory_tools(mem, user_id="ana"),
        middleware=[UCMAMiddleware(mem, user_id="ana", k=4)],
        system_prompt="You are Ana's assistant.",
    )


model = make_model()
agent = make_agent(mem, model)
tuesday = {"session_id": "tuesday-agent"}  # the run's context: the UCMA session of this conversation
result = agent.invoke({"messages": [("user", "Remember that I'm allergic to peanuts.")]}, context=tuesday)
show_messages(result["messages"])
"""),
    md("Another restart, then a new conversation with the agent:"),
    code("""
mem.close()
clock.advance(days=2)
mem = Memory(folder, clock=clock)

model = make_model()
agent = make_agent(mem, model)
thursday = {"session_id": "thursday-agent"}
question = "I'm cooking for Carla on Saturday: is there any food I'm allergic to?"
result = agent.invoke({"messages": [("user", question)]}, context=thursday)
show_messages(result["messages"])
"""),
    md("The system message the model got — the middleware's block of dated memories, most useful first:"),
    code("""
if isinstance(model, RuleModel):
    print(model.prompts[-1][0].content)
"""),
    code("""
result = agent.invoke({"messages": [("user", "search your memory for the half marathon")]}, context=thursday)
show_messages(result["messages"])
"""),
    md("""
## What the memory holds now

Every user and assistant turn of the chain and the agent, and the memory the tool saved, in Ana's
scope — recallable by any of the adapters, after any restart.
"""),
    code("""
named = {"monday", "tuesday", "tuesday-agent", "thursday-agent"}
# save_memory writes to the session the tools are bound to: here none, so the memory's current
# session (a random id, shown as "current")
table([{"when": datetime.fromtimestamp(r.timestamp, timezone.utc).strftime("%a %H:%M"),
        "session": r.session_id if r.session_id in named else "current",
        "source": getattr(r.source, "value", r.source),
        "content": r.content[:80]}
       for r in mem.list_memories(user_id="ana", newest_first=False)],
      ["when", "session", "source", "content"])
mem.close()
"""),
]
