"""Bad input raises our errors and leaves what is stored intact."""

from __future__ import annotations

import math

import pytest

from ucma_core import Memory
from ucma_core.errors import (
    ClosedMemoryError,
    ConfigurationError,
    InvalidInputError,
    UCMAError,
    UnknownMemoryTypeError,
)


@pytest.fixture
def stored(mem: Memory) -> tuple[Memory, str]:
    memory_id = mem.observe("Ana keeps her bike in the garage", user_id="ana", importance=0.9)
    assert memory_id is not None
    return mem, memory_id


def _intact(mem: Memory, memory_id: str) -> None:
    assert mem.get(memory_id) is not None
    assert mem.stats()["memories"] == 1
    assert mem.remember("where is the bike", user_id="ana")[0].id == memory_id


@pytest.mark.parametrize(
    "content",
    ["", "   \n\t", None, 42, b"bytes", ["a list"], "x" * 100_001, "nul\x00byte"],
)
def test_bad_content_is_rejected(stored: tuple[Memory, str], content: object) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.observe(content, user_id="ana")  # type: ignore[arg-type]
    _intact(mem, memory_id)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"source": "alien"},
        {"user_id": 7},
        {"user_id": ""},
        {"session_id": "x" * 300},
        {"timestamp": "yesterday"},
        {"timestamp": math.nan},
        {"timestamp": math.inf},
        {"metadata": {"when": object()}},
        {"metadata": {"t": (1, 2)}},
        {"metadata": {1: "int key"}},
        {"metadata": {"x": math.nan}},
        {"metadata": "not a dict"},
        {"tags": [1, 2]},
        {"tags": [""]},
        {"importance": 1.5},
        {"importance": math.nan},
        {"importance": True},
    ],
)
def test_bad_observe_arguments_are_rejected(stored: tuple[Memory, str], kwargs: dict) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.observe("A perfectly fine sentence about Ana", **kwargs)
    _intact(mem, memory_id)


def test_one_bad_item_in_a_batch_stores_nothing(stored: tuple[Memory, str]) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.observe_many(["Ana likes tea with Marta", {"content": "", "user_id": "ana"}], user_id="ana")
    with pytest.raises(InvalidInputError):
        mem.observe_many([{"content": "x", "colour": "red"}])
    with pytest.raises(InvalidInputError):
        mem.observe_many(["fine"], colour="red")
    _intact(mem, memory_id)


@pytest.mark.parametrize("confidence", [math.nan, -0.1, 1.1, math.inf, "high", None])
def test_nan_or_out_of_range_confidence_is_rejected(stored: tuple[Memory, str], confidence: object) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.assert_fact("Ana", "likes", "tea", confidence=confidence, user_id="ana")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        mem.learn("tea helps", confidence=confidence)  # type: ignore[arg-type]
    _intact(mem, memory_id)


def test_unknown_memory_type_is_rejected(stored: tuple[Memory, str]) -> None:
    mem, memory_id = stored
    with pytest.raises(UnknownMemoryTypeError, match="expected one of"):
        mem.remember("bike", user_id="ana", memory_types=["dreams"])
    with pytest.raises(UnknownMemoryTypeError):
        mem.remember("bike", user_id="ana", memory_types=[3])  # type: ignore[list-item]
    _intact(mem, memory_id)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0},
        {"k": -1},
        {"k": 1.5},
        {"k": True},
        {"time_range": (5, 1)},
        {"time_range": (1,)},
        {"tags": "x" * 500},
        {"now": "today"},
    ],
)
def test_bad_remember_arguments_are_rejected(stored: tuple[Memory, str], kwargs: dict) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.remember("bike", user_id="ana", **kwargs)
    with pytest.raises(InvalidInputError):
        mem.remember("", user_id="ana")
    _intact(mem, memory_id)


def test_bad_procedure_learning_intention_arguments(stored: tuple[Memory, str]) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError):
        mem.add_procedure("deploy", [])
    with pytest.raises(InvalidInputError):
        mem.add_procedure("deploy", "one string, not a list")
    with pytest.raises(InvalidInputError):
        mem.add_procedure("deploy", ["a"], status="retired")
    with pytest.raises(InvalidInputError):
        mem.intend("call mum", [])
    with pytest.raises(InvalidInputError):
        mem.record_outcome(memory_id, "yes")  # type: ignore[arg-type]
    _intact(mem, memory_id)


def test_errors_share_one_root_and_builtin_bases() -> None:
    assert issubclass(InvalidInputError, ValueError) and issubclass(InvalidInputError, UCMAError)
    assert issubclass(ConfigurationError, ValueError)


def test_bad_config_is_a_configuration_error() -> None:
    from ucma_core import MemoryConfig, RankingConfig

    with pytest.raises(ConfigurationError):
        MemoryConfig(importance_threshold=2.0)
    with pytest.raises(ConfigurationError):
        RankingConfig(relevance=math.nan)
    with pytest.raises(ConfigurationError):
        MemoryConfig(sensory_ttl_seconds=math.inf)


def test_closed_memory_refuses_work(folder, clock) -> None:
    from ucma_core.embedders import HashingEmbedder

    m = Memory(folder, embedder=HashingEmbedder(), clock=clock)
    m.close()
    m.close()  # idempotent
    with pytest.raises(ClosedMemoryError):
        m.observe("after close")


def test_provider_without_score_importance_is_rejected(folder) -> None:
    from ucma_core.embedders import HashingEmbedder

    with pytest.raises(InvalidInputError):
        Memory(folder, embedder=HashingEmbedder(), provider=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        Memory(folder, embedder=object())  # type: ignore[arg-type]
