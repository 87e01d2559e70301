"""Enforcing the closed schemas: JSON Schema plus the rules it cannot express.

Order of checks for a call: the serialized argument ceiling, the JSON Schema (with
our byte, NFC and instant keywords, and integers that are JSON integers, never
``1.0`` or ``true``), then cross-references. Any violation is ``INVALID_SCHEMA``,
except that a call whose only violations are malformed digests is
``INVALID_DIGEST``.

The schema is checked twice over only when it fails: the compiled form
(:mod:`engram.memory.compiled_schema`, about 15 µs for a capture) accepts a valid
call, and ``jsonschema``, the reference, names the violations of a refused one. Both
are built once per tool, on first use (neither is on the server's start-up path).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any, Final

from engram.errors import InvalidDigest, InvalidSchema
from engram.memory.compiled_schema import CompiledCheck, StringKeyword, compile_schema
from engram.memory.schemas import (
    ARGUMENT_CEILING_BYTES,
    DIGEST_PATTERN,
    INPUT_SCHEMAS,
    input_schema,
)
from engram.safety.display import displayable

__all__ = ["validate_arguments"]

_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def validate_arguments(tool: str, arguments: Mapping[str, Any]) -> None:
    """Raise ``InvalidSchema`` / ``InvalidDigest`` unless ``arguments`` are valid."""
    if not isinstance(arguments, Mapping):
        raise InvalidSchema("arguments are not an object")
    try:
        size = len(_COMPACT.encode(arguments).encode())
    except (UnicodeError, ValueError, RecursionError) as exc:
        # Lone surrogates, integers beyond Python's digit limit, absurd nesting.
        raise InvalidSchema("arguments are not encodable JSON text") from exc
    if size > ARGUMENT_CEILING_BYTES:
        raise InvalidSchema("arguments exceed 1,048,576 bytes")
    errors = [] if _accepts(tool, arguments) else list(_validator(tool).iter_errors(arguments))
    digest_only = all(
        error.validator == "pattern" and error.schema.get("pattern") == DIGEST_PATTERN
        for error in errors
    )
    if errors and not digest_only:
        raise InvalidSchema(f"{errors[0].validator} at {_where(errors[0])}")
    # Digest errors leave the structure intact, so cross-references can still be
    # checked; a call is INVALID_DIGEST only when a digest is its one problem.
    problem = _cross_reference_problem(tool, arguments)
    if problem:
        raise InvalidSchema(problem)
    if errors:
        raise InvalidDigest(f"malformed digest at {_where(errors[0])}")


def _where(error: Any) -> str:
    # Only the path of positions and our own key names; never input values or keys.
    return "/" + "/".join(
        str(part) for part in error.absolute_path if isinstance(part, int) or part in _KNOWN_KEYS
    )


def _property_names(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        yield from schema.get("properties", {})
        for value in schema.values():
            yield from _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _property_names(value)


_KNOWN_KEYS = frozenset(_property_names(INPUT_SCHEMAS))


def _utf8_size(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate is not text
        return -1


def _is_instant(text: str) -> bool:
    return parse_instant(text) is not None


#: engram's string keywords, as checks of one string (shared by both validators).
_STRING_KEYWORDS: dict[str, StringKeyword] = {
    "x-engram-utf8Bytes": lambda bounds: (
        lambda text: bounds["min"] <= _utf8_size(text) <= bounds["max"]
    ),
    "x-engram-nfc": lambda wanted: _is_nfc if wanted else None,
    "x-engram-instant": lambda wanted: _is_instant if wanted else None,
    "x-engram-displayable": lambda wanted: displayable if wanted else None,
    "x-engram-no-secret": lambda wanted: _holds_no_secret if wanted else None,
}


def _accepts(tool: str, arguments: Mapping[str, Any]) -> bool:
    """The fast path: whether the compiled schema accepts ``arguments``."""
    from fastjsonschema import JsonSchemaException

    try:
        _compiled(tool)(arguments)
    except (JsonSchemaException, TypeError, RecursionError):
        # Its uniqueItems cannot hash a list inside a tuple, and recurses two frames per
        # level of nesting: the reference decides such calls.
        return False
    return True


@cache
def _compiled(tool: str) -> CompiledCheck:
    return compile_schema(input_schema(tool), _STRING_KEYWORDS)


@cache
def _validator(tool: str) -> Any:
    """The reference validator (``jsonschema``): every violation, by keyword and path."""
    from jsonschema import Draft202012Validator, validators

    def string_keyword(keyword: str) -> Any:
        make = _STRING_KEYWORDS[keyword]

        def validate(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            check = make(value)
            if isinstance(instance, str) and check is not None and not check(instance):
                yield _error(keyword)

        return validate

    def pattern(validator: Any, regex: str, instance: Any, schema: Any) -> Iterator[Any]:
        # ECMA-262 semantics: "$" ends the input; Python's "$" also matches before a
        # final newline, which would let "mem_abc\n" through.
        if isinstance(instance, str) and not _ecma(regex).search(instance):
            yield _error("pattern")

    # Integers are JSON integers, never 1.0 or true; a tuple is an array, as in
    # canonical JSON (and in the compiled form).
    strict_types = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda checker, value: (
                isinstance(value, int) and not isinstance(value, bool)
            ),
            "array": lambda checker, value: isinstance(value, list | tuple),
        }
    )
    cls = validators.extend(
        Draft202012Validator,
        {**{keyword: string_keyword(keyword) for keyword in _STRING_KEYWORDS}, "pattern": pattern},
        type_checker=strict_types,
    )
    return cls(input_schema(tool))


@cache
def _ecma(regex: str) -> re.Pattern[str]:
    if regex.endswith("$") and not regex.endswith("\\$"):
        regex = regex[:-1] + r"\Z"
    return re.compile(regex)


def _error(keyword: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(f"violates {keyword}", validator=keyword)


def _holds_no_secret(text: str) -> bool:
    # Imported when a field needs it: the secret rules (compiled patterns) are not loaded
    # by a server that only searches and reads.
    from engram.safety.disguise import contains_disguised_secret

    return not contains_disguised_secret([text])


def _is_nfc(text: str) -> bool:
    try:
        return unicodedata.is_normalized("NFC", text)
    except UnicodeError:
        return False


def _utf16(text: str) -> bytes:
    # "Sorted" as JavaScript and RFC 8785 sort strings: by UTF-16 code units.
    return text.encode("utf-16-be", "surrogatepass")


_INSTANT: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z"
)
_EPOCH: Final = dt.datetime(1970, 1, 1)
_MILLISECOND: Final = dt.timedelta(milliseconds=1)


def parse_instant(text: str) -> int | None:
    """Epoch milliseconds of a canonical instant, or ``None`` if it names no instant."""
    match = _INSTANT.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, milliseconds = map(int, match.groups())
    try:
        moment = dt.datetime(year, month, day, hour, minute, second)
    except ValueError:  # not a calendar instant: 2024-02-30, 25:00
        return None
    return (moment - _EPOCH) // _MILLISECOND + milliseconds


@lru_cache(maxsize=256)  # one call formats the same few instants several times
def format_instant(epoch_ms: int) -> str:
    """The canonical instant for epoch milliseconds (exact integer arithmetic)."""
    moment = _EPOCH + dt.timedelta(milliseconds=epoch_ms)
    return moment.isoformat(timespec="milliseconds") + "Z"


def _cross_reference_problem(tool: str, arguments: Mapping[str, Any]) -> str | None:
    if tool != "capture":
        return None
    payload, evidence = arguments["payload"], arguments["evidence"]
    citation_ids = [citation["citation_id"] for citation in payload["citations"]]
    component_ids = [component["component_id"] for component in payload["components"]]
    known = set(citation_ids)
    primary = next(
        (c for c in payload["components"] if c["component_id"] == payload["primary_component_id"]),
        None,
    )
    event_citation = payload["primary_event"]["citation_id"]
    valid_time = payload["valid_time"]
    families = payload.get("reconciliation", {}).get("family_refs", [])
    checks = [
        (len(set(citation_ids)) == len(citation_ids), "citation_id values are not unique"),
        (len(set(component_ids)) == len(component_ids), "component_id values are not unique"),
        (
            all(set(c["citation_ids"]) <= known for c in payload["components"]),
            "a component cites an unknown citation",
        ),
        (primary is not None, "primary_component_id does not resolve"),
        (
            primary is not None and event_citation in primary["citation_ids"],
            "primary_event.citation_id is not cited by the primary component",
        ),
        (event_citation in known, "primary_event.citation_id does not resolve"),
        (set(evidence["citation_ids"]) <= known, "evidence cites an unknown citation"),
        (valid_time.get("t_end", valid_time["t"]) >= valid_time["t"], "t_end is before t"),
        (families == sorted(families, key=_utf16), "reconciliation.family_refs is not sorted"),
    ]
    return next((reason for holds, reason in checks if not holds), None)
