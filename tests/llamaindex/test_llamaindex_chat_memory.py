"""UCMAChatMemory: LlamaIndex's BaseMemory contract on UCMA, recall, budgets, restarts."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms import MockLLM
from llamaindex_fakes import texts

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_llamaindex import UCMAChatMemory


def user(text: str, **kwargs: object) -> ChatMessage:
    return ChatMessage(role="user", content=text, **kwargs)


def bot(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def test_put_and_get_all_keep_the_session_in_order(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s1")
    chat.put(user("Hi, I'm Ana."))
    chat.put(bot("Hello Ana!"))
    chat.put_messages([user("I live in Lisbon."), bot("Noted.")])
    assert texts(chat.get_all()) == ["Hi, I'm Ana.", "Hello Ana!", "I live in Lisbon.", "Noted."]
    assert [m.role for m in chat.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT] * 2
    assert chat.memory.user_id == "ana" and chat.memory.session_id == "s1"


def test_every_message_is_kept_whatever_its_importance(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s1")
    chat.put_messages([user("ok"), bot("ok"), user("thanks")])
    assert texts(chat.get_all()) == ["ok", "ok", "thanks"]


async def test_async_methods_match_the_sync_ones(mem: Memory) -> None:
    sync = UCMAChatMemory(mem, user_id="ana", session_id="s")
    asyn = UCMAChatMemory(mem, user_id="ben", session_id="s")
    sync.put(user("I have a dog called Rex."))
    await asyn.aput(user("I have a dog called Rex."))
    sync.put_messages([bot("Nice!"), user("What is my dog called?")])
    await asyn.aput_messages([bot("Nice!"), user("What is my dog called?")])
    assert texts(sync.get_all()) == texts(await asyn.aget_all())
    assert texts(sync.get()) == texts(await asyn.aget())
    sync.set([user("reset")])
    await asyn.aset([user("reset")])
    assert texts(sync.get_all()) == texts(await asyn.aget_all()) == ["reset"]
    sync.reset()
    await asyn.areset()
    assert sync.get_all() == [] == await asyn.aget_all()


def test_get_recalls_other_sessions_as_a_system_message_first(mem: Memory) -> None:
    UCMAChatMemory(mem, user_id="ana", session_id="monday").put(user("My sister Marta lives in Porto."))
    chat = UCMAChatMemory(mem, user_id="ana", session_id="tuesday")
    chat.put(user("Where does Marta live?"))
    messages = chat.get()
    assert messages[0].role == MessageRole.SYSTEM
    assert "My sister Marta lives in Porto." in (messages[0].content or "")
    assert texts(messages[1:]) == ["Where does Marta live?"]
    # the explicit input is the query; messages already in the window are not repeated
    assert "Where does Marta live?" not in (chat.get(input="Marta Porto")[0].content or "")


def test_recall_can_be_turned_off_and_reads_no_other_user(mem: Memory) -> None:
    UCMAChatMemory(mem, user_id="ben", session_id="b").put(user("Marta lives in Porto."))
    ana = UCMAChatMemory(mem, user_id="ana", session_id="a")
    ana.put(user("Where does Marta live?"))
    assert [m.role for m in ana.get()] == [MessageRole.USER]
    off = UCMAChatMemory(mem, user_id="ben", session_id="b2", recall_k=0)
    off.put(user("Where does Marta live?"))
    assert [m.role for m in off.get()] == [MessageRole.USER]


def test_token_limit_keeps_the_newest_messages_and_never_starts_with_the_assistant(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s", token_limit=8, recall_k=0)
    # 4 + 4 + 2 + 1 tokens: the first message does not fit, and the window may not open on "five…"
    chat.put_messages(
        [user("one two three four"), bot("five six seven eight"), user("nine ten"), bot("eleven")]
    )
    assert texts(chat.get()) == ["nine ten", "eleven"]
    assert texts(chat.get(initial_token_count=6)) == ["eleven"]
    assert texts(chat.get(initial_token_count=8)) == ["eleven"]  # nothing fits: the newest alone
    with pytest.raises(InvalidInputError, match="exceeds the token limit"):
        chat.get(initial_token_count=9)


def test_a_long_session_is_read_page_by_page(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="long", recall_k=0)
    said = [f"message number {n}" for n in range(150)]
    chat.put_messages([user(t) for t in said])
    assert texts(chat.get()) == said
    small = UCMAChatMemory(mem, user_id="ana", session_id="long", recall_k=0, token_limit=40)
    assert texts(small.get()) == said[-10:]


def test_set_replaces_and_reset_forgets_only_this_session(mem: Memory) -> None:
    other = UCMAChatMemory(mem, user_id="ana", session_id="other")
    other.put(user("keep me"))
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
    chat.put_messages([user("a"), bot("b")])
    chat.set([user("c"), bot("d")])
    assert texts(chat.get_all()) == ["c", "d"]
    chat.reset()
    assert chat.get_all() == []
    assert texts(other.get_all()) == ["keep me"]


def test_a_refused_set_leaves_the_session_as_it_was(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
    chat.put_messages([user("a", additional_kwargs={"message_id": "m1"}), bot("b")])
    before = [r.id for r in chat.memory.history()]
    with pytest.raises(InvalidInputError):
        chat.set([user("c"), "not a message"])  # type: ignore[list-item]
    assert [r.id for r in chat.memory.history()] == before
    chat.set([user("a", additional_kwargs={"message_id": "m1"}), bot("d")])  # m1 is kept as it was
    assert texts(chat.get_all()) == ["a", "d"] and chat.memory.history()[0].id == before[0]


def test_a_message_with_an_id_is_stored_once(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
    message = user("I moved to Lisbon.", additional_kwargs={"message_id": "m1"})
    chat.put(message)
    chat.put(message)
    chat.put_messages([message])
    assert texts(chat.get_all()) == ["I moved to Lisbon."]


def test_bad_input_is_refused_or_skipped_and_nothing_stored_is_lost(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
    chat.put(user("I am allergic to peanuts."))
    chat.put(user(""))  # an empty message: nothing to remember
    chat.put(ChatMessage(role="assistant", blocks=[]))
    with pytest.raises(InvalidInputError):
        chat.put_messages([user("fine"), "not a message"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        chat.put("not a message")  # type: ignore[arg-type]
    assert texts(chat.get_all()) == ["I am allergic to peanuts."]


def tool_round(tool: str) -> list[ChatMessage]:
    call = ToolCallBlock(tool_call_id="c1", tool_name=tool, tool_kwargs={"city": "Porto"})
    return [
        user("What's the weather?"),
        ChatMessage(role="assistant", blocks=[call]),
        ChatMessage(role="tool", content="Sunny.", additional_kwargs={"tool_call_id": "c1"}),
        bot("Sunny in Porto."),
    ]


def test_tool_call_messages_come_back_whole(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s", roles=("user", "assistant", "tool"))
    chat.put_messages(tool_round("weather"))
    _, called, result, _ = chat.get_all()
    assert called.blocks == tool_round("weather")[1].blocks
    assert result.additional_kwargs == {"tool_call_id": "c1"}


def test_tool_results_are_stored_only_when_asked_and_memory_tools_never(mem: Memory) -> None:
    plain = UCMAChatMemory(mem, user_id="ana", session_id="plain")
    plain.put_messages(tool_round("weather"))  # the call and its result go together
    assert texts(plain.get_all()) == ["What's the weather?", "Sunny in Porto."]
    tools = UCMAChatMemory(mem, user_id="ana", session_id="tools", roles=("user", "assistant", "tool"))
    tools.put_messages(tool_round("recall_memory"))  # UCMA's own tool: copies of memories
    assert texts(tools.get_all()) == ["What's the weather?", "Sunny in Porto."]


def test_images_stay_in_this_process_and_leave_their_text_on_disk(folder: Path) -> None:
    image = ImageBlock(url="https://example.com/cat.png")
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
        chat.put(ChatMessage(role="user", blocks=[TextBlock(text="This is my cat Miso"), image]))
        chat.put(ChatMessage(role="user", blocks=[image]))
        assert [m.blocks for m in chat.get_all()] == [[TextBlock(text="This is my cat Miso"), image], [image]]
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
        assert texts(chat.get_all()) == ["This is my cat Miso", "[image]"]


def test_the_session_survives_a_restart(folder: Path) -> None:
    said = [user("I'm Ana."), bot("Hi Ana."), user("My cat is Miso."), bot("Cute!")]
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        UCMAChatMemory(mem, user_id="ana", session_id="s").put_messages(said)
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
        assert texts(chat.get_all()) == texts(said)
        chat.put(user("What is my cat called?"))
        assert "My cat is Miso." in (
            UCMAChatMemory(mem, user_id="ana", session_id="new").get("cat")[0].content or ""
        )


def test_without_a_session_the_memory_s_current_session_is_fixed(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana")
    first = mem.session_id
    chat.put(user("one"))
    mem.new_session()
    chat.put(user("two"))
    assert chat.session_id == first and texts(chat.get_all()) == ["one", "two"]


def test_a_bound_view_gives_the_scope(mem: Memory) -> None:
    chat = UCMAChatMemory(mem.scope(user_id="ana", session_id="s"))
    assert (chat.user_id, chat.session_id) == ("ana", "s")
    with pytest.raises(InvalidInputError, match="contradicts"):
        UCMAChatMemory(mem.scope(user_id="ana"), user_id="ben")


def test_from_defaults_sizes_the_budget_from_the_llm_and_sets_the_history(mem: Memory) -> None:
    chat = UCMAChatMemory.from_defaults(
        memory=mem, llm=MockLLM(), chat_history=[user("hello")], user_id="ana"
    )
    assert chat.token_limit == int(MockLLM().metadata.context_window * 0.75)
    assert texts(chat.get_all()) == ["hello"]
    with pytest.raises(InvalidInputError, match="needs memory"):
        UCMAChatMemory.from_defaults()


def test_configuration_serialises_without_the_memory(mem: Memory) -> None:
    chat = UCMAChatMemory(mem, user_id="ana", session_id="s", token_limit=500)
    data = chat.to_dict()
    assert {k: data[k] for k in ("user_id", "session_id", "token_limit")} == {
        "user_id": "ana",
        "session_id": "s",
        "token_limit": 500,
    }
    assert data["class_name"] == "UCMAChatMemory"


def test_config_with_a_low_importance_threshold_changes_nothing(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.99)) as mem:
        chat = UCMAChatMemory(mem, user_id="ana", session_id="s")
        chat.put(user("hmm"))
        assert texts(chat.get_all()) == ["hmm"]
