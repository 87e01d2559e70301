"""``engram_memory_search`` and ``engram_memory_get``: disclose current records only.

A record is disclosed only while it is ``accepted_current``, current in valid time
(epoch milliseconds, ``t <= now < t_end``) and not expired. Anything else, an unknown
id, or an id from another scope, is the same ``NOT_FOUND``. Search ranks with BM25
over the scope's own FTS5 index and, when the scope's semantic projection is current,
by cosine over its vectors too, the two channels' scores fused by a convex
combination (:mod:`engram.search.fusion`); then it filters eligibility. Pages are bound to the
query, the parameters, the principal and the scope's records version by an HMAC.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any, Final

from engram.canonical import b64url, canonical_bytes, digest, seal_receipt, unb64url
from engram.errors import (
    NotFound,
    ProjectionOversized,
    RankingUnavailable,
    ResultTooLarge,
    StalePage,
)
from engram.memory.binding import Binding
from engram.memory.call import Read
from engram.memory.ports import AgentReads, ProjectionReads, RecordRow
from engram.memory.records import content_text, project, redaction_receipt_digest
from engram.memory.validation import format_instant
from engram.memory.vault import Vault
from engram.search.confidence import confidence, signals
from engram.search.fusion import FUSION_DEPTH, ranking_receipt, signal_parts
from engram.search.lexical import query_groups

__all__ = [
    "RECALL_CANDIDATES",
    "RESPONSE_CEILING_BYTES",
    "SemanticRanking",
    "disclose",
    "eligible",
    "get",
    "search",
]

#: At most this many ranked candidates are considered per search (upstream bound).
RECALL_CANDIDATES: Final = 2000
#: A whole search response may not exceed this many bytes (RESULT_TOO_LARGE).
RESPONSE_CEILING_BYTES: Final = 1_048_576
DEFAULT_LIMIT: Final = 10
DEFAULT_MAX_PACKET_BYTES: Final = 65_536
#: What a packet adds to its record's body at most (identifiers, digests, rank).
PACKET_MARGIN: Final = 4_096


class SemanticRanking:
    """The scope's semantic channel for one search: the scope, the model's name, the
    projection's version, and the record rowids nearest the question with their cosines,
    best first (``depth`` of them at most)."""

    def __init__(
        self,
        scope_id: str,
        model: str,
        version: str,
        nearest: Callable[[int], list[tuple[int, float]]],
    ) -> None:
        self.scope_id = scope_id
        self.model = model
        self.version = version
        self.nearest = nearest


def eligible(record: RecordRow, now_ms: int) -> bool:
    """Whether a record may be disclosed at ``now_ms``."""
    return (
        record.state == "accepted_current"
        and record.valid_t <= now_ms
        and (record.valid_t_end is None or now_ms < record.valid_t_end)
        and (record.expires_ms is None or now_ms < record.expires_ms)
    )


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def disclose(
    reader: AgentReads, vault: Vault, record: RecordRow
) -> tuple[dict[str, Any], list[str], str]:
    """What ``get`` and ``search`` disclose of a record (and the operator's console shows):
    its projection, what was redacted, and the redaction receipt's digest."""
    body = json.loads(vault.open(reader, record.record_id, record.scope_id, record.sealed))
    projected, redacted = project(record.record_id, record.record_digest, body, record.admitted_ms)
    return (
        projected,
        redacted,
        redaction_receipt_digest(record.record_id, record.record_digest, redacted),
    )


def get(step: Read) -> dict[str, Any]:
    """Read one current record with its read receipt."""
    reader, binding, arguments, now_ms = step.reader, step.binding, step.arguments, step.now
    authorization = authorization_receipt("get", binding, now_ms)
    record = reader.record(binding.scope.scope_id, arguments["record_id"])
    if record is None or not eligible(record, now_ms):
        raise NotFound()
    projected, redacted, redaction = disclose(reader, step.services.vault, record)
    at = format_instant(now_ms)
    revalidation = digest(
        "receipt/revalidation",
        {
            "record_id": record.record_id,
            "state": record.state,
            "valid_time": "current",
            "retention": "not_expired",
            "checked_at": at,
        },
    )
    read_receipt = seal_receipt(
        "receipt/read",
        {
            "record_id": record.record_id,
            "record_digest": record.record_digest,
            "valid_as_of": at,
            "system_as_of": at,
            "validated_through_cursor": str(reader.head(binding.scope.scope_id).cursor),
            "authorization_receipt_digest": authorization,
            "revalidation_receipt_digest": revalidation,
            "checked_at": at,
        },
    )
    packet = {
        "record": projected,
        "redacted_fields": redacted,
        "redaction_receipt_digest": redaction,
        "read_receipt": read_receipt,
    }
    value = {**packet, "packet_digest": digest("packet", packet)}
    if _size(value) > arguments.get("max_packet_bytes", DEFAULT_MAX_PACKET_BYTES):
        raise ProjectionOversized()
    return value


class PageCursors:
    """Seals and opens search page cursors under the store's MAC key."""

    def __init__(self, mac_key: bytes) -> None:
        self._key = mac_key

    def seal(self, fields: dict[str, Any]) -> str:
        data = canonical_bytes(fields)
        mac = hmac.new(self._key, b"engram/page/v1\0" + data, hashlib.sha256).digest()[:16]
        return b64url(data) + "." + b64url(mac)

    def open(self, cursor: str) -> dict[str, Any]:
        try:
            encoded, encoded_mac = cursor.split(".")
            data, mac = unb64url(encoded), unb64url(encoded_mac)  # canonical encodings only
        except ValueError as exc:
            raise StalePage() from exc
        expected = hmac.new(self._key, b"engram/page/v1\0" + data, hashlib.sha256).digest()[:16]
        if not hmac.compare_digest(mac, expected):
            raise StalePage()
        fields: dict[str, Any] = json.loads(data)
        return fields


def _ranked_eligible(
    reader: ProjectionReads,
    scope_id: str,
    groups: list[tuple[str, ...]],
    needed: int,
    now_ms: int,
) -> list[tuple[RecordRow, float]]:
    """Eligible records in rank order (at least ``needed`` when there are that many).

    A stage of the match whose hits are all ineligible counts as matching nothing: the
    next stage runs (one undisclosable record must not hide the others).
    """
    stage, fetch = 0, min(RECALL_CANDIDATES, max(2 * needed, 32))
    while (hits := reader.search(scope_id, groups, fetch, stage)) is not None:
        found = [(row, score) for row, score in hits if eligible(row, now_ms)]
        if len(found) < needed and len(hits) == fetch and fetch < RECALL_CANDIDATES:
            fetch = min(RECALL_CANDIDATES, fetch * 4)  # deeper in the same stage
        elif found:
            return found
        else:
            stage, fetch = stage + 1, min(RECALL_CANDIDATES, max(2 * needed, 32))
    return []


#: A ranked record, its score, and its ``(score, lexical, semantic)`` parts
#: (:func:`engram.search.fusion.signal_parts`: what its confidence is computed from).
Ranked = tuple[RecordRow, float, tuple[float, float, float | None]]


def _lexical(found: list[tuple[RecordRow, float]]) -> list[Ranked]:
    """The lexical ranking with its parts."""
    parts = signal_parts([(row.record_id, score) for row, score in found], None)
    return [(row, score, shares) for (row, score), (_, shares) in zip(found, parts, strict=True)]


def _fused(
    reader: ProjectionReads,
    lexical: list[tuple[RecordRow, float]],
    semantic: SemanticRanking,
    now_ms: int,
) -> list[Ranked]:
    """The eligible records of both channels fused (:func:`engram.search.fusion.hybrid`)."""
    nearest = semantic.nearest(4 * FUSION_DEPTH)
    rows = reader.records_by_rowid(semantic.scope_id, [rowid for rowid, _ in nearest])
    close = [
        (rows[rowid], cosine)
        for rowid, cosine in nearest
        if rowid in rows and eligible(rows[rowid], now_ms)
    ]
    by_id = {row.record_id: row for row, _ in lexical} | {row.record_id: row for row, _ in close}
    fused = signal_parts(
        [(row.record_id, score) for row, score in lexical],
        [(row.record_id, cosine) for row, cosine in close],
    )
    return [(by_id[record_id], shares[0], shares) for record_id, shares in fused]


def _offset(
    cursors: PageCursors, arguments: dict[str, Any], bound: dict[str, str], snapshot: str
) -> int:
    """Where the page starts: 0, or its cursor's offset when the cursor binds this same
    search (else ``STALE_PAGE``)."""
    if "page_cursor" not in arguments:
        return 0
    page = cursors.open(arguments["page_cursor"])
    if {k: page.get(k) for k in bound} != bound or page.get("snapshot") != snapshot:
        raise StalePage()
    return int(page["offset"])


def _bound(
    arguments: dict[str, Any],
    binding: Binding,
    limit: int,
    max_packet: int,
    channels: str,
    at_least: float | None,
) -> dict[str, str]:
    """What a page cursor and the rank receipt bind: the query, the parameters, the scope
    and the principal."""
    parameters: dict[str, Any] = {
        "limit": limit,
        "max_packet_bytes": max_packet,
        "minimum_channels": channels,
    }
    if at_least is not None:  # bound only when asked for: other digests are unchanged
        parameters["minimum_confidence"] = at_least
    return {
        "query": digest("query", {"query": arguments["query"]}),
        "parameters": digest("parameters", parameters),
        "scope": binding.scope.scope_id,
        "principal": digest("actor", {"principal": binding.principal}),
    }


def _semantic(step: Read) -> SemanticRanking | None:
    """The scope's semantic channel for this question, when installed and current."""
    projection = step.services.semantic
    if projection is None:
        return None
    return projection.ranking(step.reader, step.binding.scope, step.question)


def search(step: Read) -> dict[str, Any]:
    """Rank, filter and page the scope's current records.

    The scope's semantic channel ranks too when it is installed and current; a search
    that requires it gets ``RANKING_UNAVAILABLE`` otherwise.

    A packet no admissible record could make (over the host's ``max_record_bytes`` plus
    :data:`PACKET_MARGIN`: one admitted before the ceiling) is left out of the page and
    counted in the rank receipt (``oversized_left_out``), so no record can make anyone's
    search fail, by its size or with others (``RESULT_TOO_LARGE``); any other packet over
    ``max_packet_bytes`` is ``PROJECTION_OVERSIZED`` (the caller can raise it).
    """
    reader, binding, arguments, now_ms = step.reader, step.binding, step.arguments, step.now
    vault, cursors = step.services.vault, step.services.cursors
    max_record_bytes = step.services.policy.max_record_bytes
    semantic = _semantic(step)
    policy = arguments.get("capability_policy", {})
    channels = policy.get("minimum_channels", "lexical")
    at_least = policy.get("minimum_confidence")
    if channels == "lexical_and_semantic" and semantic is None:
        raise RankingUnavailable()
    scope_id = binding.scope.scope_id
    limit = arguments.get("limit", DEFAULT_LIMIT)
    max_packet = arguments.get("max_packet_bytes", DEFAULT_MAX_PACKET_BYTES)
    binding_fields = _bound(arguments, binding, limit, max_packet, channels, at_least)
    # A page continues the ranking it came from: the records and the channels that
    # ranked them (the semantic projection can grow without any record changing).
    snapshot = f"{reader.records_version(scope_id)}" + (
        f"/{semantic.model}@{semantic.version}" if semantic is not None else ""
    )
    offset = _offset(cursors, arguments, binding_fields, snapshot)
    groups = query_groups(arguments["query"])
    needed = offset + limit + 1
    if semantic is None:
        found = _lexical(_ranked_eligible(reader, scope_id, groups, needed, now_ms))
    else:
        lexical = _ranked_eligible(reader, scope_id, groups, max(needed, FUSION_DEPTH), now_ms)
        found = _fused(reader, lexical, semantic, now_ms)
    window = found[offset : offset + limit]
    reader.prefetch_data_keys([record.record_id for record, _, _ in window])  # one read, not N
    parts = [shares for _, _, shares in found]
    packets: list[dict[str, Any]] = []
    sure: list[float] = []
    left_out = unsure = 0
    for position, (record, score, _) in enumerate(window, start=offset + 1):
        projected, redacted, redaction = disclose(reader, vault, record)
        hit = confidence(signals(groups, parts, position - 1, content_text(projected)))
        if at_least is not None and hit < at_least:
            unsure += 1
            continue
        packet = {
            "record": projected,
            "redacted_fields": redacted,
            "redaction_receipt_digest": redaction,
            "score": round(score, 6),
            "rank": position,
        }
        size = _size(packet)
        if size > max_record_bytes + PACKET_MARGIN:  # admitted before the host's ceiling
            left_out += 1
            continue
        if size > max_packet:
            raise ProjectionOversized()
        packets.append(packet)
        sure.append(hit)
    rank_receipt = seal_receipt(
        "receipt/rank",
        {
            **binding_fields,
            **ranking_receipt(semantic.model if semantic is not None else None),
            "snapshot": snapshot,
            "offset": offset,
            # Only disclosable records are counted: a count of every hit would tell that
            # records get answers NOT_FOUND for exist.
            "eligible": len(found),
            "returned": [packet["record"]["record_id"] for packet in packets],
            "oversized_left_out": left_out,
            # Each returned record's confidence, in the order of ``returned``.
            "confidences": sure,
            **({} if at_least is None else {"low_confidence_left_out": unsure}),
            "ranked_at": format_instant(now_ms),
        },
    )
    value: dict[str, Any] = {"records": packets, "rank_receipt": rank_receipt}
    if offset + limit < len(found):
        value["next_page_cursor"] = cursors.seal(
            {**binding_fields, "snapshot": snapshot, "offset": offset + limit}
        )
    value["response_digest"] = digest("response", value)
    if _size(value) > RESPONSE_CEILING_BYTES:
        raise ResultTooLarge()
    return value


def authorization_receipt(tool: str, binding: Binding, now_ms: int) -> str:
    """The digest a read receipt names its authorization by: who read, where, for what."""
    return digest(
        "receipt/authorization",
        {
            "tool": tool,
            "scope": binding.scope.scope_id,
            "actor": binding.actor,
            "purpose_ref": binding.purpose_ref,
            "at": format_instant(now_ms),
        },
    )
