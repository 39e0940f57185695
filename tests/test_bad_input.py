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


# ---------------------------------------------------------------------------------------------
# Limits and hostile values (see LimitsConfig)
# ---------------------------------------------------------------------------------------------


def _deep(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metadata": _deep(100_000)}, "nested more than 32"),
        ({"metadata": {"blob": "a" * 1_100_000}}, "max_metadata_bytes"),
        ({"metadata": {f"k{i}": i for i in range(300)}}, "max_metadata_keys"),
        ({"metadata": {"k": "\ud800"}}, "not valid Unicode"),
        ({"tags": [f"t{i}" for i in range(65)]}, "more than 64"),
        ({"participants": [f"p{i}" for i in range(65)]}, "more than 64"),
        ({"tags": ["\udfff"]}, "not valid Unicode"),
        ({"participants": ["a\ud800"]}, "not valid Unicode"),
        ({"tags": ["a\x00b"]}, "NUL"),
        ({"user_id": "a\x00b"}, "NUL"),
        ({"session_id": "\ud800"}, "not valid Unicode"),
        ({"timestamp": 1_750_000_000_000}, "milliseconds"),
        ({"timestamp": 10**400}, "out of range"),
        ({"timestamp": -1e15}, "before the year 1"),
        ({"importance": 10**400}, "finite"),
    ],
)
def test_limits_and_hostile_values_are_clear_errors(
    stored: tuple[Memory, str], kwargs: dict, message: str
) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError, match=message):
        mem.observe("A perfectly fine sentence about Ana", **{"user_id": "ana", **kwargs})
    _intact(mem, memory_id)


def test_limits_can_be_raised(folder, clock) -> None:
    from ucma_core import MemoryConfig
    from ucma_core.config import LimitsConfig
    from ucma_core.embedders import HashingEmbedder

    config = MemoryConfig(limits=LimitsConfig(max_tags=200, max_metadata_depth=100))
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        memory_id = mem.observe(
            "many tags", tags=[f"t{i}" for i in range(150)], metadata=_deep(90), keep=True
        )
        assert len(mem.get(memory_id).tags) == 150  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        LimitsConfig(max_tags=0)


def test_hostile_values_in_facts_intentions_and_reads(stored: tuple[Memory, str]) -> None:
    mem, memory_id = stored
    with pytest.raises(InvalidInputError, match="Unicode"):
        mem.assert_fact("Ana\ud800", "likes", "tea", user_id="ana")
    with pytest.raises(InvalidInputError, match="more than 32"):
        mem.intend("call mum", [f"phrase {i}" for i in range(10_000)])
    with pytest.raises(InvalidInputError, match="year 5138"):
        mem.remember("bike", user_id="ana", now=1e300)
    with pytest.raises(InvalidInputError, match="milliseconds"):
        mem.remember("bike", user_id="ana", time_range=(0, 1_750_000_000_000))
    with pytest.raises(InvalidInputError):
        mem.remember("bike", user_id="ana", memory_types=b"episodic")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="list"):
        mem.observe_many("hello")  # type: ignore[arg-type]
    assert mem.get("abc\x00") is None
    assert mem.remember("bike", user_id="ana", memory_types="episodic")[0].id == memory_id
    _intact(mem, memory_id)


def test_observe_many_batches_past_chromas_batch_limit(folder, clock) -> None:
    from ucma_core import LimitsConfig, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    # batches of 7 take the code path Chroma's own limit (~5,000) takes
    config = MemoryConfig(limits=LimitsConfig(chroma_batch_size=7))
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        ids = mem.observe_many([f"bulk item {i}" for i in range(40)], keep=True)
        assert len(set(ids)) == 40 and mem.verify().ok and mem.verify().chroma_records == 40
        assert mem.forget_session(mem.session_id) == 40
        assert mem.verify().chroma_records == 0


def test_empty_path_and_folder_of_other_files_are_refused(tmp_path) -> None:
    from ucma_core.embedders import HashingEmbedder

    with pytest.raises(InvalidInputError, match="empty"):
        Memory("", embedder=HashingEmbedder())
    with pytest.raises(InvalidInputError):
        Memory(None, embedder=HashingEmbedder())  # type: ignore[arg-type]
    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    with pytest.raises(ConfigurationError, match="not a UCMA memory folder"):
        Memory(tmp_path, embedder=HashingEmbedder())
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


def test_a_custom_embedder_left_out_is_an_embedder_mismatch(folder) -> None:
    from ucma_core.errors import EmbedderMismatchError

    class Custom:
        name = "my-embedder"
        dimension = 4

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0, 0.0, float(len(t))] for t in texts]

    Memory(folder, embedder=Custom()).close()
    with pytest.raises(EmbedderMismatchError, match="my-embedder"):
        Memory(folder)


def test_close_racing_consolidate_raises_only_ucma_errors(keep_all: Memory) -> None:
    import threading

    for s in range(4):
        keep_all.observe_many(
            [f"session {s} turn {i}: plans for step {i}" for i in range(12)], session_id=f"s{s}"
        )
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(5):
                keep_all.consolidate()
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    keep_all.close()
    thread.join(30)
    assert not thread.is_alive()
    assert all(isinstance(e, ClosedMemoryError) for e in errors), errors
