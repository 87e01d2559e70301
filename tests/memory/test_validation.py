"""The closed input schemas of the six governed tools, enforced exactly as the contract says.

memory-contract.txt §0 (closed schemas, never null), §2 (common encodings and each tool's
inputs) and §3.5 (idempotency keys). Every case goes through the engine (``memory.call``)
and asserts the exact envelope code. Byte bounds count UTF-8 bytes, not characters; the
cases show it with multi-byte characters: "é" is 2 bytes, "€" 3 and "𝄞" 4. Every refusal
is checked whole (constant message, not retriable) and must write nothing: the scope's
head cursor stays 0.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.errors import InvalidDigest, InvalidSchema, TrustedContextUnavailable
from engram.memory.binding import Binding
from engram.memory.schemas import INSTANT_PATTERN
from engram.memory.settings import HostPolicy
from engram.memory.validation import format_instant, parse_instant
from engram.testing import DIGEST, NOW, PURPOSE, Clock, binding, capture_args, mutate
from tests.memory.conftest import Memory, open_memory

Args = dict[str, Any]

SCHEMA, BAD_DIGEST = "INVALID_SCHEMA", "INVALID_DIGEST"
MESSAGES = {SCHEMA: InvalidSchema.message, BAD_DIGEST: InvalidDigest.message}
SAFE = 2**53 - 1
DAY = 86_400_000
CEILING = 1_048_576
KEY = "agent-a.task-42.operation-1"
HEX = DIGEST.removeprefix("sha256:")
RECORD_ID = "mem_abcdefgh234567"
CANDIDATE_ID = "cand_abcdefgh234567"
AUDIT_ID = re.compile(r"aud_[a-z2-7]{26}")
CHARS = {"ascii": "a", "e-acute": "é", "euro": "€", "clef": "𝄞"}

#: Every code in the contract's error table (§2); anything else is not a contract answer.
CONTRACT_CODES = frozenset(
    {
        "INVALID_SCHEMA",
        "INVALID_DIGEST",
        "UNAUTHORIZED",
        "AUTHORIZATION_EXPIRED",
        "AUTHORIZATION_REVOKED",
        "NOT_FOUND",
        "DIGEST_CONFLICT",
        "ILLEGAL_TRANSITION",
        "ALREADY_TERMINAL",
        "MUTATION_OUTCOME_UNKNOWN",
        "gate_failed",
        "STALE_PAGE",
        "RESULT_TOO_LARGE",
        "PROJECTION_OVERSIZED",
        "RATE_LIMITED",
        "DEADLINE_EXCEEDED",
        "CANCELLED",
        "STORE_UNAVAILABLE",
        "FENCE_LOST",
        "CURSOR_GAP",
        "POLICY_UNAVAILABLE",
        "POLICY_STALE",
        "PROJECTION_STALE",
        "RANKING_UNAVAILABLE",
        "CAPABILITY_UNAVAILABLE",
        "JOURNAL_CORRUPT",
        "BLOB_MISSING",
        "REGISTRY_VERSION_UNAVAILABLE",
        "BACKUP_INVALID",
        "RESTORE_REFUSED",
        "MIGRATION_LEDGER_INVALID",
    }
)

#: What schema-valid arguments get on an empty store. withdraw and forget are absent:
#: they need a host confirmation no engine caller can give, so any non-schema code fits.
WHEN_VALID = {"search": "ok", "get": "NOT_FOUND", "capture": "ok", "request_admission": "NOT_FOUND"}


# --- helpers --------------------------------------------------------------------------


def sized(size: int, char: str = "a") -> str:
    """A string of exactly ``size`` UTF-8 bytes: ``char`` repeated, topped up with ASCII."""
    width = len(char.encode())
    return char * (size // width) + "a" * (size % width)


def serialized_size(arguments: Args) -> int:
    return len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode())


def steps(path: str) -> list[str | int]:
    return [int(step) if step.isdigit() else step for step in path.split(".")]


def walk(value: Any, path: str) -> Any:
    """The value at the dotted ``path`` (``""`` is ``value`` itself)."""
    for step in steps(path) if path else []:
        value = value[step]
    return value


def put(arguments: Args, path: str, value: Any) -> Args:
    """A copy of ``arguments`` with ``value`` at the dotted ``path``."""
    parent, _, last = path.rpartition(".")
    return set_field(arguments, parent, steps(last)[0], value)


def set_field(arguments: Args, parent: str, field: str | int, value: Any) -> Args:
    """A copy of ``arguments`` whose object or array at ``parent`` has ``field`` set."""

    def change(copied: Args) -> None:
        walk(copied, parent)[field] = value

    return mutate(arguments, change)


def drop(arguments: Args, path: str) -> Args:
    """A copy of ``arguments`` without the field at the dotted ``path``."""
    parent, _, last = path.rpartition(".")

    def change(copied: Args) -> None:
        del walk(copied, parent)[last]

    return mutate(arguments, change)


def head(memory: Memory) -> int:
    with memory.engine.store.read() as reader:
        return int(reader.head(binding().scope.scope_id).cursor)


def bound_to(purpose: str) -> Binding:
    return replace(binding(), purpose_ref=purpose)


def refused(memory: Memory, tool: str, arguments: Args, who: Binding | None = None) -> str:
    """The refusal's code, after checking its whole envelope and that nothing was written."""
    envelope = memory.call(tool, arguments, who)
    code = envelope.get("error", {}).get("code")
    assert envelope == {
        "ok": False,
        "auditId": envelope["auditId"],
        "redactionClass": "high",
        "error": {"code": code, "message": MESSAGES.get(code), "retriable": False},
    }
    assert AUDIT_ID.fullmatch(envelope["auditId"])
    assert head(memory) == 0
    return str(code)


def accepted(
    memory: Memory,
    tool: str,
    arguments: Args,
    who: Binding | None = None,
    expected: str | None = None,
) -> str:
    """The outcome of schema-valid arguments: never a schema code, the exact one if known."""
    envelope = memory.call(tool, arguments, who)
    outcome = "ok" if envelope["ok"] else envelope["error"]["code"]
    assert outcome not in MESSAGES, envelope
    assert outcome == (expected or WHEN_VALID.get(tool, outcome)), envelope
    return str(outcome)


def byte_bounds(low: int, high: int) -> tuple[list[Any], list[Any]]:
    """Valid strings at both byte bounds, and invalid ones one byte outside, per character."""

    def cases(sizes: tuple[int, ...]) -> list[Any]:
        found: dict[str, str] = {}
        for size in sizes:
            for name, char in CHARS.items():
                if size >= 0:
                    found.setdefault(sized(size, char), f"{size}-bytes-{name}")
        return [pytest.param(value, id=name) for value, name in found.items()]

    return cases((low, high)), cases((low - 1, high + 1))


# --- argument builders ----------------------------------------------------------------


def search_args(**changes: Any) -> Args:
    return {"query": "release tarball digests", "purpose_ref": PURPOSE, **changes}


def get_args(**changes: Any) -> Args:
    return {"record_id": RECORD_ID, "purpose_ref": PURPOSE, **changes}


