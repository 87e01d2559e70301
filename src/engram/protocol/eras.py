"""The two protocol eras one ``engram-mcp`` process serves.

*Legacy* (2024-11-05 to 2025-11-25): a connection negotiates once with ``initialize``.
*Modern* (2026-07-28): every request carries its own version and client capabilities
in ``params._meta`` and is served statelessly. This module decides which era a
request belongs to, which version answers it and what each version allows on the wire
(batches, elicitation forms); it builds no results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from engram.errors import InvalidParams, MissingClientCapabilities, UnsupportedProtocolVersion

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_CHARACTERS",
    "CLIENT_INFO_KEY",
    "CURRENT_FORMS",
    "FIRST_FORMS",
    "LATEST_LEGACY_VERSION",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SUPPORTED_VERSIONS",
    "ClientInfo",
    "FormRules",
    "ModernEnvelope",
    "accepts_batches",
    "client_info",
    "elicitation_forms",
    "modern_envelope",
    "negotiate_legacy_version",
]

LEGACY_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY_VERSION: Final = "2025-11-25"
MODERN_VERSIONS: Final = ("2026-07-28",)
#: Newest first, as ``server/discover`` and ``-32022`` publish them.
SUPPORTED_VERSIONS: Final = (*MODERN_VERSIONS, *reversed(LEGACY_VERSIONS))

#: The versions whose connections receive JSON-RPC batches. 2025-03-26 requires it
#: ("MUST support receiving JSON-RPC batches", basic/index); 2024-11-05 does not
#: define batches (2025-03-26 keeps ``initialize`` out of batches for its sake), and
#: 2025-06-18 removed them, as the 2026-07-28 era never had them.
_BATCH_VERSIONS: Final = frozenset({"2025-03-26"})

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
#: How much of each ``clientInfo`` text is kept: a name or a version, never a document.
CLIENT_INFO_CHARACTERS: Final = 200


def negotiate_legacy_version(requested: object) -> str:
    """The version ``initialize`` answers: the client's if we speak it, else the latest.

    An unknown string is never echoed back (mcp-server.txt, "Protocol versions").
    """
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY_VERSION


@dataclass(frozen=True, slots=True)
class FormRules:
    """What an ``elicitation/create`` form may use in one protocol version (schema.ts)."""

    #: ``params.mode: "form"`` exists (2025-11-25 added URL mode beside forms).
    mode: bool
    #: Multi-select fields (``type: "array"``, ``MultiSelectEnumSchema``).
    multi_select: bool
    #: ``default`` on string and enum fields (2025-06-18 has it on booleans only).
    string_defaults: bool


#: Forms as 2025-06-18 introduced them: only string, number, boolean and single-choice
#: enum fields, a default only on booleans, and no ``mode``.
FIRST_FORMS: Final = FormRules(mode=False, multi_select=False, string_defaults=False)
#: Forms from 2025-11-25 on, in both eras.
CURRENT_FORMS: Final = FormRules(mode=True, multi_select=True, string_defaults=True)

_FORMS: Final = {
    "2025-06-18": FIRST_FORMS,
    "2025-11-25": CURRENT_FORMS,
    "2026-07-28": CURRENT_FORMS,
}


def elicitation_forms(version: str | None) -> FormRules | None:
    """The form rules of a version; ``None`` where it has no ``elicitation/create``.

    Elicitation arrived in 2025-06-18: 2024-11-05 and 2025-03-26 (and a connection
    that has not negotiated yet) have none.
    """
    return _FORMS.get(version) if version is not None else None


def accepts_batches(negotiated: str | None) -> bool:
    """Whether a connection that negotiated this version (``None``: not yet) takes batches."""
    return negotiated in _BATCH_VERSIONS


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """What a client says of itself (``Implementation``: ``clientInfo`` of a legacy
    ``initialize``, or of a 2026-07-28 request's envelope): its name, its display title
    (2025-06-18 on) and its version, as the client wrote them, unverified. An empty field
    is one the client did not give (or gave as something other than text)."""

    name: str = ""
    title: str = ""
    version: str = ""


def client_info(value: object) -> ClientInfo:
    """The :class:`ClientInfo` of a ``clientInfo`` value, whatever the client sent: a
    field that is not text is left out, and each is cut at :data:`CLIENT_INFO_CHARACTERS`
    (it is recorded with what the client proposes)."""
    if not isinstance(value, dict):
        return ClientInfo()

    def text(key: str) -> str:
        found = value.get(key)
        return found[:CLIENT_INFO_CHARACTERS] if isinstance(found, str) else ""

    return ClientInfo(text("name"), text("title"), text("version"))


@dataclass(frozen=True, slots=True)
class ModernEnvelope:
    """The per-request protocol fields of a 2026-07-28 request."""

    version: str
    client_capabilities: dict[str, Any]
    client: ClientInfo = ClientInfo()


def modern_envelope(params: dict[str, Any]) -> ModernEnvelope | None:
    """Read the modern envelope, or ``None`` when the request is a legacy one.

    A request belongs to the modern era exactly when ``params._meta`` carries the
    protocol-version key. Raises ``UnsupportedProtocolVersion`` (-32022) for a
    version we do not serve statelessly, ``InvalidParams`` (-32602) for a version
    that is not a string, and ``MissingClientCapabilities`` (-32602) when the
    capabilities key is absent or not an object.
    """
    meta = params.get("_meta")
    if not isinstance(meta, dict) or PROTOCOL_VERSION_KEY not in meta:
        return None
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise InvalidParams()
    if version not in MODERN_VERSIONS:
        # Only these can be named per request; the older versions are negotiated by
        # initialize, so listing them here would offer what this request cannot use.
        raise UnsupportedProtocolVersion(version, MODERN_VERSIONS)
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(capabilities, dict):
        raise MissingClientCapabilities()
    return ModernEnvelope(version, capabilities, client_info(meta.get(CLIENT_INFO_KEY)))
