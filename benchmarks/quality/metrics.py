"""Retrieval metrics for the conversational-memory benchmark.

* recall@k: the fraction of a question's evidence turns found among the first ``k`` results,
  averaged over questions;
* MRR: the mean over questions of 1 / rank of the first evidence turn in the ranking
  (0 when none is returned; rankings are cut at 20 results by the runner, so this is MRR@20).

Both are reported per question kind and overall (every question weighs the same overall).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

KS = (5, 10, 20)


def recall_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Fraction of ``evidence`` ids among the first ``k`` of ``ranked``."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question needs at least one evidence id")
    return len(wanted & set(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / (1-based rank of the first evidence id in ``ranked``), or 0.0 if none is there."""
    wanted = set(evidence)
    for rank, item in enumerate(ranked, 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def evaluate(
    rankings: Mapping[str, Sequence[str]], questions: Sequence[Mapping], ks: Sequence[int] = KS
) -> dict[str, dict[str, float]]:
    """Scores of one method: ``{kind or "overall": {"recall@5": …, "mrr": …, "n": count}}``.

    ``rankings`` maps a question's ``qid`` to the ranked turn ids the method returned; a
    question missing from it counts as answered with nothing.
    """
    sums: dict[str, dict[str, float]] = {}
    for q in questions:
        ranked = list(rankings.get(q["qid"], ()))
        scores = {f"recall@{k}": recall_at_k(ranked, q["evidence"], k) for k in ks}
        scores["mrr"] = reciprocal_rank(ranked, q["evidence"])
        for group in (q["kind"], "overall"):
            bucket = sums.setdefault(group, {"n": 0.0, **{name: 0.0 for name in scores}})
            bucket["n"] += 1
            for name, value in scores.items():
                bucket[name] += value
    return {
        group: {name: (v if name == "n" else v / b["n"]) for name, v in b.items()}
        for group, b in sums.items()
    }


def format_table(
    results: Mapping[str, Mapping[str, Mapping[str, float]]], groups: Sequence[str], ks: Sequence[int] = KS
) -> str:
    """A plain-text table: one block per group (kind), one row per method."""
    columns = [f"recall@{k}" for k in ks] + ["mrr"]
    width = max(8, *(len(m) for m in results))
    lines = []
    for group in groups:
        n = next((int(r[group]["n"]) for r in results.values() if group in r), 0)
        lines.append(f"{group} (n={n})")
        lines.append("  " + "method".ljust(width) + "".join(c.rjust(11) for c in columns))
        for method, scores in results.items():
            row = scores.get(group)
            cells = "".join((f"{row[c]:.3f}" if row else "-").rjust(11) for c in columns)
            lines.append("  " + method.ljust(width) + cells)
        lines.append("")
    return "\n".join(lines)
