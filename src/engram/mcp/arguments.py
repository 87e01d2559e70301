"""Checking project-tool arguments against their published closed schema.

The same ``jsonschema`` (Draft 2020-12) the governed tools use; errors name the
field and the rule, which is fine here: project tools serve the developer's own
repository. The validator is built once per schema, on first use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from engram.errors import InvalidArguments

__all__ = ["InvalidArguments", "check_arguments"]


@cache
def _validator(schema_json: str) -> Any:
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    )
    cls = validators.extend(
        Draft202012Validator,
        {"x-engram-oneRequired": _one_required},
        type_checker=checker,
    )
    return cls(json.loads(schema_json))


def _one_required(validator: Any, names: Any, instance: Any, schema: Any) -> Any:
    """At least one of ``names`` is given (a top-level ``anyOf`` of ``required`` would say
    the same, but hosts refuse a tool whose schema has one)."""
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, dict) and not any(name in instance for name in names):
        yield ValidationError(
            f"give {' or '.join(repr(name) for name in names)}", validator="x-engram-oneRequired"
        )


_RULES = {
    "type": "must be of type {}",
    "enum": "must be one of {}",
    "const": "must be {}",
    "minLength": "must have at least {} characters",
    "maxLength": "must have at most {} characters",
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
    "uniqueItems": "must not name an item twice",
}


def _describe(error: Any) -> str:
    # Never echo the value itself: it may be long, or hold what should not be repeated.
    if error.validator in ("minItems", "minLength") and error.validator_value == 1:
        return "must not be empty"
    if error.validator in _RULES:
        return _RULES[error.validator].format(json.dumps(error.validator_value))
    if error.validator in ("required", "additionalProperties", "x-engram-oneRequired"):
        return str(error.message)
    if error.validator == "anyOf":
        return "must be one of: " + "; or ".join(_shape(option) for option in error.validator_value)
    return f"does not satisfy {error.validator}"


def _shape(schema: Mapping[str, Any]) -> str:
    """What a value of ``schema`` looks like, in a few words."""
    if "const" in schema:
        return json.dumps(schema["const"])
    if schema.get("type") == "array":
        items = schema.get("items", {})
        low = items.get("minimum")
        kind = f"{items.get('type', 'item')}s" + (f" >= {low}" if low is not None else "")
        unique = ", each once" if schema.get("uniqueItems") else ""
        return (
            f"a non-empty list of {kind}{unique}"
            if schema.get("minItems")
            else f"a list of {kind}{unique}"
        )
    return str(schema.get("type", "a value"))


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Raise ``InvalidArguments`` naming the first problem."""
    from jsonschema.exceptions import best_match

    validator = _validator(json.dumps(schema, sort_keys=True))
    # The most specific problem: inside an anyOf, the rule of the alternative that fits.
    error = best_match(validator.iter_errors(dict(arguments)))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        raise InvalidArguments(f"{where}: {_describe(error)}")
