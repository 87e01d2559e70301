"""Routing: which memories a task gets, in which order, and why the others do not.

1. Hidden before ranking: archived or superseded lifecycle, low confidence, a role
   mismatch (when both the memory and the configuration name roles), an expired
   working note (past ``valid_until``), and working notes unless asked for.
2. Ranking: BM25 hits for the query, fused with the semantic channel's nearest memories
   where it ranks (:func:`engram.search.fusion.hybrid`, the same as governed search);
   or, for the query ``current session``, every rule plus memories tagged
   ``session-start``, ``always-load``, ``start-session`` or ``always``.
3. Relevance: BM25 hits scoring under a tenth of the best hit are omitted
   (``low-relevance``) unless the semantic channel found them too: they matched only
   words that carry almost no weight. The semantic channel has its own floor (a cosine
   of :data:`engram.search.vectors.SEMANTIC_FLOOR`). Then every hit whose confidence
   (:mod:`engram.search.confidence`, the same as search gives it) is under the floor is
   omitted (``low-relevance``), except memories tagged to load always
   (:data:`SESSION_TAGS`): a task about nothing stored loads nothing else.
4. Order: rules first, then decisions (tagged ``decision``), then the rest; by score
   within a class, then by id, so the same files and query give the same order.
5. Dependencies (``depends_on``) of a selected memory come just before it, deepest
   first, within the memory limit (what the limit cuts is omitted as ``budget``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from engram.project.memory_file import Memory
from engram.search.confidence import confidence, query_groups, signals
from engram.search.fusion import hybrid, signal_parts

__all__ = [
    "SESSION_QUERY",
    "SESSION_TAGS",
    "Omission",
    "Routed",
    "Routing",
    "confident",
    "replaced_by",
    "replacements_first",
    "route",
]

SESSION_QUERY: Final = "current session"
#: A hit scoring under this fraction of the best hit is not relevant to the task: it
#: matched only words that say little (FTS5 gives such words almost no weight).
RELEVANCE_FLOOR: Final = 0.1
SESSION_TAGS: Final = frozenset({"session-start", "always-load", "start-session", "always"})


@dataclass(frozen=True)
class Routed:
    """A selected memory and how it was chosen."""

    memory: Memory
    how: str
    score: float
    terms: tuple[str, ...] = ()
    #: How sure the ranking is that the memory is relevant (``None``: not ranked, as a
    #: dependency or a ``current session`` memory).
    confidence: float | None = None


@dataclass(frozen=True)
class Omission:
    memory_id: str
    reason: str
    confidence: float | None = None


@dataclass
class Routing:
    selected: list[Routed] = field(default_factory=list)
    omitted: list[Omission] = field(default_factory=list)
    #: The cosine of each memory the semantic channel found close to the query.
    close: dict[str, float] = field(default_factory=dict)


def confident(
    query: str,
    lexical: list[tuple[str, float]],
    close: list[tuple[str, float]] | None,
    memories: Mapping[str, Memory],
    wanted: list[str],
) -> dict[str, float]:
    """The confidence of each memory of ``wanted`` (:mod:`engram.search.confidence`) in
    the ranking of the BM25 hits ``lexical`` fused with the semantic channel's ``close``
    memories (``None``: that channel did not rank); a memory of ``wanted`` neither channel
    ranked has 0."""
    ranked = signal_parts(lexical, close)
    position = {key: number for number, (key, _) in enumerate(ranked)}
    parts = [shares for _, shares in ranked]
    groups = query_groups(query)
    return {
        mid: (
            confidence(signals(groups, parts, position[mid], _text(memories[mid])))
            if mid in position and mid in memories
            else 0.0
        )
        for mid in wanted
    }


def _text(memory: Memory) -> str:
    """What a memory's coverage of a question is measured on: what its index holds."""
    return f"{memory.title} {' '.join(memory.tags)} {memory.body}"


def replacements_first(ranked: list[str], memories: Mapping[str, Memory]) -> list[str]:
    """``ranked`` with each superseded memory's replacement (its ``superseded_by``),
    when it was found too but ranked lower, moved to just before it: search lists every
    memory, and a memory a person replaced is never shown above what replaced it.
    Hand-edited files that replace one another in a ring have no replacement: they stay
    where their scores put them."""
    order = list(ranked)
    position = 0
    while position < len(order):
        replacement = replaced_by(order[position], memories)
        if replacement is not None and replacement in order[position + 1 :]:
            order.remove(replacement)
            order.insert(position, replacement)
            continue  # the replacement may have been replaced in turn
        position += 1
    return order


def replaced_by(memory_id: str, memories: Mapping[str, Memory]) -> str | None:
    """The memory that replaced ``memory_id`` (its ``superseded_by``, when it is
    superseded and that memory exists), unless following the replacements from it runs
    into a ring (hand-edited files): then none, so that moving replacements first ends."""
    seen, current = {memory_id}, memory_id
    first: str | None = None
    while True:
        memory = memories.get(current)
        following = memory.get("superseded_by") if memory is not None else None
        if memory is None or memory.lifecycle != "superseded" or not isinstance(following, str):
            return first
        if following not in memories:
            return first
        if following in seen:
            return None  # a ring
        first = first or following
        seen.add(following)
        current = following


