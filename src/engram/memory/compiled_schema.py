"""A closed input schema compiled to Python code: validation's fast path.

``jsonschema`` interprets a schema node by node and takes about 0.2 ms for one
capture; code generated once from the same schema by ``fastjsonschema`` takes about
15 µs. The compiled form only ever answers "valid": a call it refuses is validated
again by ``jsonschema``, which names the violation and tells a malformed digest from
other errors (:mod:`engram.memory.validation`). So the compiled form must never accept
what the reference refuses, and it is built to agree with it exactly:

* it is compiled under draft-04 rules, where ``1.0`` is not an integer (engram's
  integers are strict); ``const`` becomes the equivalent one-value ``enum``;
* engram's own string keywords become one custom ``format`` per schema node, checked
  by the predicates the reference validator uses;
* a keyword this module does not translate stops the build (``ValueError``), so a
  schema change can never be silently ignored by the fast path.

``tests/memory/test_compiled_schema.py`` holds the two together on generated calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["CompiledCheck", "StringKeyword", "compile_schema"]

#: Returns when the instance is valid, raises ``fastjsonschema.JsonSchemaException``.
CompiledCheck = Callable[[Any], object]
StringCheck = Callable[[str], bool]
#: From a custom keyword's value to the check it makes of a string (``None``: none).
StringKeyword = Callable[[Any], StringCheck | None]

_DRAFT4: Final = "http://json-schema.org/draft-04/schema#"
#: Keywords with the same meaning under draft-04 and 2020-12, copied as they are.
_SAME: Final = frozenset(
    {
        "type",
        "required",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "enum",
    }
)
#: Annotations, which constrain nothing.
_ANNOTATIONS: Final = frozenset({"$schema", "default", "description", "title"})


def compile_schema(
    schema: Mapping[str, Any], string_keywords: Mapping[str, StringKeyword]
) -> CompiledCheck:
    """Compile ``schema`` (2020-12, closed) with engram's ``string_keywords``."""
    import fastjsonschema

    formats: dict[str, StringCheck] = {}
    draft4 = {**_translate(schema, string_keywords, formats), "$schema": _DRAFT4}
    check: CompiledCheck = fastjsonschema.compile(draft4, formats=formats, use_default=False)
    return check


def _translate(
    schema: Mapping[str, Any],
    string_keywords: Mapping[str, StringKeyword],
    formats: dict[str, StringCheck],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    checks: list[StringCheck] = []
    for keyword, value in schema.items():
        if keyword in _SAME:
            out[keyword] = value
        elif keyword == "const":
            out["enum"] = [value]
        elif keyword == "properties":
            out[keyword] = {
                name: _translate(sub, string_keywords, formats) for name, sub in value.items()
            }
        elif keyword == "items" and isinstance(value, Mapping):
            out[keyword] = _translate(value, string_keywords, formats)
        elif keyword == "additionalProperties" and value is False:
            out[keyword] = False
        elif keyword in string_keywords:
            check = string_keywords[keyword](value)
            if check is not None:
                checks.append(check)
        elif keyword not in _ANNOTATIONS:
            raise ValueError(f"the compiled schema cannot translate {keyword!r}")
    if checks:
        name = f"engram-{len(formats)}"
        formats[name] = _all_of(tuple(checks))
        out["format"] = name  # draft-04 applies a format to strings only, as ours are
    return out


def _all_of(checks: tuple[StringCheck, ...]) -> StringCheck:
    if len(checks) == 1:
        return checks[0]

    def check(text: str) -> bool:
        return all(one(text) for one in checks)

    return check