def admission_args(**changes: Any) -> Args:
    return {"candidate_id": CANDIDATE_ID, "idempotency_key": KEY, **changes}


def withdraw_args(**changes: Any) -> Args:
    return {**admission_args(), "reason_ref": "reason:superseded", **changes}


def forget_args(**changes: Any) -> Args:
    base = {"record_id": RECORD_ID, "idempotency_key": KEY, "reason_ref": "reason:obsolete"}
    return {**base, **changes}


def full_search() -> Args:
    policy = {"minimum_channels": "lexical", "network": "forbid"}
    return search_args(limit=5, max_packet_bytes=65_536, capability_policy=policy)


def full_capture() -> Args:
    """A capture with every optional field present."""
    arguments = capture_args(
        valid_time={"t": NOW - DAY, "t_end": NOW + DAY},
        retention={"derivative_rule": "make-ineligible", "expires_at": "2027-01-20T08:00:00.000Z"},
        reconciliation={"family_refs": []},
    )
    arguments["payload"]["citations"][0]["observed_at"] = "2027-01-14T08:00:00.000Z"
    arguments["evidence"]["attestation"] = "Reviewed in release review 7."
    return arguments


MINIMAL: dict[str, Callable[[], Args]] = {
    "search": search_args,
    "get": get_args,
    "capture": capture_args,
    "request_admission": admission_args,
    "withdraw": withdraw_args,
    "forget": forget_args,
}
FULL: dict[str, Callable[[], Args]] = {
    **MINIMAL,
    "search": full_search,
    "get": lambda: get_args(max_packet_bytes=65_536),
    "capture": full_capture,
}


def component(component_id: str, cites: str = "cit1") -> Args:
    return {
        "component_id": component_id,
        "kind": "context",
        "text": "Context.",
        "citation_ids": [cites],
    }


def citation(citation_id: str) -> Args:
    return {
        "citation_id": citation_id,
        "source_ref": "repo:engram",
        "locator": {"scheme": "file", "value": "docs/release.md"},
        "content_digest": DIGEST,
    }


def with_citations(count: int) -> Args:
    """A capture with ``count`` citations cit000.., the first one cited everywhere."""
    arguments = capture_args()
    payload = arguments["payload"]
    payload["citations"] = [citation(f"cit{i:03d}") for i in range(count)]
    payload["components"][0]["citation_ids"] = ["cit000"]
    payload["primary_event"]["citation_id"] = "cit000"
    arguments["evidence"]["citation_ids"] = ["cit000"]
    return arguments


def with_components(count: int) -> Args:
    arguments = capture_args()
    arguments["payload"]["components"] = [component(f"c{i:02d}") for i in range(count)]
    arguments["payload"]["primary_component_id"] = "c00"
    return arguments


def capture_of_size(size: int, char: str) -> Args:
    """A valid capture whose serialized arguments are exactly ``size`` bytes (about 1 MiB).

    Text is capped at 65,536 bytes per component, so the bulk is spread over 17.
    """
    arguments = with_components(17)
    parts = arguments["payload"]["components"]
    for part in parts:
        part["text"] = sized(61_500, char)
    parts[-1]["text"] = sized(61_500 + size - serialized_size(arguments), char)
    return arguments