def hidden_reason(memory: Memory, roles: tuple[str, ...], today: str, notes: bool) -> str | None:
    """Why a memory is hidden before ranking, or ``None``."""
    if memory.lifecycle in ("archived", "superseded"):
        return "lifecycle"
    if memory.get("confidence") == "low":
        return "low-relevance"
    memory_roles = memory.items("role")
    if memory_roles and roles and not set(memory_roles) & set(roles):
        return "profile"
    if memory.tier == "working":
        until = str(memory.get("valid_until", ""))
        if until and until < today:
            return "lifecycle"
        if not notes:
            return "scope"
    return None


def _class(memory: Memory) -> int:
    if memory.type == "rule":
        return 0
    return 1 if "decision" in memory.tags else 2


def route(
    memories: dict[str, Memory],
    hits: list[tuple[str, float, list[str]]],
    query: str,
    roles: tuple[str, ...],
    limit: int,
    notes: bool = True,
    today: str | None = None,
    close: list[tuple[str, float]] | None = None,
    floor: float = 0.0,
) -> Routing:
    """Route ``query`` over ``memories`` given its BM25 ``hits`` and, where the semantic
    channel ranks, the ids it found ``close`` to the query with their cosines (best first);
    hits under the confidence ``floor`` are omitted."""
    day = today or dt.date.today().isoformat()
    routing = Routing(close=dict(close or []))
    candidates: list[Routed] = []
    if " ".join(query.lower().split()) == SESSION_QUERY:
        chosen = [m for m in memories.values() if m.type == "rule" or SESSION_TAGS & set(m.tags)]
        candidates = [Routed(m, "direct", 0.0) for m in chosen]
    else:
        candidates = _ranked(memories, hits, query, close, routing)
    visible = []
    for routed in candidates:
        reason = hidden_reason(routed.memory, roles, day, notes)
        if reason is None and _unsure(routed, floor):
            reason = "low-relevance"
        if reason is None:
            visible.append(routed)
        else:
            sure = routed.confidence if reason == "low-relevance" else None
            routing.omitted.append(Omission(routed.memory.id, reason, sure))
    visible.sort(key=lambda r: (_class(r.memory), -r.score, r.memory.id))
    for routed in visible:
        if len(routing.selected) >= limit:
            routing.omitted.append(Omission(routed.memory.id, "budget"))
            continue
        if routed.memory.id in {r.memory.id for r in routing.selected}:
            continue
        _with_dependencies(routed, memories, roles, day, limit, routing)
    return routing


def _unsure(routed: Routed, floor: float) -> bool:
    """Whether a ranked memory is under the confidence floor (one tagged to load always
    never is)."""
    if routed.confidence is None or SESSION_TAGS & set(routed.memory.tags):
        return False
    return routed.confidence < floor


def _ranked(
    memories: dict[str, Memory],
    hits: list[tuple[str, float, list[str]]],
    query: str,
    close: list[tuple[str, float]] | None,
    routing: Routing,
) -> list[Routed]:
    """The relevant hits, fused with the semantic channel's where it ranks, each with its
    confidence; the weak hits only BM25 found are omitted as ``low-relevance``."""
    best = max((score for _, score, _ in hits), default=0.0)
    relevant: list[tuple[str, float]] = []
    weak: list[str] = []
    terms_of: dict[str, tuple[str, ...]] = {}
    for mid, score, terms in hits:
        if mid not in memories:
            continue
        terms_of[mid] = tuple(terms)
        if score < best * RELEVANCE_FLOOR:
            weak.append(mid)
        else:
            relevant.append((mid, score))
    nearby = None if close is None else [(mid, c) for mid, c in close if mid in memories]
    if nearby is not None:
        relevant = hybrid(relevant, nearby)
    chosen = {mid for mid, _ in relevant}
    routing.omitted.extend(Omission(mid, "low-relevance") for mid in weak if mid not in chosen)
    lexical = [(mid, score) for mid, score, _ in hits if mid in memories]
    sure = confident(query, lexical, nearby, memories, list(chosen))
    return [
        Routed(memories[mid], "direct", score, terms_of.get(mid, ()), sure[mid])
        for mid, score in relevant
    ]


def _with_dependencies(
    routed: Routed,
    memories: dict[str, Memory],
    roles: tuple[str, ...],
    today: str,
    limit: int,
    routing: Routing,
) -> None:
    chosen = {r.memory.id for r in routing.selected}
    order: list[str] = []

    def visit(memory_id: str, trail: tuple[str, ...]) -> None:
        memory = memories.get(memory_id)
        if memory is None or memory_id in trail or memory_id in chosen or memory_id in order:
            return
        for dependency in memory.items("depends_on"):
            visit(dependency, (*trail, memory_id))
        order.append(memory_id)

    for dependency in routed.memory.items("depends_on"):
        visit(dependency, (routed.memory.id,))
    for memory_id in order:
        memory = memories[memory_id]
        if len(routing.selected) >= limit - 1:
            routing.omitted.append(Omission(memory_id, "budget"))
        elif hidden_reason(memory, roles, today, notes=True) is None:
            routing.selected.append(Routed(memory, "dependency", 0.0))
    routing.selected.append(routed)
