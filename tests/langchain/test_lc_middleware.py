"""UCMAMiddleware in a real create_agent loop with a scripted tool-calling model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from tests.langchain.lc_fakes import ScriptedChatModel, answer_from_last_tool, call_tool, prompt_text
from ucma_core import Memory
from ucma_core.errors import InvalidInputError
from ucma_langchain import UCMAMiddleware, create_memory_tools

FACT = "My sister Carla lives in Porto and works as a nurse."


def agent_for(mem: Memory, model: ScriptedChatModel, middleware: UCMAMiddleware, **options: Any) -> Any:
    return create_agent(
        model, tools=create_memory_tools(mem, user_id="ana"), middleware=[middleware], **options
    )


def stored(mem: Memory, user: str | None = "ana") -> list[tuple[str, str]]:
    records = mem.list_memories(user_id=user, newest_first=False)
    return [(r.source, r.content) for r in records]


def test_recalls_into_the_prompt_not_into_the_history(keep_all: Memory) -> None:
    keep_all.observe(FACT, user_id="ana", session_id="last-week")
    model = ScriptedChatModel(script=["She lives in Porto."])
    agent = agent_for(keep_all, model, UCMAMiddleware(keep_all, user_id="ana"), system_prompt="Be brief.")
    out = agent.invoke({"messages": [HumanMessage("Where does my sister live?")]})
    system = model.prompts[0][0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("Be brief.\n\nRelevant memories:")
    assert FACT in system.text
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert all(FACT not in m.text for m in out["messages"])
    assert "ucma_recalled" not in out


def test_observes_each_new_message_once(keep_all: Memory) -> None:
    model = ScriptedChatModel(script=["Noted.", "It is Porto."])
    agent = agent_for(keep_all, model, UCMAMiddleware(keep_all, user_id="ana"))
    first = agent.invoke({"messages": [HumanMessage(FACT)]})
    # no checkpointer: the caller passes the conversation back, with the ids the agent gave it
    agent.invoke({"messages": [*first["messages"], HumanMessage("Which city again?")]})
    assert stored(keep_all) == [
        ("user", FACT),
        ("assistant", "Noted."),
        ("user", "Which city again?"),
        ("assistant", "It is Porto."),
    ]


def test_with_a_checkpointer_the_thread_is_the_session(keep_all: Memory) -> None:
    model = ScriptedChatModel(script=["Noted.", "Porto."])
    agent = agent_for(keep_all, model, UCMAMiddleware(keep_all, user_id="ana"), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "thread-7"}}
    agent.invoke({"messages": [HumanMessage(FACT)]}, config)
    agent.invoke({"messages": [HumanMessage("Which city?")]}, config)
    turns = keep_all.history(user_id="ana", session_id="thread-7")
    assert [e.content for e in turns] == [FACT, "Noted.", "Which city?", "Porto."]
    # the second model call saw the first turn in its messages, and not again as a memory
    assert prompt_text(model.prompts[1]).count(FACT) == 1


@pytest.mark.parametrize("roles", [("user", "assistant"), ("user", "assistant", "tool")])
def test_tools_run_and_memory_tool_traffic_is_not_observed(keep_all: Memory, roles: tuple[str, ...]) -> None:
    keep_all.observe(FACT, user_id="ana", session_id="last-week")

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}."

    model = ScriptedChatModel(
        script=[
            call_tool("recall_memory", {"query": "sister"}),
            call_tool("weather", {"city": "Porto"}, "call-2"),
            answer_from_last_tool,
        ]
    )
    agent = create_agent(
        model,
        tools=[*create_memory_tools(keep_all, user_id="ana"), weather],
        middleware=[UCMAMiddleware(keep_all, user_id="ana", roles=roles)],
    )
    out = agent.invoke({"messages": [HumanMessage("What's the weather where my sister lives?")]})
    recall_result = next(
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "recall_memory"
    )
    assert "Porto" in recall_result.text
    assert out["messages"][-1].text == "From memory: Sunny in Porto."
    with_tools = [
        ("user", "What's the weather where my sister lives?"),
        ("assistant", 'Called tool weather with {"city": "Porto"}'),
        ("tool", "Sunny in Porto."),
        ("assistant", "From memory: Sunny in Porto."),
    ]
    # tool results (and the calls they answer) are stored only when asked for
    expected = with_tools if "tool" in roles else [with_tools[0], with_tools[-1]]
    assert stored(keep_all)[1:] == expected


def test_scope_from_the_run_context(keep_all: Memory) -> None:
    keep_all.observe("Ben's dog is called Rex.", user_id="ben")
    keep_all.observe(FACT, user_id="ana")
    model = ScriptedChatModel(script=["ok"])
    agent = create_agent(model, middleware=[UCMAMiddleware(keep_all)])
    context = {"user_id": "ben", "session_id": "chat-9"}
    agent.invoke({"messages": [HumanMessage("What is my dog called?")]}, context=context)
    assert "Rex" in prompt_text(model.prompts[0]) and "Carla" not in prompt_text(model.prompts[0])
    assert [e.content for e in keep_all.history(user_id="ben", session_id="chat-9")] == [
        "What is my dog called?",
        "ok",
    ]

    fixed = create_agent(model, middleware=[UCMAMiddleware(keep_all, user_id="ana")])
    with pytest.raises(InvalidInputError, match="contradicts"):
        fixed.invoke({"messages": [HumanMessage("hi")]}, context={"user_id": "ben"})


def test_content_blocks_and_empty_messages(keep_all: Memory) -> None:
    model = ScriptedChatModel(script=[AIMessage(""), "A red tram."])
    agent = create_agent(model, middleware=[UCMAMiddleware(keep_all, user_id="ana")])
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    agent.invoke({"messages": [HumanMessage([{"type": "text", "text": "What is in this photo?"}, image])]})
    assert stored(keep_all) == [("user", "What is in this photo?")]  # the image and the empty answer are not
    episode = keep_all.list_memories(user_id="ana")[0]
    assert episode.metadata["extra"] == {"omitted_blocks": ["image_url"]}


def test_consolidation_every_n_turns(keep_all: Memory) -> None:
    middleware = UCMAMiddleware(keep_all, user_id="ana", consolidate_every=2)
    agent = create_agent(ScriptedChatModel(script=["ok"]), middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("turn one")]})
    assert middleware.last_consolidation is None
    agent.invoke({"messages": [HumanMessage("turn two")]})
    assert middleware.last_consolidation is not None


def test_consolidation_in_the_background(keep_all: Memory) -> None:
    middleware = UCMAMiddleware(keep_all, user_id="ana", consolidate_every=1, consolidate_in_background=True)
    agent = create_agent(ScriptedChatModel(script=["ok"]), middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("turn one")]})
    assert middleware.wait_for_consolidation(timeout=30)
    assert middleware.last_consolidation is not None


async def test_async_agent(keep_all: Memory) -> None:
    keep_all.observe(FACT, user_id="ana", session_id="last-week")
    model = ScriptedChatModel(script=["Porto."])
    agent = agent_for(keep_all, model, UCMAMiddleware(keep_all, user_id="ana", consolidate_every=1))
    await agent.ainvoke({"messages": [HumanMessage("Where does my sister live?")]})
    assert FACT in prompt_text(model.prompts[0])
    assert ("assistant", "Porto.") in stored(keep_all)


def test_bad_arguments(keep_all: Memory) -> None:
    with pytest.raises(InvalidInputError, match="Memory or a view"):
        UCMAMiddleware("not a memory")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must be"):
        UCMAMiddleware(keep_all, k=0)
    with pytest.raises(InvalidInputError, match="consolidate_every"):
        UCMAMiddleware(keep_all, consolidate_every=0)
    with pytest.raises(InvalidInputError, match="user_id"):
        UCMAMiddleware(keep_all, user_id="")


def test_a_bound_view_fixes_the_user(keep_all: Memory) -> None:
    keep_all.observe(FACT, user_id="ana")
    keep_all.observe("Ben's dog is called Rex.", user_id="ben")
    model = ScriptedChatModel(script=["ok"])
    agent = create_agent(model, middleware=[UCMAMiddleware(keep_all.scope(user_id="ana"))])
    agent.invoke(
        {"messages": [HumanMessage("Tell me about my sister and the dog")]}, context={"session_id": "s2"}
    )
    assert "Carla" in prompt_text(model.prompts[0]) and "Rex" not in prompt_text(model.prompts[0])
    assert keep_all.history(user_id="ana", session_id="s2")[0].content.startswith("Tell me")
    with pytest.raises(InvalidInputError, match="contradicts"):
        agent.invoke({"messages": [HumanMessage("hi")]}, context={"user_id": "ben"})
