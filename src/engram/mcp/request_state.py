"""Sealed ``requestState`` for the 2026-07-28 ``input_required`` round trip.

The client echoes ``requestState`` back verbatim, so it is attacker-controlled. We
seal it with HMAC-SHA256 under a key that exists only in this process (a restart
invalidates every open state) and bind it to the tool, the server's binding (the
workspace, or the governed host binding) and a digest of the exact arguments. It
expires after :data:`STATE_TTL_MS`. The state carries only digests and the human's
earlier form answers, never memory text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from engram.canonical import b64url, unb64url
from engram.errors import InvalidRequestState

__all__ = ["STATE_TTL_MS", "OpenState", "StateSealer", "arguments_digest"]

#: How long a dialog may stay open between the ``input_required`` result and the
#: client's retry: five minutes, the contract's ceiling for a human approval's TTL.
STATE_TTL_MS: Final = 300_000
_VERSION: Final = 1


def arguments_digest(arguments: Any) -> str:
    """SHA-256 of the RFC 8785 canonical form of the tool arguments.

    Arguments outside JCS's domain (integers beyond 2**53, lone surrogates) still
    bind: they fall back to sorted compact JSON, which is deterministic for the same
    parsed input, and that is all a state binding needs.
    """
    import rfc8785

    try:
        data = rfc8785.dumps(arguments)
    except ValueError:
        text = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
        data = b"\0" + text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class OpenState:
    """What a valid state proves: the questions asked and the answers so far."""

    asked: dict[str, str] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)


class StateSealer:
    """Seals and opens request states with a per-process key."""

    def __init__(self, key: bytes | None = None, clock: Callable[[], int] | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        self._now_ms = clock or (lambda: int(time.time() * 1000))

    def seal(self, tool: str, binding: str, arguments: object, state: OpenState) -> str:
        """Seal ``state`` for a retry of exactly this call."""
        body = {
            "v": _VERSION,
            "tool": tool,
            "binding": binding,
            "args": arguments_digest(arguments),
            "exp": self._now_ms() + STATE_TTL_MS,
            "nonce": secrets.token_hex(8),
            "asked": state.asked,
            "answers": state.answers,
        }
        payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode("utf-8")
        return f"{b64url(payload)}.{b64url(self._mac(payload))}"

    def open(self, token: object, tool: str, binding: str, arguments: object) -> OpenState:
        """Verify a state for this call; raise ``InvalidRequestState`` otherwise."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise InvalidRequestState()
        encoded_payload, encoded_mac = token.split(".")
        try:
            payload, mac = unb64url(encoded_payload), unb64url(encoded_mac)
        except ValueError as exc:
            raise InvalidRequestState() from exc
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidRequestState()
        body = json.loads(payload)
        if (
            body.get("v") != _VERSION
            or body.get("tool") != tool
            or body.get("binding") != binding
            or body.get("args") != arguments_digest(arguments)
            or not isinstance(body.get("exp"), int)
            or body["exp"] <= self._now_ms()
        ):
            raise InvalidRequestState()
        return OpenState(asked=dict(body["asked"]), answers=dict(body["answers"]))

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, b"engram/request-state/v1\0" + payload, "sha256").digest()
