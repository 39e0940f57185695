"""One typed configuration object, built explicitly and passed down.

Nothing here reads the environment. Every number that shapes behaviour lives in
:class:`MemoryConfig`; groups that belong together are nested dataclasses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ucma_core.errors import ConfigurationError
from ucma_core.timezones import zone

__all__ = [
    "ChromaConfig",
    "ConsolidationConfig",
    "ForgettingConfig",
    "FusionConfig",
    "GraphConfig",
    "GroupCommitConfig",
    "LimitsConfig",
    "MemoryConfig",
    "RankingConfig",
    "RetentionConfig",
    "WorkingMemoryConfig",
]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigurationError(message)


@dataclass(frozen=True)
class ChromaConfig:
    """Where vectors live.

    With ``host`` unset the embedded ``PersistentClient`` writes into the memory
    folder; with ``host`` set a Chroma server (``chroma run``) is used through
    ``HttpClient`` and the folder keeps the graph, journal, keyword index and
    manifest. The collection name is recorded in the folder when it is created.
    """

    host: str | None = None
    port: int = 8000
    ssl: bool = False
    #: Collection name; by default each memory folder gets its own (``ucma-<folder id>``).
    collection: str | None = None
    #: Chroma's HNSW ``search_ef`` for collections this creates (``None``: Chroma's default,
    #: 100). At least the number of records makes a search exact, and so reproducible from
    #: one build of the index to the next (Chroma builds it in parallel); higher is slower.
    search_ef: int | None = None

    def __post_init__(self) -> None:
        _require(0 < self.port < 65536, f"chroma port must be 1..65535, got {self.port}")
        _require(self.search_ef is None or self.search_ef >= 1, "chroma search_ef must be >= 1")
        if self.collection is not None:
            _require(3 <= len(self.collection) <= 512, "chroma collection name must be 3..512 characters")


@dataclass(frozen=True)
class RetentionConfig:
    """Ebbinghaus retention: R = exp(-t / S), t and S in days."""

    initial_stability_days: float = 7.0
    #: Stability added per reinforcement, multiplied by the spacing factor.
    stability_boost: float = 0.5
    #: Cap on the spacing factor (days since last review) so one late review cannot
    #: make a memory permanent.
    max_spacing_factor: float = 30.0
    #: Importance adds ``importance * importance_stability_bonus`` days of initial stability.
    importance_stability_bonus: float = 30.0
    #: Seconds a memory folder waits, after the first access mark ``remember`` queued, before
    #: a background thread writes the queued marks (see :mod:`ucma_core.stores.accessmarks`).
    #: Any other call, ``close()`` and the interpreter's exit write them sooner; a crash
    #: loses at most this many seconds of marks.
    access_mark_delay_seconds: float = 0.5

    def __post_init__(self) -> None:
        _require(self.initial_stability_days > 0, "initial_stability_days must be > 0")
        _require(self.stability_boost >= 0, "stability_boost must be >= 0")
        _require(self.max_spacing_factor >= 1, "max_spacing_factor must be >= 1")
        _require(self.importance_stability_bonus >= 0, "importance_stability_bonus must be >= 0")
        _require(
            math.isfinite(self.access_mark_delay_seconds) and self.access_mark_delay_seconds >= 0,
            "access_mark_delay_seconds must be a finite number of seconds >= 0",
        )


@dataclass(frozen=True)
class RankingConfig:
    """Weights of the multi-factor rank (relevance, importance, recency, retention)."""

    relevance: float = 0.85
    importance: float = 0.15
    recency: float = 0.05
    retention: float = 0.05
    recency_half_life_days: float = 7.0
    #: Score multiplier for generated memories (assistant, system, consolidation output),
    #: so observed evidence ranks first when both match.
    generated_weight: float = 0.9
    #: Score multiplier for a memory the sleep cycle marked as revised by a later turn or as
    #: an answered question, and, for a first-person question, for one only about other
    #: people (see :mod:`ucma_core.retrieval.markers`); 1.0 turns this off.
    demoted_weight: float = 0.5

    def __post_init__(self) -> None:
        weights = (self.relevance, self.importance, self.recency, self.retention)
        _require(all(w >= 0 and math.isfinite(w) for w in weights), "ranking weights must be finite and >= 0")
        _require(sum(weights) > 0, "at least one ranking weight must be > 0")
        _require(self.recency_half_life_days > 0, "recency_half_life_days must be > 0")
        _require(0.0 <= self.generated_weight <= 1.0, "generated_weight must be in [0, 1]")
        _require(0.0 <= self.demoted_weight <= 1.0, "demoted_weight must be in [0, 1]")


@dataclass(frozen=True)
class FusionConfig:
    """How :meth:`~ucma_core.Memory.remember` combines its signals into one relevance.

    Dense and keyword scores are calibrated per query (keyword divided by the best
    score among the candidates; dense spread between the ``dense_floor`` quantile of
    the candidates' similarities and the best, so short generic texts do not tie with
    a specific match) and summed with these weights; the structured signals (entity
    match, the speaker, the routed kind, graph activation, ``context`` from the session
    turn a candidate answers, ``hop`` for memories naming someone the best matches
    name) add their weight when they apply. The sum is divided by the weights of the
    signals in play, so relevance stays in [0, 1]. ``rank_fusion`` blends in that share
    of reciprocal-rank fusion of the dense and keyword rankings.

    Time is evidence, not a filter: a memory that fits the time the question names (by
    its timestamp, graded at the range's edges, or by what its own text says) has its
    relevance lifted up to ``1 + time`` times that of one that does not; for vague
    recency ("lately", "these days") the newest matching memories are lifted up to
    ``1 + recency`` times. Defaults were tuned on the conversation benchmark in
    ``benchmarks/quality``.
    """

    dense: float = 1.0
    keyword: float = 0.5
    entity: float = 0.4
    time: float = 1.5
    recency: float = 1.0
    speaker: float = 0.6
    kind: float = 0.4
    graph: float = 0.1
    context: float = 0.6
    hop: float = 0.3
    #: Quantile of the candidates' dense similarities that calibrates to 0 (0: divide by the best).
    dense_floor: float = 0.25
    #: Share of reciprocal-rank fusion of the dense and keyword rankings in relevance (0..1).
    rank_fusion: float = 0.3
    #: Candidates each source contributes per requested result (at least ``min_candidates``).
    candidates_per_result: int = 2
    min_candidates: int = 20
    #: Top fused candidates whose graph neighbours are pulled in.
    graph_seeds: int = 5
    #: Top fused candidates whose replies (and the turns they answer) get context evidence.
    context_seeds: int = 5
    #: Context evidence for the session turns next to the event a "before / after <event>"
    #: question names (halved per turn away), and how many turns on each side get it.
    event: float = 0.85
    event_window: int = 2
    #: Session turns on each side carried with each result as ``RetrievalResult.context``
    #: for a reader (0: none; reading them costs about a millisecond per call).
    context_turns: int = 0
    #: Top fused candidates whose names are searched for more memories (0 turns the hop off).
    hop_seeds: int = 3
    #: Top fused candidates whose text is read for the times it mentions.
    read_candidates: int = 30
    #: MMR trade-off between relevance and novelty (1.0 turns diversification off).
    mmr_lambda: float = 0.9
    #: Cosine similarity above which a lower-ranked candidate counts as a duplicate and is dropped.
    duplicate_similarity: float = 0.98

    def __post_init__(self) -> None:
        weights = (
            self.dense, self.keyword, self.entity, self.time, self.recency, self.speaker, self.kind,
            self.graph, self.context, self.hop, self.event,
        )  # fmt: skip
        _require(all(w >= 0 and math.isfinite(w) for w in weights), "fusion weights must be finite and >= 0")
        _require(self.dense + self.keyword > 0, "dense or keyword weight must be > 0")
        _require(
            self.candidates_per_result >= 1 and self.min_candidates >= 1, "candidate counts must be >= 1"
        )
        counts = (
            "graph_seeds",
            "context_seeds",
            "event_window",
            "context_turns",
            "hop_seeds",
            "read_candidates",
        )
        for name in counts:
            _require(getattr(self, name) >= 0, f"{name} must be >= 0")
        _require(0.0 <= self.dense_floor < 1.0, "dense_floor must be in [0, 1)")
        _require(0.0 <= self.rank_fusion <= 1.0, "rank_fusion must be in [0, 1]")
        _require(0.0 <= self.mmr_lambda <= 1.0, "mmr_lambda must be in [0, 1]")
        _require(0.0 < self.duplicate_similarity <= 1.0, "duplicate_similarity must be in (0, 1]")


@dataclass(frozen=True)
class GraphConfig:
    """Memory-graph limits (bounded neighbour expansion, PageRank)."""

    max_hops: int = 2
    max_nodes: int = 50
    max_fanout: int = 10
    min_edge_weight: float = 0.1
    pagerank_damping: float = 0.85

    def __post_init__(self) -> None:
        _require(self.max_hops >= 0, "max_hops must be >= 0")
        _require(self.max_nodes >= 1, "max_nodes must be >= 1")
        _require(self.max_fanout >= 1, "max_fanout must be >= 1")
        _require(0 < self.pagerank_damping < 1, "pagerank_damping must be in (0, 1)")


@dataclass(frozen=True)
class ForgettingConfig:
    """When the forgetting engine lets a memory go.

    A memory goes when its retention falls below ``retention_threshold`` unless it is
    protected:

    * pinned (:meth:`~ucma_core.Memory.pin`);
    * part of the user's profile: a fact learned about the user, or about a person the
      user named as a relation ("my sister Marta"), with a confidence of at least
      ``profile_confidence`` (facts carry ``about`` = ``"user"`` / ``"relation"`` once the
      sleep cycle learned them);
    * central in the graph (PageRank at least ``pagerank_protection`` times that of the
      average node) or important (``importance >= importance_protection``), unless it is a
      turn a later one revised (``revised_by``, set when the correction is observed or by
      the sleep cycle);
    * an active procedure with a success rate above ``procedure_success_protection``, a
      validated learning, or an intention that is not resolved yet.

    Learned knowledge — facts, procedures and lessons — fades ``knowledge_decay_factor``
    times slower than episodes (its stability counts that many times over), and a fact's
    threshold scales with its doubt: ``retention_threshold × (1.5 − confidence)``, so
    confident facts last longer and doubtful ones go sooner. Episodes fade; what was
    learned from them stays.
    """

    retention_threshold: float = 0.1
    pagerank_protection: float = 3.0
    importance_protection: float = 0.9
    procedure_success_protection: float = 0.5
    #: Facts about the user (and their relations) at this confidence or more are never forgotten.
    profile_confidence: float = 0.6
    #: How many times slower learned facts, procedures and lessons fade than episodes.
    knowledge_decay_factor: float = 8.0

    def __post_init__(self) -> None:
        _require(0.0 < self.retention_threshold < 1.0, "retention_threshold must be in (0, 1)")
        _require(self.pagerank_protection >= 1.0, "pagerank_protection must be >= 1 (the average node)")
        for name in ("importance_protection", "procedure_success_protection", "profile_confidence"):
            _require(0.0 <= getattr(self, name) <= 1.0, f"{name} must be in [0, 1]")
        _require(
            math.isfinite(self.knowledge_decay_factor) and self.knowledge_decay_factor >= 1.0,
            "knowledge_decay_factor must be >= 1 (1: knowledge fades like episodes)",
        )


@dataclass(frozen=True)
class ConsolidationConfig:
    """The sleep cycle.

    Short-term episodes older than ``MemoryConfig.short_term_ttl_hours`` are
    compressed into the medium-term tier; the importance they need to keep their
    stability is ``compression_importance_base`` plus up to
    ``compression_volume_penalty`` when many expire at once (``volume_reference``
    expiring together gives the full penalty). Episodes of a session are grouped,
    ``group_size`` at a time (at least ``min_group`` once the session is quiet for
    ``group_after_hours``), into consolidated episodes that link to the originals.
    Pairs at cosine ``duplicate_similarity`` or more are merged; pairs at
    ``similar_similarity`` or more get a ``similar_to`` edge.
    """

    compression_importance_base: float = 0.3
    compression_volume_penalty: float = 0.4
    volume_reference: int = 500
    summary_words: int = 60
    group_size: int = 10
    min_group: int = 3
    group_after_hours: float = 1.0
    duplicate_similarity: float = 0.97
    similar_similarity: float = 0.85
    batch_size: int = 32
    #: Working-memory items move to long-term memory after this many reads, this long
    #: in working memory, at this importance, or when their zone is this full.
    transition_access_count: int = 5
    transition_age_hours: float = 24.0
    transition_importance: float = 0.7
    transition_capacity: float = 0.8

    def __post_init__(self) -> None:
        _require(
            0.0 <= self.compression_importance_base <= 1.0, "compression_importance_base must be in [0, 1]"
        )
        _require(
            0.0 <= self.compression_volume_penalty <= 1.0, "compression_volume_penalty must be in [0, 1]"
        )
        _require(
            self.volume_reference >= 1 and self.summary_words >= 5, "volume_reference/summary_words too small"
        )
        _require(2 <= self.min_group <= self.group_size, "need 2 <= min_group <= group_size")
        _require(
            0.0 < self.similar_similarity <= self.duplicate_similarity <= 1.0,
            "need 0 < similar_similarity <= duplicate_similarity <= 1",
        )
        _require(self.batch_size >= 1 and self.transition_access_count >= 1, "batch sizes must be >= 1")
        _require(0.0 < self.transition_capacity <= 1.0, "transition_capacity must be in (0, 1]")


@dataclass(frozen=True)
class WorkingMemoryConfig:
    """Token budgets of the working-memory zones and the tokenizer that counts them."""

    system_tokens: int = 2048
    active_tokens: int = 6144
    staging_tokens: int = 1024
    encoding: str = "cl100k_base"
    max_task_slots: int = 20

    def __post_init__(self) -> None:
        for name in ("system_tokens", "active_tokens", "staging_tokens", "max_task_slots"):
            _require(getattr(self, name) >= 1, f"{name} must be >= 1")


@dataclass(frozen=True)
class LimitsConfig:
    """Input limits and storage safeguards; every limit raises ``InvalidInputError`` saying
    which one was hit (raise it here to accept more).

    Tags, participant names and top-level scalar metadata keys each become a
    permanent key in Chroma's collection schema, so their number per memory is
    capped; trigger phrases are matched against every observation, so their
    number per intention is capped.
    """

    #: JSON-encoded size of one memory's ``metadata``.
    max_metadata_bytes: int = 1_000_000
    #: Top-level keys of one memory's ``metadata``.
    max_metadata_keys: int = 256
    #: Nesting depth of ``metadata`` (dicts and lists inside each other).
    max_metadata_depth: int = 32
    #: Tags (also procedure trigger tags and learning applicability) per memory.
    max_tags: int = 64
    #: Participant names per episode.
    max_participants: int = 64
    #: Trigger phrases per intention.
    max_triggers: int = 32
    #: Items per ``observe_many`` call (they are written to Chroma in batches of its own limit).
    max_batch_items: int = 100_000
    #: Most records sent to Chroma in one call (lowered to Chroma's own limit when that is smaller).
    chroma_batch_size: int = 5000
    #: Seconds one call into Chroma may take before it is abandoned with a ``StorageError``
    #: (a full disk can make Chroma wait forever).
    chroma_timeout_seconds: float = 120.0
    #: Writes are refused with ``DiskFullError`` when the volume holding the folder has less
    #: free space than this (Chroma misbehaves when space runs out in the middle of a write).
    min_free_bytes: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in (
            "max_metadata_bytes",
            "max_metadata_keys",
            "max_metadata_depth",
            "max_tags",
            "max_participants",
            "max_triggers",
            "max_batch_items",
            "chroma_batch_size",
        ):
            value = getattr(self, name)
            _require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1, f"{name} must be >= 1"
            )
        _require(
            math.isfinite(self.chroma_timeout_seconds) and self.chroma_timeout_seconds > 0,
            "chroma_timeout_seconds must be > 0",
        )
        _require(self.min_free_bytes >= 0, "min_free_bytes must be >= 0")


@dataclass(frozen=True)
class GroupCommitConfig:
    """Group commit for vectors in a memory folder (see :mod:`ucma_core.storage.pending`).

    A write of at most ``batch_size`` new records (one ``observe``, a small
    ``observe_many``, a fact) is acknowledged once it is durable in the folder's journal
    and visible to every read; a writer thread then adds the waiting records to Chroma,
    up to ``batch_size`` per call, as soon as that many wait or ``interval_seconds``
    after the oldest arrived. Larger writes go to Chroma at once, as before.
    ``Memory.flush()`` and ``Memory.close()`` wait until Chroma has them all. A memory
    in PostgreSQL does not use this: its new vectors wait in its ``pending`` table for a
    background thread of the worker (see :mod:`ucma_core.storage.postgres.backend`).
    """

    #: Off: every write waits for Chroma (the behaviour before group commit).
    enabled: bool = True
    #: Most records per Chroma write, and how many waiting records start one at once.
    batch_size: int = 64
    #: Longest a record waits for its Chroma write when fewer than ``batch_size`` wait.
    #: A Chroma write costs milliseconds of CPU (holding the GIL) whatever its size, so a
    #: writer of one record at a time (a Store ``put``, an ``observe`` per turn) pays less
    #: the more records one write carries: 0.25 s groups about five times more than 0.05.
    interval_seconds: float = 0.25
    #: Writes wait (back pressure) while this many records wait for Chroma; when Chroma
    #: keeps failing they are refused with its error instead.
    max_pending: int = 10_000

    def __post_init__(self) -> None:
        for name in ("batch_size", "max_pending"):
            value = getattr(self, name)
            _require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1, f"{name} must be >= 1"
            )
        _require(
            math.isfinite(self.interval_seconds) and 0 < self.interval_seconds <= 60,
            "interval_seconds must be in (0, 60]",
        )


@dataclass(frozen=True)
class SharedConfig:
    """How the workers of a memory in PostgreSQL share its write lock (see
    :mod:`ucma_core.storage.postgres.lock`); a memory folder ignores it.

    A read holds the memory's lock shared and keeps it ``read_hold_seconds`` after it
    returns, so the next read in that time skips the lock's round trips. A hold is
    continued for at most ``read_hold_at_most_seconds`` after it was taken: a worker that
    writes waits about that long at most for a worker that keeps reading.

    Examples:
        >>> from ucma_core import MemoryConfig, SharedConfig
        >>> MemoryConfig(shared=SharedConfig(read_hold_seconds=0)).shared.read_hold_at_most_seconds
        0.05
    """

    #: Seconds a read's shared hold outlives the read (0: freed when the read returns).
    read_hold_seconds: float = 0.01
    #: Seconds after it was taken that a shared hold is no longer continued.
    read_hold_at_most_seconds: float = 0.05

    def __post_init__(self) -> None:
        for name in ("read_hold_seconds", "read_hold_at_most_seconds"):
            value = getattr(self, name)
            _require(
                isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 60,
                f"{name} must be in [0, 60] seconds",
            )
        _require(
            self.read_hold_at_most_seconds >= self.read_hold_seconds,
            "read_hold_at_most_seconds must be >= read_hold_seconds",
        )


@dataclass(frozen=True)
class MemoryConfig:
    """Everything that can be tuned about a :class:`ucma_core.Memory`.

    Examples:
        >>> from ucma_core import MemoryConfig
        >>> MemoryConfig(importance_threshold=0.0).importance_threshold
        0.0
    """

    #: Observations scored below this stay only in the sensory buffer.
    importance_threshold: float = 0.2
    #: Longest accepted content, in characters.
    max_content_chars: int = 100_000
    sensory_capacity: int = 512
    sensory_ttl_seconds: float = 300.0
    #: Episodes stay in the short-term tier this long before consolidation may compress them.
    short_term_ttl_hours: float = 48.0
    #: Embedded texts the embedding cache keeps (a text embedded again, such as a query
    #: observed afterwards, is not sent to the embedder twice); 0 turns the cache off.
    embedding_cache_size: int = 1024
    #: ... and at most this many MiB of their vectors (1 MiB: 512 vectors of 256 floats, 85
    #: of 1,536; the cache keeps the exact 8-byte floats the embedder returned); 0 turns it off.
    embedding_cache_mib: float = 1.0
    #: Stored vectors retrieval keeps in memory after reading them (least recently used go
    #: first; a write of a memory drops its copy); 0 reads every vector from Chroma.
    vector_cache_size: int = 8192
    #: ... and at most this many MiB of their data (2 MiB: 2,048 vectors of 256 floats,
    #: 341 of 1,536); 0 turns the cache off too.
    vector_cache_mib: float = 2.0
    #: Seconds to wait for another process's lock on the folder; 0 fails at once.
    lock_timeout: float = 0.0
    #: fsync the journal on every write (survives power loss, not only process crashes).
    fsync: bool = False
    #: Journal entries after which the graph snapshot is rewritten and the journal emptied
    #: (at least as many as the graph has nodes, so snapshots stay O(1) per write).
    snapshot_every: int = 5000
    #: IANA time zone in which "yesterday", "last week", "in May" are resolved.
    timezone: str = "UTC"
    chroma: ChromaConfig = field(default_factory=ChromaConfig)
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    ranking: RankingConfig = field(default_factory=RankingConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    working: WorkingMemoryConfig = field(default_factory=WorkingMemoryConfig)
    forgetting: ForgettingConfig = field(default_factory=ForgettingConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    group_commit: GroupCommitConfig = field(default_factory=GroupCommitConfig)
    shared: SharedConfig = field(default_factory=SharedConfig)

    def __post_init__(self) -> None:
        _require(0.0 <= self.importance_threshold <= 1.0, "importance_threshold must be in [0, 1]")
        _require(self.max_content_chars > 0, "max_content_chars must be > 0")
        _require(self.sensory_capacity > 0, "sensory_capacity must be > 0")
        _require(self.sensory_ttl_seconds > 0, "sensory_ttl_seconds must be > 0")
        _require(self.short_term_ttl_hours > 0, "short_term_ttl_hours must be > 0")
        _require(self.embedding_cache_size >= 0, "embedding_cache_size must be >= 0")
        _require(self.embedding_cache_mib >= 0, "embedding_cache_mib must be >= 0")
        _require(self.vector_cache_size >= 0, "vector_cache_size must be >= 0")
        _require(self.vector_cache_mib >= 0, "vector_cache_mib must be >= 0")
        _require(self.lock_timeout >= 0, "lock_timeout must be >= 0")
        _require(self.snapshot_every >= 1, "snapshot_every must be >= 1")
        try:
            zone(self.timezone)
        except (KeyError, ValueError) as e:
            raise ConfigurationError(f"unknown time zone {self.timezone!r}: {e}") from e
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float):
                _require(math.isfinite(value), f"{f.name} must be finite")
