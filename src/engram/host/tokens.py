"""Host-issued bearer tokens: what an agent presents to ``engram-mcp --http``.

A token names a host profile's binding (tenant, workspace, principal, agent id, purpose,
grants) and an expiry, and is signed with a key only the host holds (``token.key``,
32 random bytes, 0600, in the store's key directory, created on first issue). Nothing
in a request can widen it: the server serves the binding the token names, and only
when it is the binding of the profile the server was started with.

Format: ``engram1.<claims>.<mac>``, both parts unpadded base64url; the claims are the
RFC 8785 canonical JSON of ``{v, jti, tenant, workspace, principal, agent_id, purpose,
grants, iat, exp}`` (instants in whole seconds), the MAC an HMAC-SHA-256 over a domain
tag and the claims' bytes. A token is refused (``TokenRefused``, HTTP 401) when it is
missing, malformed, signed with another key, expired, not yet valid, revoked (its
``jti`` listed in ``revoked-tokens`` beside the key), or names another binding.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import json
import secrets
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any, Final

from engram.canonical import b64url, canonical_bytes, unb64url
from engram.crypto.keyfiles import read_private_key
from engram.durable import write_atomic
from engram.errors import TokenRefused
from engram.host.profile import HostProfile

__all__ = [
    "MAX_TTL_S",
    "TokenClaims",
    "issue_token",
    "request_state_key",
    "revoke_token",
    "verify_token",
]

PREFIX: Final = "engram1"
KEY_NAME: Final = "token.key"
REVOKED_NAME: Final = "revoked-tokens"
#: The longest a token may live: a day; the default is an hour.
MAX_TTL_S: Final = 86_400
DEFAULT_TTL_S: Final = 3_600
#: Clock skew a token's issue instant may be ahead by.
SKEW_S: Final = 60
_TAG: Final = b"engram-token/v1\0"
#: The longest token accepted, so a huge header costs nothing.
MAX_TOKEN_CHARS: Final = 4096


@dataclass(frozen=True)
class TokenClaims:
    """What a token says: whose binding, until when."""

    jti: str
    tenant: str
    workspace: str
    principal: str
    agent_id: str
    purpose: str
    grants: tuple[str, ...]
    iat: int
    exp: int

    def as_json(self) -> dict[str, Any]:
        return {
            "v": 1,
            "jti": self.jti,
            "tenant": self.tenant,
            "workspace": self.workspace,
            "principal": self.principal,
            "agent_id": self.agent_id,
            "purpose": self.purpose,
            "grants": list(self.grants),
            "iat": self.iat,
            "exp": self.exp,
        }

    def binds(self, profile: HostProfile) -> bool:
        """Whether the token names exactly this profile's binding."""
        return (
            self.tenant,
            self.workspace,
            self.principal,
            self.agent_id,
            self.purpose,
            frozenset(self.grants),
        ) == (
            profile.tenant,
            profile.workspace,
            profile.principal,
            profile.agent_id,
            profile.purpose,
            profile.grants,
        )


def _signing_key(keys: Path, create: bool) -> bytes:
    path = keys / KEY_NAME
    if not path.exists():
        if not create:
            raise TokenRefused("this host has issued no token (no token.key)")
        # Another process may create it first: then theirs is the key.
        with contextlib.suppress(FileExistsError):
            write_atomic(path, secrets.token_bytes(32), mode=0o600, exclusive=True)
    return read_private_key(path)


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, _TAG + payload, sha256).digest()


def issue_token(profile: HostProfile, now_s: int, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A token for ``profile``'s binding, valid for ``ttl_s`` seconds from ``now_s``."""
    if not 1 <= ttl_s <= MAX_TTL_S:
        raise ValueError(f"the time to live must be 1..{MAX_TTL_S} seconds")
    claims = TokenClaims(
        jti=secrets.token_urlsafe(16),
        tenant=profile.tenant,
        workspace=profile.workspace,
        principal=profile.principal,
        agent_id=profile.agent_id,
        purpose=profile.purpose,
        grants=tuple(sorted(profile.grants)),
        iat=now_s,
        exp=now_s + ttl_s,
    )
    payload = canonical_bytes(claims.as_json())
    key = _signing_key(profile.keys, create=True)
    return f"{PREFIX}.{b64url(payload)}.{b64url(_mac(key, payload))}"


def verify_token(
    token: str, profile: HostProfile, now_s: int, same_binding: bool = True
) -> TokenClaims:
    """The claims of a valid token for ``profile`` (with ``same_binding=False``: for any
    profile of its store, which shares its signing key); ``TokenRefused`` otherwise.
    The refusal's detail is for the operator's log, never for the response."""
    if len(token) > MAX_TOKEN_CHARS:
        raise TokenRefused("token too long")
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenRefused("not an engram token")
    try:
        payload, mac = unb64url(parts[1]), unb64url(parts[2])
    except ValueError:
        raise TokenRefused("token is not base64url") from None
    if not hmac.compare_digest(mac, _mac(_signing_key(profile.keys, create=False), payload)):
        raise TokenRefused("token signature does not verify")
    claims = _claims(payload)
    if claims.jti in _revoked(profile.keys):
        raise TokenRefused("token revoked")
    if claims.exp <= now_s:
        raise TokenRefused("token expired")
    if claims.iat > now_s + SKEW_S:
        raise TokenRefused("token not valid yet")
    if same_binding and not claims.binds(profile):
        raise TokenRefused("token names another binding")
    return claims


def _claims(payload: bytes) -> TokenClaims:
    try:
        data = json.loads(payload)
        if data.get("v") != 1 or canonical_bytes(data) != payload:
            raise ValueError("not canonical")
        return TokenClaims(
            jti=_string(data["jti"]),
            tenant=_string(data["tenant"]),
            workspace=_string(data["workspace"]),
            principal=_string(data["principal"]),
            agent_id=_string(data["agent_id"]),
            purpose=_string(data["purpose"]),
            grants=tuple(_string(grant) for grant in data["grants"]),
            iat=_seconds(data["iat"]),
            exp=_seconds(data["exp"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise TokenRefused("token claims are malformed") from None


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _seconds(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("not whole seconds")
    return value


def _revoked(keys: Path) -> frozenset[str]:
    try:
        text = (keys / REVOKED_NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def request_state_key(profile: HostProfile) -> bytes:
    """The key that seals 2026-07-28 request states on ``engram-mcp --http``: derived
    from the store's MAC key, so every server of the store opens what another sealed."""
    mac_key = read_private_key(profile.keys / "mac.key")
    return hmac.new(mac_key, b"engram-request-state/v1", sha256).digest()


def revoke_token(profile: HostProfile, token_or_jti: str) -> str:
    """Refuse a token from now on (by the token, or by its ``jti``); returns the jti."""
    jti = token_or_jti
    if token_or_jti.startswith(PREFIX + "."):
        parts = token_or_jti.split(".")
        try:
            jti = _claims(unb64url(parts[1])).jti if len(parts) == 3 else ""
        except ValueError:
            jti = ""
        if not jti:
            raise TokenRefused("not an engram token")
    lock = profile.keys / (REVOKED_NAME + ".lock")
    with lock.open("a") as held:  # one revocation at a time: none is lost
        fcntl.flock(held, fcntl.LOCK_EX)
        revoked = sorted(_revoked(profile.keys) | {jti})
        write_atomic(profile.keys / REVOKED_NAME, "\n".join(revoked) + "\n", mode=0o600)
    return jti
