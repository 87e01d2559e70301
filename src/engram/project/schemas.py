"""The closed input schemas of the project tools (``engram_*``), and the schema of
their envelope.

The input schemas are published in ``tools/list`` and enforced with the same
``jsonschema`` validator as the governed tools. ``ENVELOPE_OUTPUT`` describes the JSON of
``content[1]``; it is not published as an ``outputSchema``, since a project tool answers
without ``structuredContent`` (docs/protocol.md, "How each block of a tool result is
read"). Kept as plain data so that listing tools imports nothing heavy.

No schema has a combinator at its top level (``anyOf``, ``oneOf``, ``allOf``, ``not``,
``if``): Claude Code drops such a tool (the Anthropic API refuses it). "One of these
arguments is required" is engram's own keyword, ``x-engram-oneRequired``, which a host
ignores and :mod:`engram.mcp.arguments` enforces.
"""

from __future__ import annotations

from typing import Any, Final

from engram.project.limits import MAX_CANDIDATE_TEXT, MAX_QUERY

__all__ = ["CONTRACT_VERSION", "ENVELOPE_OUTPUT", "INPUT"]

CONTRACT_VERSION: Final = "1"
_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_TEXT: Final = {"type": "string", "minLength": 1, "maxLength": MAX_CANDIDATE_TEXT}
_QUERY: Final = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY}
_TYPE: Final = {"type": "string", "enum": ["rule", "skill", "workflow", "knowledge"]}
_ROLE: Final = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": 64},
        {
            "type": "array",
            "maxItems": 16,
            "items": {"type": "string", "minLength": 1, "maxLength": 64},
        },
    ]
}


def _closed(
    properties: dict[str, Any],
    required: tuple[str, ...] = (),
    one_required: tuple[str, ...] = (),
) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "$schema": _DIALECT,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    if one_required:
        schema["x-engram-oneRequired"] = list(one_required)
    return schema


INPUT: Final[dict[str, dict[str, Any]]] = {
    "engram_load": _closed(
        {
            "query": {
                **_QUERY,
                "description": "The task; 'current session' loads the start-up set.",
            },
            "id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 128,
                "description": "Load one memory by id (budget_tokens has no effect).",
            },
            "budget_tokens": {"type": "integer", "minimum": 200, "maximum": 16_000},
            "disclosure": {"type": "string", "enum": ["tiered", "cards"]},
            "full": {"type": "boolean"},
            "explain": {"type": "boolean"},
        }
    ),
    "engram_route": _closed(
        {"query": _QUERY, "task": {**_QUERY, "description": "The same as query."}},
        one_required=("query", "task"),
    ),
    "engram_search": _closed(
        {
            "query": _QUERY,
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "min_confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        ("query",),
    ),
    "engram_verify": _closed({"scope": {"type": "string", "enum": ["workspace", "global", "all"]}}),
    "engram_status": _closed({}),
    "engram_save": _closed(
        {
            "text": _TEXT,
            "type": _TYPE,
            "scope": {"type": "string", "enum": ["workspace", "global", "both"]},
            "role": _ROLE,
            "source_files": {
                "type": "array",
                "maxItems": 32,
                "items": {"type": "string", "minLength": 1, "maxLength": 1024},
                "description": "Repository files the memory stands on, relative to its root"
                " (files named in the text are found without it)",
            },
        },
        ("text",),
    ),
    "engram_save_session": _closed(
        {
            "text": {**_TEXT, "description": "One candidate per line: 'TYPE: rule | TEXT: ...'"},
            "scope": {"type": "string", "enum": ["workspace", "global", "both"]},
            "role": _ROLE,
            "showRuleVariants": {"type": "boolean"},
        },
        ("text",),
    ),
    "engram_commit": _closed(
        {
            "approval_token": {"type": "string", "minLength": 16, "maxLength": 256},
            "approve": {
                "anyOf": [
                    {"const": "all"},
                    {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 256,
                        "uniqueItems": True,
                        "items": {"type": "integer", "minimum": 1},
                    },
                ]
            },
        },
        ("approval_token", "approve"),
    ),
    "engram_set_role": _closed(
        {
            "role": {"type": "string", "minLength": 1, "maxLength": 64},
            "roles": {
                "type": "array",
                "maxItems": 16,
                "items": {"type": "string", "minLength": 1, "maxLength": 64},
            },
        },
        one_required=("role", "roles"),
    ),
    "engram_set_rule_variant": _closed(
        {"variant": {"type": "string", "enum": ["off", "light", "balanced", "strict", "status"]}},
        ("variant",),
    ),
    "engram_note": _closed(
        {
            "text": {"type": "string", "minLength": 1, "maxLength": 8192},
            "objective": {"type": "string", "maxLength": 512},
            "type": _TYPE,
            "scope": {"type": "string", "enum": ["workspace", "global"]},
        },
        ("text",),
    ),
}

ENVELOPE_OUTPUT: Final = {
    "$schema": _DIALECT,
    "type": "object",
    "required": ["contract_version", "ok", "diagnostics"],
    "properties": {
        "contract_version": {"const": CONTRACT_VERSION},
        "ok": {"type": "boolean"},
        "data": {"type": "object"},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        },
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "severity", "message"],
                "properties": {
                    "id": {"type": "string"},
                    "severity": {"type": "string", "enum": ["info", "warning", "error"]},
                    "message": {"type": "string"},
                    "remediation": {"type": "string"},
                },
            },
        },
    },
}
