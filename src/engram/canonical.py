"""Canonical JSON (RFC 8785, JCS) and the digests engram computes over it.

A digest is ``"sha256:" + 64 lowercase hex`` over a domain-separation prefix for its
kind (``engram/<kind>/v1`` followed by a NUL byte) and the JCS bytes of the value, so
two kinds of object can never share a digest. Receipts are digested without their
own digest field. Python's ``json.dumps(sort_keys=True)`` is not JCS (number and
string forms differ); ``rfc8785`` is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from json.encoder import encode_basestring as _quote  # the C encoder when available
from typing import Any, Final

__all__ = [
    "DIGEST_PATTERN",
    "b64url",
    "canonical_bytes",
    "digest",
    "digest_bytes",
    "is_digest",
    "record_id_from_digest",
    "seal_receipt",
    "unb64url",
]

DIGEST_PATTERN: Final = re.compile(r"^sha256:[0-9a-f]{64}$")
_SAFE: Final = 2**53 - 1
_HIGH_KEY_CHAR: Final = "\ue000"
#: ``json.dumps(sort_keys=True)`` without building an encoder per call.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value.

    Equal to ``rfc8785.dumps`` (a property test holds them together) but many times
    faster: a value :func:`_plain` vouches for is written by the standard library's C
    encoder; otherwise strings still go through its C string encoder, whose escapes are
    exactly JCS's, and numbers that are not integers through ``rfc8785`` itself.
    Raises ``ValueError`` for what JCS cannot encode (integers beyond 2**53,
    non-finite floats, lone surrogates, non-string keys).
    """
    if _plain(value):
        text = _ENCODER.encode(value)
    else:
        parts: list[str] = []
        _encode(value, parts)
        text = "".join(parts)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("lone surrogate in JSON text") from exc


def _plain(value: Any) -> bool:
    """Whether ``json.dumps(sort_keys=True)`` writes exactly the JCS form of ``value``.

    It does when every node is exactly a ``str``, ``bool``, ``None``, a safe ``int``, a
    ``float`` that ``repr`` writes without an exponent or a trailing ``.0`` (JCS writes
    the same shortest digits then), a ``list``, a ``tuple`` or a ``dict`` whose keys
    are strings below U+E000 (where Python's code point order is JCS's UTF-16 order).
    Anything else, subclasses included, takes the general encoder.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str or kind is bool or node is None:
            continue
        if kind is dict:
            for key in node:
                if type(key) is not str or (not key.isascii() and max(key) >= _HIGH_KEY_CHAR):
                    return False
            stack.extend(node.values())
        elif kind is list or kind is tuple:
            stack.extend(node)
        elif kind is int:
            if not -_SAFE <= node <= _SAFE:
                return False
        elif kind is float:
            text = repr(node)
            if "e" in text or "n" in text or text.endswith(".0"):
                return False
        else:
            return False
    return True


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _encode(value: Any, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(_quote(value))
    elif value is None or isinstance(value, bool):
        parts.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        if not -_SAFE <= value <= _SAFE:
            raise ValueError("integer outside the JSON safe range")
        parts.append(str(value))
    elif isinstance(value, float):
        import rfc8785

        parts.append(rfc8785.dumps(value).decode("ascii"))
    elif isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise ValueError("object keys must be strings")
        parts.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_order)):
            parts.append("," if index else "")
            parts.append(_quote(key))
            parts.append(":")
            _encode(value[key], parts)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            parts.append("," if index else "")
            _encode(item, parts)
        parts.append("]")
    else:
        raise ValueError(f"not a JSON value: {type(value).__name__}")


def digest(kind: str, value: Any) -> str:
    """``sha256:<hex>`` of ``value`` under the domain prefix for ``kind``."""
    return digest_bytes(kind, canonical_bytes(value))


def digest_bytes(kind: str, data: bytes) -> str:
    """``sha256:<hex>`` of raw bytes under the domain prefix for ``kind``."""
    prefix = f"engram/{kind}/v1".encode() + b"\0"
    return "sha256:" + hashlib.sha256(prefix + data).hexdigest()


def is_digest(value: object) -> bool:
    """Whether ``value`` is a well-formed ``sha256:`` digest."""
    return isinstance(value, str) and DIGEST_PATTERN.match(value) is not None


def seal_receipt(
    kind: str, body: Mapping[str, Any], field: str = "receipt_digest"
) -> dict[str, Any]:
    """Return ``body`` plus ``field``: the digest of the body without that field."""
    unsealed = {key: value for key, value in body.items() if key != field}
    return {**unsealed, field: digest(kind, unsealed)}


def record_id_from_digest(record_digest: str) -> str:
    """``mem_`` + lowercase unpadded RFC 4648 base32 of the 32 digest bytes."""
    raw = bytes.fromhex(record_digest.removeprefix("sha256:"))
    return "mem_" + base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def b64url(data: bytes) -> str:
    """Unpadded base64url (RFC 4648 §5): the one text form of opaque tokens' bytes."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes of :func:`b64url` text; ``ValueError`` for anything else (padding, a
    character outside the alphabet, unused bits set), so no two strings decode alike."""
    if not text or not text.isascii():
        raise ValueError("not base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64url") from exc
    if b64url(data) != text:
        raise ValueError("not canonical base64url")
    return data
