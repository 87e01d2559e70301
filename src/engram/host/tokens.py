"""Host-issued bearer tokens: what an agent presents to ``engram-mcp --http``.

A token names the host profile it was issued for (its resolved ``host.toml`` path) and
that profile's binding (tenant, workspace, principal, agent id, purpose, grants) and an
expiry, and is signed with a key only the host holds (``token.key``, 32 random bytes,
0600, in the store's key directory, created on first issue). Nothing in a request can
widen it.

A token follows its profile (:class:`TokenChecks`, on every request): the profile it
names is read as it is now, and the token is refused (``TokenRefused``, HTTP 401) when
the profile is gone, untrusted, disabled (``[memory] enabled = false``), binds another
binding, or names another store or signing key than the server's. The token's grants
are cut to those the profile still grants, and the request runs under that profile's
whole policy (confirmation channel, retention, admission), never under the policy of
the profile the server was started with. A revoked token (its ``jti`` in the store's
revocation list, :mod:`engram.store.token_revocations`) is refused by every server of
the store, on every machine.

Format: ``engram1.<claims>.<mac>``, both parts unpadded base64url; the claims are the
RFC 8785 canonical JSON of ``{v: 2, jti, profile, tenant, workspace, principal, agent_id,
purpose, grants, iat, exp}`` (instants in whole seconds), the MAC an HMAC-SHA-256 over a
domain tag and the claims' bytes. Claims of version 1 (an older engram's, which named no
profile) are refused: such a token lives a day at most, and the operator issues a new
one. A token is also refused when missing, malformed, signed with another key, expired
or not yet valid. What is read for the checks is cached on each file's identity, size
and change times (``os.stat``), so an edit takes effect at the next request.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from engram.canonical import b64url, canonical_bytes, digest, unb64url
from engram.crypto.keyfiles import read_private_key
from engram.durable import write_atomic
from engram.errors import TokenRefused, TrustedContextUnavailable
from engram.host.profile import HostProfile, load_profile

if TYPE_CHECKING:
    from engram.store.token_revocations import TokenRevocations

__all__ = [
    "MAX_TTL_S",
    "Admitted",
    "TokenChecks",
    "TokenClaims",
    "issue_token",
    "profile_digest",
    "request_state_key",
    "revoke_token",
    "verify_token",
]

PREFIX: Final = "engram1"
#: The claims' version: 2 names the profile; 1 (no profile) is refused.
CLAIMS_VERSION: Final = 2
KEY_NAME: Final = "token.key"
#: The longest a token may live: a day; the default is an hour.
MAX_TTL_S: Final = 86_400
DEFAULT_TTL_S: Final = 3_600
#: Clock skew a token's issue instant may be ahead by.
SKEW_S: Final = 60
#: How long a revocation is kept: past it, no token it names can still be valid.
KEEP_REVOCATION_MS: Final = (MAX_TTL_S + SKEW_S) * 1000
_TAG: Final = b"engram-token/v1\0"
#: The longest token accepted, so a huge header costs nothing.
MAX_TOKEN_CHARS: Final = 4096
#: How many tokens' parsed claims a server keeps (only validly signed ones are kept).
_KNOWN_CLAIMS: Final = 4096


@dataclass(frozen=True)
class TokenClaims:
    """What a token says: which profile, whose binding, until when."""

    jti: str
    profile: str
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
            "v": CLAIMS_VERSION,
            "jti": self.jti,
            "profile": self.profile,
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
        """Whether ``profile`` still has the binding the token names (its grants may
        have been cut since: the token keeps only those it still grants)."""
        return (
            self.tenant,
            self.workspace,
            self.principal,
            self.agent_id,
            self.purpose,
        ) == (
            profile.tenant,
            profile.workspace,
            profile.principal,
            profile.agent_id,
            profile.purpose,
        )


@dataclass(frozen=True)
class Admitted:
    """A request's token, admitted: its claims, and the profile it names as that profile
    is now, with the grants of both (the token's that the profile still grants)."""

    claims: TokenClaims
    profile: HostProfile
    #: :func:`profile_digest` of ``profile``: changes whenever the policy a request is
    #: served under changes (binding, grants, the whole policy).
    version: str


def profile_digest(profile: HostProfile) -> str:
    """A digest of the policy a request is served under: the profile's path, binding,
    grants, whole ``HostPolicy`` and admission's verifier root. A dialog's sealed
    ``requestState`` is bound to it, so a state sealed under one policy is refused under
    another. Where the store and keys are is left out: the same profile on a second
    machine may keep its copy of the keys elsewhere, and a dialog's retry may reach it."""
    policy = {
        name: sorted(value) if isinstance(value, frozenset) else value
        for name, value in dataclasses.asdict(profile.policy).items()
    }
    return digest(
        "http-profile",
        {
            "path": str(profile.path),
            "enabled": profile.enabled,
            "binding": [
                profile.tenant,
                profile.workspace,
                profile.principal,
                profile.agent_id,
                profile.session,
                profile.purpose,
            ],
            "grants": sorted(profile.grants),
            "policy": policy,
            "verifier_root": None if profile.verifier_root is None else str(profile.verifier_root),
        },
    )


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, _TAG + payload, sha256).digest()


