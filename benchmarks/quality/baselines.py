"""The two baselines UCMA is measured against: keyword search and dense search.

* :class:`BM25Index` — our own small Okapi BM25 (k1=1.2, b=0.75, Lucene-style idf) over
  lowercase word tokens, English stopwords removed, light suffix stemming. No dependency.
* :class:`DenseIndex` — plain Chroma: an embedded ``PersistentClient`` in a temporary folder,
  one cosine collection created with ``embedding_function=None``, vectors from the embedder
  passed in (``embed(list[str]) -> list[list[float]]``, ``name``, ``dimension``).

Both index turns as ``(turn_id, user_id, text)`` and search only within one user.
:func:`rrf` is the naive reciprocal-rank fusion of several rankings.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

_STOPWORD_TEXT = """
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can can't could did didn't do does doesn't doing don't down during each few
for from further had hadn't has hasn't have haven't having he he'd he's her here here's hers herself him
himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most
my myself no nor not now of off on once only or other ought our ours ourselves out over own same she
she'd she's should so some such than that that's the their theirs them themselves then there there's
these they they'd they'll they're they've this those through to too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why
why's will with won't would you you'd you'll you're you've your yours yourself yourselves s t d ll m re
ve
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


_VOWELS = frozenset("aeiou")


def _cvc(stem: str) -> bool:
    """Consonant-vowel-consonant ending, last not w/x/y (Porter's *o condition)."""
    if len(stem) < 3:
        return False
    a, b, c = stem[-3:]
    return a not in _VOWELS and b in _VOWELS and c not in _VOWELS and c not in "wxy"


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    pattern = "".join(
        "v" if ch in _VOWELS or (ch == "y" and i and stem[i - 1] not in _VOWELS) else "c"
        for i, ch in enumerate(stem)
    )
    return pattern.count("vc")


def stem(word: str) -> str:
    """Light English stemming: plurals, then -ed / -ing with Porter's clean-ups.

    Deliberately small (no derivational suffixes): "moved", "moving" and "move" meet at
    "move"; "tomatoes" and "tomato" at "tomato"; "family" stays "family".
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("shes", "ches", "xes", "zes", "oes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if len(base) < 3 or not any(ch in _VOWELS for ch in base):
                break
            if len(base) >= 2 and base[-1] == base[-2] and base[-1] not in "lsz":
                return base[:-1]
            if _measure(base) == 1 and _cvc(base):
                return base + "e"
            return base
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stopwords, stemmed. Possessive 's is dropped."""
    out = []
    for token in _TOKEN.findall(text.lower().replace("\u2019", "'")):
        if token.endswith("'s"):
            token = token[:-2]
        if token and token not in STOPWORDS:
            out.append(stem(token))
    return out


class BM25Index:
    """Okapi BM25 over turns, one independent index per user (idf and length statistics included)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._docs: dict[str, list[tuple[str, Counter[str], int]]] = defaultdict(list)
        self._stats: dict[str, tuple[dict[str, float], float]] = {}

    def add(self, items: Iterable[tuple[str, str, str]]) -> None:
        """Index ``(turn_id, user_id, text)`` items."""
        for turn_id, user_id, text in items:
            tokens = tokenize(text)
            self._docs[user_id].append((turn_id, Counter(tokens), len(tokens)))
            self._stats.pop(user_id, None)

    def _user_stats(self, user_id: str) -> tuple[dict[str, float], float]:
        if user_id not in self._stats:
            docs = self._docs[user_id]
            df: Counter[str] = Counter()
            for _, tf, _ in docs:
                df.update(tf.keys())
            n = len(docs)
            idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
            avgdl = sum(length for *_, length in docs) / max(n, 1)
            self._stats[user_id] = (idf, avgdl or 1.0)
        return self._stats[user_id]

    def search(self, query: str, user_id: str, k: int = 20) -> list[str]:
        """The ``k`` best turn ids of ``user_id`` for ``query`` (ties keep insertion order)."""
        idf, avgdl = self._user_stats(user_id)
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in idf]
        scored = []
        for order, (turn_id, tf, length) in enumerate(self._docs.get(user_id, ())):
            score = 0.0
            for t in terms:
                f = tf.get(t)
                if f:
                    score += (
                        idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / avgdl))
                    )
            if score > 0:
                scored.append((-score, order, turn_id))
        scored.sort()
        return [turn_id for *_, turn_id in scored[:k]]


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class DenseIndex:
    """Plain Chroma dense search; the caller's embedder computes every vector. ``search_ef``
    at least the number of items makes the search exact (the same answers every run)."""

    def __init__(self, embedder: Embedder, batch_size: int = 256, search_ef: int | None = None) -> None:
        import chromadb
        from chromadb.config import Settings

        self.embedder = embedder
        self.batch_size = batch_size
        self._dir = tempfile.mkdtemp(prefix="ucma-quality-dense-")
        self._client: Any = chromadb.PersistentClient(
            path=self._dir, settings=Settings(anonymized_telemetry=False)
        )
        metadata: dict[str, str | int] = {"hnsw:space": "cosine"}
        if search_ef is not None:
            metadata["hnsw:search_ef"] = search_ef
        self._collection = self._client.create_collection("turns", embedding_function=None, metadata=metadata)

    def add(self, items: Sequence[tuple[str, str, str]]) -> None:
        """Index ``(turn_id, user_id, text)`` items (embedded in batches)."""
        limit = min(self.batch_size, self._client.get_max_batch_size())
        for start in range(0, len(items), limit):
            chunk = items[start : start + limit]
            vectors = self.embedder.embed([text for _, _, text in chunk])
            self._collection.add(
                ids=[tid for tid, _, _ in chunk],
                embeddings=vectors,
                metadatas=[{"user_id": uid} for _, uid, _ in chunk],
            )

    def search(self, query: str, user_id: str, k: int = 20) -> list[str]:
        vector = self.embedder.embed([query])
        found = self._collection.query(
            query_embeddings=vector, n_results=k, where={"user_id": user_id}, include=[]
        )
        return list(found["ids"][0])

    def close(self) -> None:
        self._collection = None
        self._client = None
        shutil.rmtree(self._dir, ignore_errors=True)


def rrf(rankings: Sequence[Sequence[str]], k: int = 20, c: int = 60) -> list[str]:
    """Naive reciprocal-rank fusion: score(d) = sum over rankings of 1 / (c + rank)."""
    scores: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] += 1.0 / (c + rank)
    return sorted(scores, key=lambda item: -scores[item])[:k]