def paths(value: Any, prefix: str = "") -> Iterator[str]:
    """The dotted path of every field and array item in ``value``."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        path = f"{prefix}{key}"
        yield path
        if isinstance(item, dict | list):
            yield from paths(item, path + ".")


def objects(value: Any, prefix: str = "") -> Iterator[str]:
    """The dotted path of every object in ``value``, the top one as ``""``."""
    if isinstance(value, dict):
        yield prefix.rstrip(".")
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from objects(item, f"{prefix}{key}.")


# --- the envelope of a refusal --------------------------------------------------------


def test_a_schema_refusal_is_exactly_the_constant_invalid_schema_envelope(
    memory: Memory,
) -> None:
    envelope = memory.call("search", search_args(limit=0))
    assert AUDIT_ID.fullmatch(envelope["auditId"])
    assert envelope == {
        "ok": False,
        "auditId": envelope["auditId"],
        "redactionClass": "high",
        "error": {
            "code": "INVALID_SCHEMA",
            "message": "Arguments do not match the tool's closed schema.",
            "retriable": False,
        },
    }


def test_a_digest_refusal_is_exactly_the_constant_invalid_digest_envelope(
    memory: Memory,
) -> None:
    arguments = put(capture_args(), "evidence.evidence_digest", "sha256:" + HEX.upper())
    envelope = memory.call("capture", arguments)
    assert AUDIT_ID.fullmatch(envelope["auditId"])
    assert envelope == {
        "ok": False,
        "auditId": envelope["auditId"],
        "redactionClass": "high",
        "error": {
            "code": "INVALID_DIGEST",
            "message": "A digest is not sha256: followed by 64 lowercase hex characters.",
            "retriable": False,
        },
    }


def test_each_refusal_has_its_own_audit_id(memory: Memory) -> None:
    first = memory.call("search", search_args(limit=0))
    second = memory.call("search", search_args(limit=0))
    assert first["auditId"] != second["auditId"]


# --- a refusal writes nothing ---------------------------------------------------------


def test_refused_captures_leave_the_scope_head_where_it_was(memory: Memory) -> None:
    memory.value("capture", capture_args(key="accepted-capture-01"))
    invalid = [
        capture_args(key="refused-capture-01", schema_version=1),
        put(capture_args(key="refused-capture-02"), "payload.components.0.text", ""),
        put(capture_args(key="refused-capture-03"), "evidence.evidence_digest", "sha256:0"),
        capture_args(key="refused-capture-04", primary_component_id="c9"),
    ]
    codes = [memory.code("capture", arguments) for arguments in invalid]
    assert codes == [SCHEMA, SCHEMA, BAD_DIGEST, SCHEMA]
    assert head(memory) == 1


def test_a_refused_capture_does_not_reserve_its_idempotency_key(memory: Memory) -> None:
    refusal = capture_args(key="reused-after-refusal", schema_version=3)
    assert refused(memory, "capture", refusal) == SCHEMA
    value = memory.value("capture", capture_args(key="reused-after-refusal"))
    assert value["status"] == "committed_pending"
    assert head(memory) == 1


# --- every tool: complete and minimal arguments pass ----------------------------------


@pytest.mark.parametrize("shape", ["minimal", "complete"])
@pytest.mark.parametrize("tool", list(MINIMAL))
def test_minimal_and_complete_valid_arguments_pass_validation(
    memory: Memory, tool: str, shape: str
) -> None:
    arguments = (MINIMAL if shape == "minimal" else FULL)[tool]()
    accepted(memory, tool, arguments)


# --- null, unknown fields, missing fields ---------------------------------------------


NULL_CASES = [
    pytest.param(tool, path, id=f"{tool}:{path}") for tool in FULL for path in paths(FULL[tool]())
]


@pytest.mark.parametrize(("tool", "path"), NULL_CASES)
def test_null_is_refused_in_every_field_and_array_item(
    memory: Memory, tool: str, path: str
) -> None:
    assert refused(memory, tool, put(FULL[tool](), path, None)) == SCHEMA


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        pytest.param("search", search_args(page_cursor=None), id="search:page_cursor"),
        pytest.param("capture", capture_args(retention=None), id="capture:retention"),
        pytest.param("capture", capture_args(reconciliation=None), id="capture:reconciliation"),
        pytest.param(
            "capture",
            capture_args(reconciliation={"family_refs": [None]}),
            id="capture:family_refs.0",
        ),
    ],
)
def test_null_is_refused_for_optional_fields_too(
    memory: Memory, tool: str, arguments: Args
) -> None:
    assert refused(memory, tool, arguments) == SCHEMA


UNKNOWN_FIELD_CASES = [
    pytest.param(tool, path, id=f"{tool}:{path or 'top'}")
    for tool in FULL
    for path in objects(FULL[tool]())
]


@pytest.mark.parametrize(("tool", "path"), UNKNOWN_FIELD_CASES)
def test_an_unknown_field_is_refused_at_every_level(memory: Memory, tool: str, path: str) -> None:
    field = f"{path}.note" if path else "note"
    assert refused(memory, tool, put(FULL[tool](), field, "x")) == SCHEMA


HOST_OWNED = (
    "tenant",
    "workspace",
    "scope",
    "principal",
    "agent_id",
    "session",
    "credential",
    "auditId",
    "deadline",
    "cancellation",
    "elicitationRef",
    "confirmed",
)


@pytest.mark.parametrize("field", HOST_OWNED)
@pytest.mark.parametrize("tool", list(MINIMAL))
def test_host_owned_context_in_arguments_is_an_unknown_field(
    memory: Memory, tool: str, field: str
) -> None:
    assert refused(memory, tool, {**MINIMAL[tool](), field: True}) == SCHEMA


REQUIRED = {
    "search": ["query", "purpose_ref"],
    "get": ["record_id", "purpose_ref"],
    "request_admission": ["candidate_id", "idempotency_key"],
    "withdraw": ["candidate_id", "idempotency_key", "reason_ref"],
    "forget": ["record_id", "idempotency_key", "reason_ref"],
    "capture": [
        "idempotency_key",
        "payload",
        "evidence",
        "payload.schema_version",
        "payload.purpose_ref",
        "payload.valid_time",
        "payload.valid_time.t",
        "payload.components",
        "payload.components.0.component_id",
        "payload.components.0.kind",
        "payload.components.0.text",
        "payload.components.0.citation_ids",
        "payload.primary_component_id",
        "payload.primary_event",
        "payload.primary_event.at",
        "payload.primary_event.type_ref",
        "payload.primary_event.citation_id",
        "payload.citations",
        "payload.citations.0.citation_id",
        "payload.citations.0.source_ref",
        "payload.citations.0.locator",
        "payload.citations.0.locator.scheme",
        "payload.citations.0.locator.value",
        "payload.citations.0.content_digest",
        "payload.reconciliation.family_refs",
        "evidence.evidence_ref",
        "evidence.evidence_digest",
        "evidence.citation_ids",
    ],
}


@pytest.mark.parametrize(
    ("tool", "path"),
    [pytest.param(tool, path, id=f"{tool}:{path}") for tool in REQUIRED for path in REQUIRED[tool]],
)
def test_a_missing_required_field_is_invalid_schema(memory: Memory, tool: str, path: str) -> None:
    assert refused(memory, tool, drop(FULL[tool](), path)) == SCHEMA


# --- opaque references: NFC, 1 to 512 UTF-8 bytes ------------------------------------


def with_second_component(component_id: str) -> Args:
    arguments = capture_args()
    arguments["payload"]["components"].append(component(component_id))
    return arguments


def with_primary_component(component_id: str) -> Args:
    arguments = put(capture_args(), "payload.components.0.component_id", component_id)
    arguments["payload"]["primary_component_id"] = component_id
    return arguments


def with_citation_id(citation_id: str) -> Args:
    """The one citation renamed everywhere it is referred to."""
    arguments = capture_args()
    payload = arguments["payload"]
    payload["citations"][0]["citation_id"] = citation_id
    payload["components"][0]["citation_ids"] = [citation_id]
    payload["primary_event"]["citation_id"] = citation_id
    arguments["evidence"]["citation_ids"] = [citation_id]
    return arguments


OPAQUE_SITES: dict[str, Callable[[str], tuple[str, Args]]] = {
    "search.purpose_ref": lambda v: ("search", search_args(purpose_ref=v)),
    "get.purpose_ref": lambda v: ("get", get_args(purpose_ref=v)),
    "capture.purpose_ref": lambda v: ("capture", capture_args(purpose_ref=v)),
    "component_id": lambda v: ("capture", with_second_component(v)),
    "primary_component_id": lambda v: ("capture", with_primary_component(v)),
    "citation_id": lambda v: ("capture", with_citation_id(v)),
    "source_ref": lambda v: ("capture", put(capture_args(), "payload.citations.0.source_ref", v)),
    "locator.scheme": lambda v: (
        "capture",
        put(capture_args(), "payload.citations.0.locator.scheme", v),
    ),
    "locator.value": lambda v: (
        "capture",
        put(capture_args(), "payload.citations.0.locator.value", v),
    ),
    "type_ref": lambda v: ("capture", put(capture_args(), "payload.primary_event.type_ref", v)),
    "evidence_ref": lambda v: ("capture", put(capture_args(), "evidence.evidence_ref", v)),
    "withdraw.reason_ref": lambda v: ("withdraw", withdraw_args(reason_ref=v)),
    "forget.reason_ref": lambda v: ("forget", forget_args(reason_ref=v)),
}

OPAQUE_VALID, OPAQUE_INVALID = byte_bounds(1, 512)
OPAQUE_VALID.append(pytest.param("caf\u00e9", id="nfc-precomposed-e-acute"))
OPAQUE_INVALID += [
    pytest.param("cafe\u0301", id="nfd-e-plus-combining-acute"),
    pytest.param("\u212b", id="angstrom-sign-not-nfc"),
    pytest.param(42, id="integer"),
]


def call_site(site: str, value: Any) -> tuple[str, Args, Binding | None]:
    """The tool and arguments with ``value`` at ``site``; a purpose is also bound by the host."""
    tool, arguments = OPAQUE_SITES[site](value)
    who = bound_to(value) if site.endswith("purpose_ref") and isinstance(value, str) else None
    return tool, arguments, who


@pytest.mark.parametrize("value", OPAQUE_VALID)
@pytest.mark.parametrize("site", list(OPAQUE_SITES))
def test_opaque_references_of_1_to_512_nfc_bytes_are_accepted(
    memory: Memory, site: str, value: str
) -> None:
    accepted(memory, *call_site(site, value))


@pytest.mark.parametrize("value", OPAQUE_INVALID)
@pytest.mark.parametrize("site", list(OPAQUE_SITES))
def test_opaque_references_empty_over_512_bytes_or_not_nfc_are_invalid_schema(
    memory: Memory, site: str, value: Any
) -> None:
    assert refused(memory, *call_site(site, value)) == SCHEMA


# --- text bounds: query, component text, attestation, idempotency key -----------------


QUERY_VALID, QUERY_INVALID = byte_bounds(1, 8192)
TEXT_VALID, TEXT_INVALID = byte_bounds(1, 65_536)
ATTESTATION_VALID, ATTESTATION_INVALID = byte_bounds(0, 4096)
KEY_VALID, KEY_INVALID = byte_bounds(16, 256)
KEY_INVALID.append(pytest.param("idempotency-cafe\u0301", id="nfd-not-nfc"))


def with_text(text: str) -> Args:
    return put(capture_args(), "payload.components.0.text", text)


def with_attestation(attestation: str) -> Args:
    return put(capture_args(), "evidence.attestation", attestation)


KEY_SITES: dict[str, Callable[[str], Args]] = {
    "capture": lambda key: capture_args(key=key),
    "request_admission": lambda key: admission_args(idempotency_key=key),
    "withdraw": lambda key: withdraw_args(idempotency_key=key),
    "forget": lambda key: forget_args(idempotency_key=key),
}


@pytest.mark.parametrize("query", QUERY_VALID)
def test_a_query_of_1_to_8192_bytes_is_accepted(memory: Memory, query: str) -> None:
    accepted(memory, "search", search_args(query=query))


@pytest.mark.parametrize("query", QUERY_INVALID)
def test_an_empty_query_or_one_over_8192_bytes_is_invalid_schema(
    memory: Memory, query: str
) -> None:
    assert refused(memory, "search", search_args(query=query)) == SCHEMA


@pytest.mark.parametrize("text", TEXT_VALID)
def test_component_text_of_1_to_65536_bytes_is_accepted(memory: Memory, text: str) -> None:
    accepted(memory, "capture", with_text(text))


@pytest.mark.parametrize("text", TEXT_INVALID)
def test_empty_component_text_or_over_65536_bytes_is_invalid_schema(
    memory: Memory, text: str
) -> None:
    assert refused(memory, "capture", with_text(text)) == SCHEMA


@pytest.mark.parametrize("attestation", ATTESTATION_VALID)
def test_an_attestation_of_0_to_4096_bytes_is_accepted(memory: Memory, attestation: str) -> None:
    accepted(memory, "capture", with_attestation(attestation))


@pytest.mark.parametrize("attestation", ATTESTATION_INVALID)
def test_an_attestation_over_4096_bytes_is_invalid_schema(memory: Memory, attestation: str) -> None:
    assert refused(memory, "capture", with_attestation(attestation)) == SCHEMA


@pytest.mark.parametrize("key", KEY_VALID)
@pytest.mark.parametrize("tool", list(KEY_SITES))
def test_an_idempotency_key_of_16_to_256_bytes_is_accepted(
    memory: Memory, tool: str, key: str
) -> None:
    accepted(memory, tool, KEY_SITES[tool](key))


@pytest.mark.parametrize("key", KEY_INVALID)
@pytest.mark.parametrize("tool", list(KEY_SITES))
def test_an_idempotency_key_under_16_or_over_256_bytes_or_not_nfc_is_invalid_schema(
    memory: Memory, tool: str, key: str
) -> None:
    assert refused(memory, tool, KEY_SITES[tool](key)) == SCHEMA


def test_four_four_byte_characters_make_a_valid_16_byte_key(memory: Memory) -> None:
    assert len("𝄞" * 4) == 4
    assert memory.value("capture", capture_args(key="𝄞" * 4))["status"] == "committed_pending"
    assert memory.code("capture", capture_args(key="a" * 15)) == SCHEMA


# --- counts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, SCHEMA), (1, "ok"), (64, "ok"), (65, SCHEMA)],
    ids=["0", "1", "64", "65"],
)
def test_a_capture_holds_1_to_64_components(memory: Memory, count: int, expected: str) -> None:
    arguments = with_components(count)
    check = accepted if expected == "ok" else refused
    assert check(memory, "capture", arguments) == expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, SCHEMA), (1, "ok"), (256, "ok"), (257, SCHEMA)],
    ids=["0", "1", "256", "257"],
)
def test_a_capture_holds_1_to_256_citations(memory: Memory, count: int, expected: str) -> None:
    check = accepted if expected == "ok" else refused
    assert check(memory, "capture", with_citations(count)) == expected


def cited_ids(count: int) -> list[str]:
    """``count`` distinct ids of which the first 256 resolve in ``with_citations(256)``."""
    return [f"cit{i:03d}" for i in range(count)]


@pytest.mark.parametrize("where", ["payload.components.0.citation_ids", "evidence.citation_ids"])
@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        pytest.param([], SCHEMA, id="0"),
        pytest.param(cited_ids(1), "ok", id="1"),
        pytest.param(cited_ids(256), "ok", id="256-distinct"),
        pytest.param(cited_ids(257), SCHEMA, id="257-distinct"),
        pytest.param(["cit000", "cit000"], SCHEMA, id="duplicate"),
    ],
)
def test_citation_id_lists_hold_1_to_256_distinct_ids(
    memory: Memory, where: str, ids: list[str], expected: str
) -> None:
    arguments = put(with_citations(256), where, ids)
    check = accepted if expected == "ok" else refused
    assert check(memory, "capture", arguments) == expected


@pytest.mark.parametrize("limit", [1, 10, 50])
def test_a_search_limit_of_1_to_50_is_accepted(memory: Memory, limit: int) -> None:
    accepted(memory, "search", search_args(limit=limit))


@pytest.mark.parametrize(
    "limit",
    [0, 51, -1, 10.5, 1.0, True, "10", float("inf"), float("nan"), [10]],
    ids=["0", "51", "-1", "10.5", "1.0", "true", "string", "inf", "nan", "array"],
)
def test_a_search_limit_outside_1_to_50_or_not_an_integer_is_invalid_schema(
    memory: Memory, limit: Any
) -> None:
    assert refused(memory, "search", search_args(limit=limit)) == SCHEMA


PACKET_SITES: dict[str, Callable[[Any], Args]] = {
    "search": lambda size: search_args(max_packet_bytes=size),
    "get": lambda size: get_args(max_packet_bytes=size),
}


@pytest.mark.parametrize("size", [4096, 65_536, 1_048_576])
@pytest.mark.parametrize("tool", list(PACKET_SITES))
def test_max_packet_bytes_of_4096_to_1048576_is_accepted(
    memory: Memory, tool: str, size: int
) -> None:
    accepted(memory, tool, PACKET_SITES[tool](size))


@pytest.mark.parametrize(
    "size",
    [4095, 1_048_577, 0, 4096.0, True, "65536"],
    ids=["4095", "1048577", "0", "4096.0", "true", "string"],
)
@pytest.mark.parametrize("tool", list(PACKET_SITES))
def test_max_packet_bytes_outside_its_bounds_or_not_an_integer_is_invalid_schema(
    memory: Memory, tool: str, size: Any
) -> None:
    assert refused(memory, tool, PACKET_SITES[tool](size)) == SCHEMA


# --- reconciliation family_refs: sorted, unique, at most 64 ---------------------------


FAMILIES = [f"fam:{i:02d}" for i in range(65)]


@pytest.fixture
def consenting(tmp_path: Path, clock: Clock) -> Memory:
    """A host that consents to every family these tests use."""
    families = frozenset([*FAMILIES, "fam:a", "fam:b"])
    return open_memory(tmp_path, clock, HostPolicy(reconciliation_families=families))


@pytest.mark.parametrize(
    "families",
    [
        pytest.param([], id="none"),
        pytest.param(["fam:a", "fam:b"], id="two-sorted"),
        pytest.param(FAMILIES[:64], id="64-sorted-unique"),
    ],
)
def test_sorted_unique_family_refs_up_to_64_are_accepted(
    consenting: Memory, families: list[str]
) -> None:
    accepted(consenting, "capture", capture_args(reconciliation={"family_refs": families}))


@pytest.mark.parametrize(
    "families",
    [
        pytest.param(FAMILIES, id="65"),
        pytest.param(["fam:b", "fam:a"], id="unsorted"),
        pytest.param(["fam:a", "fam:a"], id="duplicate"),
        pytest.param(["fam:a", "fam:b", "fam:a"], id="duplicate-and-unsorted"),
    ],
)
def test_family_refs_unsorted_duplicated_or_over_64_are_invalid_schema(
    consenting: Memory, families: list[str]
) -> None:
    arguments = capture_args(reconciliation={"family_refs": families})
    assert refused(consenting, "capture", arguments) == SCHEMA


# --- identifier patterns --------------------------------------------------------------


def malformed_ids(prefix: str, other: str) -> list[Any]:
    """Ids that break ``^<prefix>_[a-z2-7]+$``, each in one way."""
    upper = prefix.upper()
    return [
        pytest.param(f"{upper}_abcdef", id="uppercase-prefix"),
        pytest.param(f"{prefix}_ABCDEF", id="uppercase-body"),
        pytest.param(f"{prefix}_abcdeF", id="one-uppercase-letter"),
        pytest.param(f"{prefix}_abc0", id="digit-0"),
        pytest.param(f"{prefix}_abc1", id="digit-1"),
        pytest.param(f"{prefix}_abc8", id="digit-8"),
        pytest.param(f"{prefix}_abc9", id="digit-9"),
        pytest.param("abcdefgh", id="missing-prefix"),
        pytest.param(f"{prefix}_", id="prefix-only"),
        pytest.param(f"{prefix}-abcdef", id="hyphen-separator"),
        pytest.param(f"{other}_abcdef", id=f"{other}-prefix"),
        pytest.param(f"{prefix}_abc def", id="inner-space"),
        pytest.param(f" {prefix}_abcdef", id="leading-space"),
        pytest.param(f"{prefix}_abcdef ", id="trailing-space"),
        pytest.param(f"{prefix}_abcdef\n", id="trailing-newline"),
        pytest.param(f"{prefix}_abç", id="non-ascii-letter"),
        pytest.param("", id="empty"),
        pytest.param(7, id="integer"),
    ]


BAD_RECORD_IDS = malformed_ids("mem", "cand")
BAD_CANDIDATE_IDS = malformed_ids("cand", "mem")
RECORD_SITES: dict[str, Callable[[Any], Args]] = {
    "get": lambda record_id: get_args(record_id=record_id),
    "forget": lambda record_id: forget_args(record_id=record_id),
}
CANDIDATE_SITES: dict[str, Callable[[Any], Args]] = {
    "request_admission": lambda candidate_id: admission_args(candidate_id=candidate_id),
    "withdraw": lambda candidate_id: withdraw_args(candidate_id=candidate_id),
}
BASE32_BODY = "abcdefghijklmnopqrstuvwxyz234567"


@pytest.mark.parametrize("body", ["a", BASE32_BODY], ids=["one-letter", "whole-alphabet"])
@pytest.mark.parametrize("tool", list(RECORD_SITES))
def test_a_record_id_matching_mem_base32_is_accepted(memory: Memory, tool: str, body: str) -> None:
    accepted(memory, tool, RECORD_SITES[tool]("mem_" + body))


@pytest.mark.parametrize("record_id", BAD_RECORD_IDS)
@pytest.mark.parametrize("tool", list(RECORD_SITES))
def test_a_record_id_not_matching_mem_base32_is_invalid_schema(
    memory: Memory, tool: str, record_id: Any
) -> None:
    assert refused(memory, tool, RECORD_SITES[tool](record_id)) == SCHEMA


@pytest.mark.parametrize("body", ["a", BASE32_BODY], ids=["one-letter", "whole-alphabet"])
@pytest.mark.parametrize("tool", list(CANDIDATE_SITES))
def test_a_candidate_id_matching_cand_base32_is_accepted(
    memory: Memory, tool: str, body: str
) -> None:
    accepted(memory, tool, CANDIDATE_SITES[tool]("cand_" + body))


@pytest.mark.parametrize("candidate_id", BAD_CANDIDATE_IDS)
@pytest.mark.parametrize("tool", list(CANDIDATE_SITES))
def test_a_candidate_id_not_matching_cand_base32_is_invalid_schema(
    memory: Memory, tool: str, candidate_id: Any
) -> None:
    assert refused(memory, tool, CANDIDATE_SITES[tool](candidate_id)) == SCHEMA


# --- digests: sha256: + 64 lowercase hex ----------------------------------------------


DIGEST_SITES = {
    "content_digest": "payload.citations.0.content_digest",
    "evidence_digest": "evidence.evidence_digest",
}
MALFORMED_DIGESTS = [
    pytest.param("sha256:" + HEX.upper(), id="uppercase-hex"),
    pytest.param("sha256:" + HEX[:63], id="63-hex"),
    pytest.param("sha256:" + HEX + "0", id="65-hex"),
    pytest.param("sha512:" + hashlib.sha512(b"cited content").hexdigest(), id="sha512"),
    pytest.param("sha512:" + HEX, id="sha512-prefix-64-hex"),
    pytest.param("SHA256:" + HEX, id="uppercase-prefix"),
    pytest.param(HEX, id="no-prefix"),
    pytest.param("sha256:" + HEX[:63] + "g", id="non-hex-letter"),
    pytest.param("sha256-" + HEX, id="hyphen-separator"),
    pytest.param(" " + DIGEST, id="leading-space"),
    pytest.param(DIGEST + "\n", id="trailing-newline"),
    pytest.param("", id="empty"),
]
WELL_FORMED_DIGESTS = ["sha256:" + "0" * 64, "sha256:" + "f" * 64, DIGEST]


@pytest.mark.parametrize("value", WELL_FORMED_DIGESTS, ids=["zeros", "all-f", "real"])
@pytest.mark.parametrize("site", list(DIGEST_SITES))
def test_a_sha256_digest_of_64_lowercase_hex_is_accepted(
    memory: Memory, site: str, value: str
) -> None:
    accepted(memory, "capture", put(capture_args(), DIGEST_SITES[site], value))


@pytest.mark.parametrize("value", MALFORMED_DIGESTS)
@pytest.mark.parametrize("site", list(DIGEST_SITES))
def test_a_malformed_digest_alone_is_invalid_digest(memory: Memory, site: str, value: str) -> None:
    assert refused(memory, "capture", put(capture_args(), DIGEST_SITES[site], value)) == BAD_DIGEST


def test_two_malformed_digests_and_nothing_else_are_invalid_digest(memory: Memory) -> None:
    arguments = put(capture_args(), "evidence.evidence_digest", "sha256:" + HEX[:63])
    arguments = put(arguments, "payload.citations.0.content_digest", "sha512:" + HEX)
    assert refused(memory, "capture", arguments) == BAD_DIGEST


@pytest.mark.parametrize("value", [42, ["sha256:" + HEX]], ids=["integer", "array"])
@pytest.mark.parametrize("site", list(DIGEST_SITES))
def test_a_digest_that_is_not_a_string_is_invalid_schema(
    memory: Memory, site: str, value: Any
) -> None:
    assert refused(memory, "capture", put(capture_args(), DIGEST_SITES[site], value)) == SCHEMA


OTHER_VIOLATIONS: dict[str, Callable[[Args], Args]] = {
    "unknown-field": lambda a: put(a, "payload.note", "x"),
    "float-t": lambda a: put(a, "payload.valid_time.t", 1.0),
    "short-key": lambda a: put(a, "idempotency_key", "short"),
    "empty-text": lambda a: put(a, "payload.components.0.text", ""),
    "t_end-before-t": lambda a: put(a, "payload.valid_time.t_end", NOW - 2 * DAY),
    "duplicate-citation": lambda a: put(a, "payload.citations.1", a["payload"]["citations"][0]),
    "evidence-cites-unknown": lambda a: put(a, "evidence.citation_ids", ["cit9"]),
    "primary-unresolved": lambda a: put(a, "payload.primary_component_id", "c9"),
    "component-cites-unknown": lambda a: put(a, "payload.components.0.citation_ids", ["cit9"]),
}


@pytest.mark.parametrize("other", list(OTHER_VIOLATIONS))
def test_a_malformed_digest_with_any_other_violation_is_invalid_schema(
    memory: Memory, other: str
) -> None:
    bad = put(with_citations(2), "evidence.evidence_digest", "sha256:" + HEX.upper())
    assert refused(memory, "capture", OTHER_VIOLATIONS[other](bad)) == SCHEMA


# --- instants: YYYY-MM-DDTHH:mm:ss.sssZ ------------------------------------------------


def with_observed_at(instant: Any) -> Args:
    return put(capture_args(), "payload.citations.0.observed_at", instant)


def with_expires_at(instant: Any) -> Args:
    return capture_args(retention={"expires_at": instant})


INSTANT_SITES = {"observed_at": with_observed_at, "expires_at": with_expires_at}
MALFORMED_INSTANTS = [
    pytest.param("2027-01-20T08:00:00Z", id="no-millis"),
    pytest.param("2027-01-20T08:00:00.000+00:00", id="offset-instead-of-Z"),
    pytest.param("2027-01-20T08:00:00.000", id="no-zone"),
    pytest.param("2027-01-20T08:00:00.000z", id="lowercase-z"),
    pytest.param("2027-01-20 08:00:00.000Z", id="space-separator"),
    pytest.param("2027-01-20T08:00:00.00Z", id="2-digit-millis"),
    pytest.param("2027-01-20T08:00:00.0000Z", id="4-digit-millis"),
    pytest.param("2027-13-01T08:00:00.000Z", id="month-13"),
    pytest.param("2027-00-10T08:00:00.000Z", id="month-0"),
    pytest.param("2027-02-30T08:00:00.000Z", id="february-30"),
    pytest.param("2027-02-29T08:00:00.000Z", id="february-29-non-leap-year"),
    pytest.param("2027-01-20T24:00:00.000Z", id="hour-24"),
    pytest.param("2027-01-20T08:60:00.000Z", id="minute-60"),
    pytest.param("2027-01-20T08:00:60.000Z", id="second-60"),
    pytest.param("2027-1-20T08:00:00.000Z", id="one-digit-month"),
    pytest.param("2027-01-20", id="date-only"),
    pytest.param("2027-01-20T08:00:00.000Z\n", id="trailing-newline"),
    pytest.param("1800000000000", id="epoch-string"),
    pytest.param(1_800_000_000_000, id="epoch-integer"),
    pytest.param("", id="empty"),
]


@pytest.mark.parametrize("instant", MALFORMED_INSTANTS)
@pytest.mark.parametrize("site", list(INSTANT_SITES))
def test_an_instant_not_in_canonical_millisecond_utc_form_is_invalid_schema(
    memory: Memory, site: str, instant: Any
) -> None:
    assert refused(memory, "capture", INSTANT_SITES[site](instant)) == SCHEMA


@pytest.mark.parametrize(
    "instant",
    [
        "1970-01-01T00:00:00.000Z",
        "2028-02-29T23:59:59.999Z",
        "2027-01-15T08:00:00.000Z",
        "2099-12-31T23:59:59.999Z",
    ],
    ids=["epoch", "leap-day", "capture-time", "far-future"],
)
def test_a_canonical_observed_at_is_accepted(memory: Memory, instant: str) -> None:
    accepted(memory, "capture", with_observed_at(instant))


@pytest.mark.parametrize(
    ("instant", "expected"),
    [
        pytest.param("2027-01-15T08:00:00.001Z", "ok", id="1ms-after-capture"),
        pytest.param("2027-02-14T08:00:00.000Z", "ok", id="at-the-30-day-ceiling"),
        pytest.param("2027-02-14T08:00:00.001Z", "UNAUTHORIZED", id="1ms-past-the-ceiling"),
    ],
)
def test_a_canonical_expires_at_passes_the_schema(
    memory: Memory, instant: str, expected: str
) -> None:
    assert accepted(memory, "capture", with_expires_at(instant), expected=expected) == expected


@pytest.mark.parametrize(
    "instant",
    ["2027-01-15T08:00:00.000Z", "2027-01-15T07:59:59.999Z"],
    ids=["at-capture-time", "1ms-before-capture"],
)
def test_an_expires_at_not_after_capture_time_is_invalid_schema(
    memory: Memory, instant: str
) -> None:
    assert refused(memory, "capture", with_expires_at(instant)) == SCHEMA


EARLIEST_MS = -62_135_596_800_000  # 0001-01-01T00:00:00.000Z
LATEST_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


@given(st.integers(min_value=EARLIEST_MS, max_value=LATEST_MS))
def test_instants_round_trip_and_agree_with_the_calendar(epoch_ms: int) -> None:
    import datetime as dt

    text = format_instant(epoch_ms)
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=epoch_ms)
    assert text == (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )
    assert re.fullmatch(INSTANT_PATTERN, text)
    assert parse_instant(text) == epoch_ms


def test_instant_edges_are_exact() -> None:
    assert format_instant(0) == "1970-01-01T00:00:00.000Z"
    assert format_instant(-1) == "1969-12-31T23:59:59.999Z"
    assert format_instant(EARLIEST_MS) == "0001-01-01T00:00:00.000Z"
    assert format_instant(LATEST_MS) == "9999-12-31T23:59:59.999Z"
    assert parse_instant("2028-02-29T23:59:59.999Z") == 1_835_481_599_999
    assert parse_instant("0000-01-01T00:00:00.000Z") is None
    assert parse_instant("2027-1-20T08:00:00.0000Z") is None  # 24 characters, not canonical
    assert parse_instant("２027-01-20T08:00:00.000Z") is None  # a full-width digit


# --- safe integers ---------------------------------------------------------------------


INTEGER_SITES: dict[str, Callable[[Any], Args]] = {
    "valid_time.t": lambda t: capture_args(valid_time={"t": t}),
    "valid_time.t_end": lambda t_end: capture_args(valid_time={"t": -SAFE, "t_end": t_end}),
    "primary_event.at": lambda at: put(capture_args(), "payload.primary_event.at", at),
}


@pytest.mark.parametrize("value", [SAFE, -SAFE, 0], ids=["max-safe", "min-safe", "zero"])
@pytest.mark.parametrize("site", list(INTEGER_SITES))
def test_safe_integers_are_accepted(memory: Memory, site: str, value: int) -> None:
    accepted(memory, "capture", INTEGER_SITES[site](value))


@pytest.mark.parametrize(
    "value",
    [SAFE + 1, -SAFE - 1, 10**20, 1.0, float(NOW), 1.5, True, False, "1", [1]],
    ids=[
        "max-safe-plus-1",
        "min-safe-minus-1",
        "1e20",
        "1.0",
        "float-epoch",
        "1.5",
        "true",
        "false",
        "string",
        "array",
    ],
)
@pytest.mark.parametrize("site", list(INTEGER_SITES))
def test_unsafe_or_non_integer_numbers_are_invalid_schema(
    memory: Memory, site: str, value: Any
) -> None:
    assert refused(memory, "capture", INTEGER_SITES[site](value)) == SCHEMA


def test_t_end_equal_to_t_is_accepted(memory: Memory) -> None:
    accepted(memory, "capture", capture_args(valid_time={"t": NOW, "t_end": NOW}))


def test_t_end_before_t_is_invalid_schema(memory: Memory) -> None:
    arguments = capture_args(valid_time={"t": NOW, "t_end": NOW - 1})
    assert refused(memory, "capture", arguments) == SCHEMA


# --- enumerations and schema_version ---------------------------------------------------


ENUM_SITES: dict[str, tuple[str, Callable[[Any], Args]]] = {
    "kind": ("capture", lambda v: put(capture_args(), "payload.components.0.kind", v)),
    "derivative_rule": ("capture", lambda v: capture_args(retention={"derivative_rule": v})),
    "minimum_channels": (
        "search",
        lambda v: search_args(capability_policy={"minimum_channels": v}),
    ),
    "network": ("search", lambda v: search_args(capability_policy={"network": v})),
}


@pytest.mark.parametrize(
    ("site", "value", "expected"),
    [
        ("kind", "context", "ok"),
        ("kind", "decision", "ok"),
        ("kind", "evidence", "ok"),
        ("derivative_rule", "make-ineligible", "ok"),
        ("derivative_rule", "retain", "UNAUTHORIZED"),  # the default host allows no retain
        ("minimum_channels", "lexical", "ok"),
        ("minimum_channels", "lexical_and_semantic", "RANKING_UNAVAILABLE"),
        ("network", "forbid", "ok"),
        ("network", "allow", "ok"),
    ],
)
def test_every_enumerated_value_passes_the_schema(
    memory: Memory, site: str, value: str, expected: str
) -> None:
    tool, build = ENUM_SITES[site]
    assert accepted(memory, tool, build(value), expected=expected) == expected


@pytest.mark.parametrize(
    ("site", "value"),
    [
        ("kind", "Decision"),
        ("kind", "fact"),
        ("kind", ""),
        ("kind", 1),
        ("derivative_rule", "Retain"),
        ("derivative_rule", "make_ineligible"),
        ("derivative_rule", "delete"),
        ("minimum_channels", "semantic"),
        ("minimum_channels", "Lexical"),
        ("minimum_channels", "lexical_or_semantic"),
        ("network", "deny"),
        ("network", "Allow"),
        ("network", True),
    ],
)
def test_a_value_outside_an_enumeration_is_invalid_schema(
    memory: Memory, site: str, value: Any
) -> None:
    tool, build = ENUM_SITES[site]
    assert refused(memory, tool, build(value)) == SCHEMA


@pytest.mark.parametrize(
    "version", [1, 3, 0, -2, 2.5, "2", True], ids=["1", "3", "0", "-2", "2.5", "string", "true"]
)
def test_a_schema_version_other_than_2_is_invalid_schema(memory: Memory, version: Any) -> None:
    assert refused(memory, "capture", capture_args(schema_version=version)) == SCHEMA


# --- cross-references -----------------------------------------------------------------


def duplicate_citation() -> Args:
    arguments = capture_args()
    arguments["payload"]["citations"].append(citation("cit1"))
    return arguments


def duplicate_component() -> Args:
    arguments = capture_args()
    arguments["payload"]["components"].append(component("c1"))
    return arguments


def event_cites_outside_primary() -> Args:
    """cit2 exists and another component cites it, but not the primary one."""
    arguments = capture_args()
    arguments["payload"]["citations"].append(citation("cit2"))
    arguments["payload"]["components"].append(component("c2", cites="cit2"))
    arguments["payload"]["primary_event"]["citation_id"] = "cit2"
    return arguments


def event_cites_inside_primary() -> Args:
    arguments = capture_args()
    arguments["payload"]["citations"].append(citation("cit2"))
    arguments["payload"]["components"][0]["citation_ids"] = ["cit1", "cit2"]
    arguments["payload"]["primary_event"]["citation_id"] = "cit2"
    return arguments


CROSS_REFERENCE_VIOLATIONS: dict[str, Callable[[], Args]] = {
    "duplicate-citation_id": duplicate_citation,
    "duplicate-component_id": duplicate_component,
    "component-cites-unknown-citation": lambda: put(
        capture_args(), "payload.components.0.citation_ids", ["cit1", "cit9"]
    ),
    "primary_component_id-unresolved": lambda: capture_args(primary_component_id="c9"),
    "primary_event-citation-unknown": lambda: put(
        capture_args(), "payload.primary_event.citation_id", "cit9"
    ),
    "primary_event-citation-not-in-primary-component": event_cites_outside_primary,
    "evidence-cites-unknown-citation": lambda: put(
        capture_args(), "evidence.citation_ids", ["cit1", "cit9"]
    ),
}


@pytest.mark.parametrize("violation", list(CROSS_REFERENCE_VIOLATIONS))
def test_every_cross_reference_violation_is_invalid_schema(memory: Memory, violation: str) -> None:
    assert refused(memory, "capture", CROSS_REFERENCE_VIOLATIONS[violation]()) == SCHEMA


def test_a_primary_event_citing_a_citation_of_the_primary_component_is_accepted(
    memory: Memory,
) -> None:
    accepted(memory, "capture", event_cites_inside_primary())


def test_an_uncited_extra_citation_is_accepted(memory: Memory) -> None:
    accepted(memory, "capture", with_citations(2))


# --- the serialized argument ceiling --------------------------------------------------


@pytest.mark.parametrize("char", list(CHARS.values()), ids=list(CHARS))
def test_arguments_one_byte_over_1048576_serialized_bytes_are_invalid_schema(
    memory: Memory, char: str
) -> None:
    arguments = capture_of_size(CEILING + 1, char)
    assert serialized_size(arguments) == CEILING + 1
    assert refused(memory, "capture", arguments) == SCHEMA


@pytest.mark.parametrize("char", list(CHARS.values()), ids=list(CHARS))
def test_arguments_of_exactly_1048576_serialized_bytes_are_accepted(
    memory: Memory, char: str
) -> None:
    arguments = capture_of_size(CEILING, char)
    assert serialized_size(arguments) == CEILING
    accepted(memory, "capture", arguments)


def test_the_ceiling_counts_bytes_not_characters(memory: Memory) -> None:
    arguments = capture_of_size(CEILING + 1, "𝄞")
    assert len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))) < CEILING // 3
    assert refused(memory, "capture", arguments) == SCHEMA


# --- never an exception ---------------------------------------------------------------


SURROGATE_CASES: dict[str, tuple[str, Args]] = {
    "query": ("search", search_args(query="digests \ud800")),
    "page_cursor": ("search", search_args(page_cursor="\ud800")),
    "record_id": ("get", get_args(record_id="mem_abc\udc00")),
    "text": ("capture", with_text("text \ud800")),
    "attestation": ("capture", with_attestation("\udfff")),
    "idempotency_key": ("capture", capture_args(key="agent-a.task-42.\ud800")),
    "component_id": ("capture", with_second_component("\ud800")),
    "citation_id": ("capture", with_citation_id("cit\ud800")),
    "source_ref": ("capture", put(capture_args(), "payload.citations.0.source_ref", "\ud800")),
    "content_digest": ("capture", put(capture_args(), DIGEST_SITES["content_digest"], "\ud800")),
    "observed_at": ("capture", with_observed_at("\ud800")),
    "family_ref": ("capture", capture_args(reconciliation={"family_refs": ["\ud800"]})),
    "unknown-field-name": ("search", {**search_args(), "\ud800": 1}),
    "unknown-field-value": ("get", get_args(note="\ud800")),
    "candidate_id": ("request_admission", admission_args(candidate_id="\ud800")),
    "reason_ref": ("withdraw", withdraw_args(reason_ref="\udc00")),
    "forget.record_id": ("forget", forget_args(record_id="\ud800")),
}


@pytest.mark.parametrize("where", list(SURROGATE_CASES))
def test_a_lone_surrogate_anywhere_is_invalid_schema_never_an_exception(
    memory: Memory, where: str
) -> None:
    tool, arguments = SURROGATE_CASES[where]
    assert refused(memory, tool, arguments) == SCHEMA


def test_a_deeply_nested_unknown_field_is_invalid_schema_never_an_exception(
    memory: Memory,
) -> None:
    nested: list[Any] = []
    for _ in range(50_000):  # 100,000 bytes: far under the argument ceiling
        nested = [nested]
    assert refused(memory, "search", search_args(note=nested)) == SCHEMA


def test_an_integer_too_long_to_print_is_invalid_schema_never_an_exception(
    memory: Memory,
) -> None:
    assert refused(memory, "search", search_args(limit=10**5000)) == SCHEMA


# --- property: any JSON-like arguments get an envelope --------------------------------


KNOWN_KEYS = sorted(
    {path.rsplit(".", 1)[-1] for tool in FULL for path in paths(FULL[tool]())} - set("0123456789")
)
KNOWN_STRINGS = [
    PURPOSE,
    KEY,
    DIGEST,
    RECORD_ID,
    CANDIDATE_ID,
    "cit1",
    "c1",
    "2027-01-20T08:00:00.000Z",
]
# A lone surrogate is valid JSON ("\ud800" decodes), so it belongs among the inputs.
TRICKY_STRINGS = ["", "\ud800", "e\u0301", "𝄞" * 4]
STRINGS = st.text(max_size=12) | st.sampled_from(KNOWN_STRINGS) | st.sampled_from(TRICKY_STRINGS)
KEYS = st.sampled_from(KNOWN_KEYS) | st.text(max_size=8)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | STRINGS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=16,
)


@st.composite
def mutated(draw: st.DrawFn, tool: str) -> Args:
    """Valid complete arguments with one field replaced, removed, or one field added."""
    arguments = FULL[tool]()
    path = draw(st.sampled_from(list(paths(arguments))))
    change = draw(st.sampled_from(["replace", "remove", "add"]))
    if change == "replace":
        return put(arguments, path, draw(JSON))
    if change == "remove" and not path.split(".")[-1].isdigit():
        return drop(arguments, path)
    parent = draw(st.sampled_from(list(objects(arguments))))
    return set_field(arguments, parent, draw(KEYS), draw(JSON))


def foreign_purpose(tool: str, arguments: Any) -> bool:
    """Whether the host refuses before the schema: a purpose_ref string not the bound one."""
    holder = arguments.get("payload") if tool == "capture" else arguments
    purpose = holder.get("purpose_ref") if isinstance(holder, dict) else None
    return isinstance(purpose, str) and purpose != PURPOSE


def assert_answers_with_an_envelope(memory: Memory, tool: str, arguments: Any) -> None:
    try:
        envelope = memory.call(tool, arguments)
    except TrustedContextUnavailable:
        # memory-contract §0: a purpose mismatch is a protocol refusal, not an envelope.
        assert foreign_purpose(tool, arguments)
        return
    assert envelope["redactionClass"] == "high"
    assert AUDIT_ID.fullmatch(envelope["auditId"])
    if not envelope["ok"]:
        assert envelope["error"]["code"] in CONTRACT_CODES, envelope
        assert set(envelope) == {"ok", "auditId", "redactionClass", "error"}


PROPERTY_SETTINGS = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("tool", list(MINIMAL))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_any_json_object_as_arguments_gets_an_envelope_never_an_exception(
    memory: Memory, tool: str, data: st.DataObject
) -> None:
    arguments = data.draw(st.dictionaries(KEYS, JSON, max_size=6), label="arguments")
    assert_answers_with_an_envelope(memory, tool, arguments)


@pytest.mark.parametrize("tool", list(MINIMAL))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_valid_arguments_with_one_field_changed_get_an_envelope_never_an_exception(
    memory: Memory, tool: str, data: st.DataObject
) -> None:
    arguments = data.draw(mutated(tool), label="arguments")
    assert_answers_with_an_envelope(memory, tool, arguments)
