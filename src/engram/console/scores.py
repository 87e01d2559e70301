"""Why a memory scored as it did, in words, with the formula one click away.

A person reading a search or what a task would load wants to know what matched, not
BM25's formula: "matched 'retry' and 'policy' in the title; also close in meaning".
:func:`in_words` says it from the question's words each part of the memory holds
(:meth:`engram.project.workspace.ProjectMemory.shared_words`) and whether the semantic
channel found the memory close. :func:`search_sum` writes the score out as the sum the
fusion computed, with the entry's own numbers, for the page's fold.

Not here: ranking (:mod:`engram.search`), reading the memories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from engram.search.fusion import LEXICAL_WEIGHT
from engram.search.lexical import K1, PROJECT_WEIGHTS, B
from engram.search.vectors import SEMANTIC_FLOOR

__all__ = ["BM25_IN_WORDS", "FUSION_IN_WORDS", "LEFT_OUT", "in_words", "search_sum"]

#: Where a memory holds a word, as a person names each part.
_PARTS: Final = {"title": "the title", "tags": "the tags", "text": "the text"}
_RANK: Final = {part: rank for rank, part in enumerate(_PARTS)}

#: What the lexical score is, in a sentence (the page's fold).
BM25_IN_WORDS: Final = (
    "BM25 adds up, for each word of the question the memory holds, how rare the word is"
    " among the memories (ln(1 + (N - n + 0.5) / (n + 0.5)): N memories, n of them hold it)"
    f" times how often the memory holds it (saturating: k1 = {K1}; a long memory counts each"
    f" occurrence for less: b = {B}). A word counts {PROJECT_WEIGHTS['title']:g}× in the title,"
    f" {PROJECT_WEIGHTS['tags']:g}× in the tags, {PROJECT_WEIGHTS['body']:g}× in the text."
)
#: What the fused score is, in a sentence (the page's fold).
FUSION_IN_WORDS: Final = (
    f"score = {LEXICAL_WEIGHT:g} × (BM25 / the best BM25 of the question)"
    f" + {1 - LEXICAL_WEIGHT:g} × (cosine - {SEMANTIC_FLOOR:g}) / {1 - SEMANTIC_FLOOR:g}:"
    f" the cosine counts only above {SEMANTIC_FLOOR:g}, the semantic channel's floor."
)
#: Why routing left a memory out, in words (``explain``'s reasons).
LEFT_OUT: Final = {
    "budget": "no room left within the budget or the memory limit",
    "low-relevance": "it scored under a tenth of the best match, or its confidence is low",
    "lifecycle": "it is superseded, archived, or a note past its date",
    "profile": "it is for another role",
    "scope": "a working note, which this load leaves out",
}


def in_words(words: Sequence[tuple[str, tuple[str, ...]]], close: bool) -> str:
    """Why a memory matched a question: the question's ``words`` with the parts of the
    memory that hold each (``title``, ``tags``, ``text``), and whether the semantic
    channel found it ``close``."""
    held: dict[tuple[str, ...], list[str]] = {}
    for word, parts in words:
        if parts:
            held.setdefault(parts, []).append(word)
    missing = [word for word, parts in words if not parts]
    if not held:
        if close:
            return "close in meaning; it holds none of the question's words"
        return "matched the question's words as the index stems them"
    # The title first, then the tags, then the text: where a word weighs most.
    order = sorted(held.items(), key=lambda item: min(_RANK.get(part, 9) for part in item[0]))
    said = ", ".join(
        f"{_listed(found)} in {_listed([_PARTS.get(part, part) for part in parts], quoted=False)}"
        for parts, found in order
    )
    text = f"matched {said}"
    if missing:
        text += f" (not {_listed(missing, joiner='or')})"
    return text + ("; also close in meaning" if close else "")


def search_sum(entry: Mapping[str, Any], best_bm25: float) -> str:
    """A search entry's score as the sum that made it, with its numbers: the BM25 alone
    without the semantic channel, else each channel's weighted part."""
    score = float(entry["score"])
    bm25 = float(entry.get("bm25", 0.0))
    parts = entry.get("parts", {})
    if set(parts) <= {"lexical"}:
        return f"score {score:.4f} = BM25 {bm25:.4f}"
    lexical = float(parts.get("lexical", 0.0))
    semantic = float(parts.get("semantic", 0.0))
    said = [
        f"{LEXICAL_WEIGHT:g} × {bm25:.4f} / {best_bm25:.4f} ({lexical:.4f})"
        if bm25
        else f"{LEXICAL_WEIGHT:g} × 0 (no word of the question)"
    ]
    if "cosine" in entry:
        cosine = float(entry["cosine"])
        said.append(
            f"{1 - LEXICAL_WEIGHT:g} × ({cosine:.4f} - {SEMANTIC_FLOOR:g})"
            f" / {1 - SEMANTIC_FLOOR:g} ({semantic:.4f})"
        )
    else:
        said.append(f"{1 - LEXICAL_WEIGHT:g} × 0 (not close enough in meaning)")
    return f"score {score:.4f} = " + " + ".join(said)


def _listed(items: Sequence[str], quoted: bool = True, joiner: str = "and") -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    shown = [f"'{item}'" if quoted else item for item in items]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + f" {joiner} " + shown[-1]