def _create_signing_key(keys: Path) -> bytes:
    path = keys / KEY_NAME
    if not keys.is_dir():
        raise TokenRefused(
            f"the key directory {keys} is missing: it holds the store's keys; restore it, or"
            " set [store] keys in the profile to where it is"
        )
    if not path.exists():
        # Another process may create it first: then theirs is the key.
        with contextlib.suppress(FileExistsError):
            write_atomic(path, secrets.token_bytes(32), mode=0o600, exclusive=True)
    return read_private_key(path)


def issue_token(profile: HostProfile, now_s: int, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A token for ``profile`` (its path and binding), valid for ``ttl_s`` seconds from
    ``now_s``; ``TokenRefused`` for a profile whose memory is disabled."""
    if not 1 <= ttl_s <= MAX_TTL_S:
        raise ValueError(f"the time to live must be 1..{MAX_TTL_S} seconds")
    if not profile.enabled:
        raise TokenRefused(
            "this profile's memory is disabled ([memory] enabled = false): no token is issued"
            " for it"
        )
    claims = TokenClaims(
        jti=secrets.token_urlsafe(16),
        profile=str(profile.path),
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
    key = _create_signing_key(profile.keys)
    return f"{PREFIX}.{b64url(payload)}.{b64url(_mac(key, payload))}"


T = TypeVar("T")


class _FileCache(Generic[T]):
    """What was made of a file, made again only when the file changed: keyed on its
    device, inode, size, modification and change times (a chmod or chown changes the
    latter), so one ``stat`` is the whole cost of an unchanged file. A failure is
    cached the same way."""

    def __init__(self, make: Callable[[Path], T]) -> None:
        self._make = make
        self._known: dict[Path, tuple[tuple[int, ...], T | TrustedContextUnavailable]] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> T:
        """What ``make`` gives for ``path`` now; ``TrustedContextUnavailable`` when it
        is gone or ``make`` refuses it."""
        try:
            info = os.stat(path)
        except OSError:
            with self._lock:
                self._known.pop(path, None)
            raise TrustedContextUnavailable("the file cannot be read") from None
        signature = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        with self._lock:
            known = self._known.get(path)
        if known is None or known[0] != signature:
            made: T | TrustedContextUnavailable
            try:
                made = self._make(path)
            except TrustedContextUnavailable as refused:
                made = refused
            known = (signature, made)
            with self._lock:
                self._known[path] = known
        if isinstance(known[1], TrustedContextUnavailable):
            raise known[1]
        return known[1]


class TokenChecks:
    """The checks ``engram-mcp --http`` runs on every request's token, with what they
    read cached (:class:`_FileCache`) and the store's revocation list open.

    ``server`` is the profile the server was started with: its store and its signing
    key are the server's. Nothing else of it applies to a request.
    """

    def __init__(
        self, server: HostProfile, revocations: Callable[[], TokenRevocations] | None = None
    ) -> None:
        self.server = server
        self._keys: _FileCache[bytes] = _FileCache(read_private_key)
        self._profiles: _FileCache[HostProfile] = _FileCache(load_profile)
        self._open_revocations = revocations or self._revocations_of_store
        self._revocations: TokenRevocations | None = None
        self._lock = threading.Lock()
        #: Claims by the bytes they were parsed from (signatures are checked every time).
        self._claims: dict[bytes, TokenClaims] = {}
        #: By profile path and the token's grants: the loaded profile it was made from
        #: (the cache gives the same object until the file changes), the profile as
        #: served and its digest.
        self._served: dict[tuple[str, tuple[str, ...]], tuple[HostProfile, HostProfile, str]]
        self._served = {}

    def _revocations_of_store(self) -> TokenRevocations:
        from engram.store.token_revocations import open_token_revocations

        return open_token_revocations(self.server.store, self.server.durability)

    def _signing_key(self, keys: Path) -> bytes:
        try:
            return self._keys.get(keys / KEY_NAME)
        except TrustedContextUnavailable:
            raise TokenRefused("this host has issued no token (no token.key)") from None

    def is_revoked(self, jti: str) -> bool:
        with self._lock:
            if self._revocations is None:
                self._revocations = self._open_revocations()
            revocations = self._revocations
        return revocations.is_revoked(jti)

    def admit(self, token: str, now_s: int) -> Admitted:
        """The admitted token; ``TokenRefused`` otherwise. The refusal's detail is for
        the operator's log, never for the response (and never holds the token)."""
        key = self._signing_key(self.server.keys)
        claims = self._verified_claims(token, key)
        if claims.exp <= now_s:
            raise TokenRefused("token expired")
        if claims.iat > now_s + SKEW_S:
            raise TokenRefused("token not valid yet")
        if claims.exp - claims.iat > MAX_TTL_S:
            # A revocation is kept a day and the skew: a longer-lived token would outlive it.
            raise TokenRefused("token lives longer than a day")
        if self.is_revoked(claims.jti):
            raise TokenRefused("token revoked")
        try:
            profile = self._profiles.get(Path(claims.profile))
        except TrustedContextUnavailable as refused:
            raise TokenRefused(f"the token's profile cannot be used: {refused.detail}") from None
        if not profile.enabled:
            raise TokenRefused("the token's profile is disabled ([memory] enabled = false)")
        if not claims.binds(profile):
            raise TokenRefused("the token's profile binds another binding now")
        if profile.store != self.server.store:
            raise TokenRefused("the token's profile names another store than this server's")
        try:
            same_key = hmac.compare_digest(self._signing_key(profile.keys), key)
        except TokenRefused:
            same_key = False
        if not same_key:
            raise TokenRefused("the token's profile has another signing key than this server's")
        return Admitted(claims, *self._as_served(profile, claims))

    def _verified_claims(self, token: str, key: bytes) -> TokenClaims:
        payload = _verified_payload(token, key)
        with self._lock:
            known = self._claims.get(payload)
        if known is None:
            known = _claims(payload)
            with self._lock:
                if len(self._claims) >= _KNOWN_CLAIMS:  # a day of tokens, at most
                    self._claims.clear()
                self._claims[payload] = known
        return known

    def _as_served(self, profile: HostProfile, claims: TokenClaims) -> tuple[HostProfile, str]:
        """The profile with the grants of both, and its digest (made once per version of
        the profile and set of token grants: the digest is a third of a check's cost)."""
        key = (claims.profile, claims.grants)
        with self._lock:
            known = self._served.get(key)
        if known is None or known[0] is not profile:
            served = dataclasses.replace(profile, grants=profile.grants & frozenset(claims.grants))
            known = (profile, served, profile_digest(served))
            with self._lock:
                self._served[key] = known
        return known[1], known[2]

    def close(self) -> None:
        with self._lock:
            if self._revocations is not None:
                self._revocations.close()
                self._revocations = None

    def __enter__(self) -> TokenChecks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def verify_token(
    token: str, profile: HostProfile, now_s: int, same_binding: bool = True
) -> TokenClaims:
    """The claims of a valid token for ``profile`` (with ``same_binding=False``: for any
    profile of its store); ``TokenRefused`` otherwise. Opens the store's revocation list
    for this one check: a server keeps a :class:`TokenChecks` instead."""
    with TokenChecks(profile) as checks:
        admitted = checks.admit(token, now_s)
    if same_binding and admitted.profile.path != profile.path:
        raise TokenRefused("token names another binding")
    return admitted.claims


def _verified_payload(token: str, key: bytes) -> bytes:
    """The claims' bytes of a token signed with ``key``; ``TokenRefused`` otherwise."""
    if len(token) > MAX_TOKEN_CHARS:
        raise TokenRefused("token too long")
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenRefused("not an engram token")
    try:
        payload, mac = unb64url(parts[1]), unb64url(parts[2])
    except ValueError:
        raise TokenRefused("token is not base64url") from None
    if not hmac.compare_digest(mac, _mac(key, payload)):
        raise TokenRefused("token signature does not verify")
    return payload


def _claims(payload: bytes) -> TokenClaims:
    try:
        data = json.loads(payload)
        version = data.get("v")
    except (ValueError, AttributeError):
        raise TokenRefused("token claims are malformed") from None
    if version == 1:
        raise TokenRefused("token issued by an older engram (claims v1): issue a new one")
    try:
        if version != CLAIMS_VERSION or canonical_bytes(data) != payload:
            raise ValueError("not canonical")
        return TokenClaims(
            jti=_string(data["jti"]),
            profile=_string(data["profile"]),
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


def request_state_key(profile: HostProfile) -> bytes:
    """The key that seals 2026-07-28 request states on ``engram-mcp --http``: derived
    from the store's MAC key, so every server of the store opens what another sealed."""
    mac_key = read_private_key(profile.keys / "mac.key")
    return hmac.new(mac_key, b"engram-request-state/v1", sha256).digest()


def _jti_of(token_or_jti: str) -> str:
    """The id of a token (any claims version), or the id itself."""
    if not token_or_jti.startswith(PREFIX + "."):
        return token_or_jti
    parts = token_or_jti.split(".")
    try:
        data = json.loads(unb64url(parts[1])) if len(parts) == 3 else None
    except ValueError:
        data = None
    jti = data.get("jti") if isinstance(data, dict) else None
    if not isinstance(jti, str) or not jti:
        raise TokenRefused("not an engram token")
    return jti


def revoke_token(profile: HostProfile, token_or_jti: str, now_s: int | None = None) -> str:
    """Refuse a token from now on, on every server of ``profile``'s store (by the
    token, or by its ``jti``); returns the jti."""
    from engram.store.token_revocations import open_token_revocations

    jti = _jti_of(token_or_jti)
    now_ms = int((time.time() if now_s is None else now_s) * 1000)
    revocations = open_token_revocations(profile.store, profile.durability)
    try:
        revocations.revoke(jti, now_ms, KEEP_REVOCATION_MS)
    finally:
        revocations.close()
    return jti
