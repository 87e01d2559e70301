"""Scoring a ranked retrieval run against labelled questions.

A question has a set of relevant keys (none for a question about something never
stored); a run answers it with keys in rank order. Per question:

- Recall@k: the share of its relevant keys among the first k answers;
- reciprocal rank: 1 / the rank of the first relevant answer (0 when none is found);
- nDCG@10: binary gains, discounted by log2(rank + 1), over the ideal ordering;
- for a question with nothing relevant: whether the run returned anything at all.

Averages are taken over the questions that have relevant keys; negatives are counted
apart (the share of them that returned anything, which should be 0).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Judged", "judge", "summarize"]


@dataclass(frozen=True)
class Judged:
    """One question's scores."""

    category: str
    negative: bool
    recall_5: float
    recall_10: float
    reciprocal_rank: float
    ndcg_10: float
    returned: int


def judge(relevant: Iterable[str], ranked: Sequence[str], category: str = "all") -> Judged:
    """Score one ranked answer (duplicates after the first occurrence are ignored)."""
    wanted = set(relevant)
    seen: list[str] = []
    for key in ranked:
        if key not in seen:
            seen.append(key)
    if not wanted:
        return Judged(category, True, 0.0, 0.0, 0.0, 0.0, len(seen))
    hits = [key in wanted for key in seen]
    first = next((rank for rank, hit in enumerate(hits, 1) if hit), None)
    gains = sum(1 / math.log2(rank + 1) for rank, hit in enumerate(hits[:10], 1) if hit)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(wanted), 10) + 1))
    return Judged(
        category,
        False,
        recall_5=sum(hits[:5]) / len(wanted),
        recall_10=sum(hits[:10]) / len(wanted),
        reciprocal_rank=1 / first if first else 0.0,
        ndcg_10=gains / ideal,
        returned=len(seen),
    )


def _means(judged: list[Judged]) -> dict[str, float | int]:
    return {
        "questions": len(judged),
        "recall_5": round(statistics.fmean(j.recall_5 for j in judged), 4),
        "recall_10": round(statistics.fmean(j.recall_10 for j in judged), 4),
        "mrr": round(statistics.fmean(j.reciprocal_rank for j in judged), 4),
        "ndcg_10": round(statistics.fmean(j.ndcg_10 for j in judged), 4),
    }


def summarize(judged: Iterable[Judged]) -> dict[str, object]:
    """Averages over the questions with relevant keys, overall and per category, and how
    many questions about nothing stored returned anything."""
    answered = list(judged)
    positives = [j for j in answered if not j.negative]
    negatives = [j for j in answered if j.negative]
    by_category: dict[str, list[Judged]] = defaultdict(list)
    for j in positives:
        by_category[j.category].append(j)
    summary: dict[str, object] = {}
    if positives:
        summary.update(_means(positives))
        summary["by_category"] = {
            category: _means(group) for category, group in sorted(by_category.items())
        }
    if negatives:
        summary["negatives"] = len(negatives)
        summary["negatives_answered"] = sum(1 for j in negatives if j.returned)
    return summary
