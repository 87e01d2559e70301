"""The one exception tree of engram, with stable codes.

Every error engram raises on purpose is an :class:`EngramError`. The class decides
how the error is shown: its stable ``code``, its constant ``message`` (safe to put on
the wire: it never contains user data, memory text or secrets), the JSON-RPC code
when it is a protocol error, and the CLI exit code::

    EngramError                          code, message, exit_code
    ├── ProtocolError                    a JSON-RPC error response (jsonrpc_code)
    │   ├── ParseError                   -32700
    │   ├── InvalidRequest               -32600
    │   │   └── MessageTooLarge          -32600
    │   ├── MethodNotFound               -32601
    │   ├── InvalidParams                -32602
    │   │   ├── UnknownTool              -32602 "Unknown tool"
    │   │   ├── UnknownPrompt            -32602 "Unknown prompt"
    │   │   ├── MissingClientCapabilities
    │   │   └── InvalidRequestState      forged, expired or mismatched requestState
    │   ├── ResourceNotFound             -32002 (legacy) / -32602 (2026-07-28)
    │   ├── ProjectUnavailable           -32603, data: the project error's code, detail
    │   ├── InternalError                -32603
    │   │   └── TrustedContextUnavailable
    │   └── UnsupportedProtocolVersion   -32022, with data.supported / data.requested
    ├── ContractError                    a governed tool failure: envelope {ok: false}
    │   └── one class per contract code  (retriable per the contract's table)
    ├── ProjectError                     a project tool failure: envelope {ok: false}
    │   ├── NotInitialized, ConfigError, CandidateError, SecretRefused, …
    │   ├── IndexDamaged                 the derived index; rebuilt at the next call
    │   └── NotWritable                  a folder refused a file; nothing was changed
    ├── ElicitationFailed                the client could not answer a dialog (timeout,
    │                                    error reply, connection closed)
    ├── TokenRefused                     a bearer token engram-mcp --http refuses (HTTP 401)
    ├── HostConfigError                  a host configuration file engram will not touch
    │   ├── HostConfigUnparseable        cannot be parsed (detail names file, line, column)
    │   ├── HostConfigShape              parses, but engram's key sits in the wrong shape
    │   └── ManagedBlockCorrupt          duplicated or misordered engram markers
    ├── ExtraMissing                     an optional part is not installed (exit code 2;
    │                                    detail: the pip install line)
    └── UsageError                       bad command-line use (exit code 2)

Only two places catch ``Exception`` broadly: the MCP dispatcher
(:mod:`engram.mcp.dispatcher`) and the CLI entry point (:mod:`engram.cli.main`).
Everything else catches what it can handle. Code never matches on message text.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AlreadyTerminal",
    "ApprovalDeclined",
    "ApprovalError",
    "ApprovalTampered",
    "AuthorizationExpired",
    "AuthorizationRevoked",
    "BackupInvalid",
    "BlobMissing",
    "Cancelled",
    "CandidateError",
    "CapabilityUnavailable",
    "ConfigError",
    "ContractError",
    "CursorGap",
    "DeadlineExceeded",
    "DigestConflict",
    "ElicitationFailed",
    "EngramError",
    "ExtraMissing",
    "FenceLost",
    "FrontmatterError",
    "GateFailed",
    "HashesCorrupt",
    "HostConfigError",
    "HostConfigShape",
    "HostConfigUnparseable",
    "IllegalTransition",
    "IndexDamaged",
    "InstructionRefused",
    "InternalError",
    "InvalidArguments",
    "InvalidDigest",
    "InvalidParams",
    "InvalidQuery",
    "InvalidRequest",
    "InvalidRequestState",
    "InvalidSchema",
    "JournalCorrupt",
    "ManagedBlockCorrupt",
    "MessageTooLarge",
    "MethodNotFound",
    "MigrationLedgerInvalid",
    "MissingClientCapabilities",
    "MutationOutcomeUnknown",
    "NotFound",
    "NotInitialized",
    "NotWritable",
    "ParseError",
    "PolicyStale",
    "PolicyUnavailable",
    "ProjectError",
    "ProjectUnavailable",
    "ProjectionOversized",
    "ProjectionStale",
    "ProtocolError",
    "RankingUnavailable",
    "RateLimited",
    "RegistryVersionUnavailable",
    "ResourceNotFound",
    "RestoreRefused",
    "ResultTooLarge",
    "RoleError",
    "SecretRefused",
    "StalePage",
    "StoreUnavailable",
    "TokenRefused",
    "TrustedContextUnavailable",
    "Unauthorized",
    "UnknownMemory",
    "UnknownPrompt",
    "UnknownTool",
    "UnsupportedProtocolVersion",
    "UsageError",
]


class EngramError(Exception):
    """Base of every error engram raises on purpose.

    ``detail`` is for the operator (stderr, CLI output) and must never carry memory
    text, pending-candidate content or key material; ``message`` is the constant
    string that may travel on the wire.
    """

    code: ClassVar[str] = "ENGRAM_ERROR"
    message: ClassVar[str] = "engram failed"
    exit_code: ClassVar[int] = 1

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.message)
        self.detail = detail or self.message


# --- JSON-RPC / MCP protocol errors ------------------------------------------------


class ProtocolError(EngramError):
    """A request the protocol layer refuses with a JSON-RPC error response."""

    code = "PROTOCOL_ERROR"
    jsonrpc_code: ClassVar[int] = -32603
    #: The code in the 2026-07-28 era, where it differs from the legacy one.
    modern_jsonrpc_code: ClassVar[int | None] = None

    def wire_data(self) -> dict[str, Any] | None:
        """Extra ``error.data`` for the response, or ``None`` for none."""
        return None


class ParseError(ProtocolError):
    code = "PARSE_ERROR"
    message = "Parse error"
    jsonrpc_code = -32700


class InvalidRequest(ProtocolError):
    """A structurally invalid message; ``request_id`` is its id when readable."""

    code = "INVALID_REQUEST"
    message = "Invalid Request"
    jsonrpc_code = -32600

    def __init__(self, request_id: str | int | None = None) -> None:
        super().__init__()
        self.request_id = request_id


class MessageTooLarge(InvalidRequest):
    code = "MESSAGE_TOO_LARGE"
    message = "Message too large"


class MethodNotFound(ProtocolError):
    code = "METHOD_NOT_FOUND"
    message = "Method not found"
    jsonrpc_code = -32601


class InvalidParams(ProtocolError):
    code = "INVALID_PARAMS"
    message = "Invalid params"
    jsonrpc_code = -32602


class UnknownTool(InvalidParams):
    code = "UNKNOWN_TOOL"
    message = "Unknown tool"


class MissingClientCapabilities(InvalidParams):
    code = "MISSING_CLIENT_CAPABILITIES"
    message = "Missing io.modelcontextprotocol/clientCapabilities"


class InvalidRequestState(InvalidParams):
    code = "INVALID_REQUEST_STATE"
    message = "Invalid or expired requestState"


class UnknownPrompt(InvalidParams):
    code = "UNKNOWN_PROMPT"
    message = "Unknown prompt"


class ProjectUnavailable(ProtocolError):
    """A resource request that project memory cannot serve (an invalid configuration, a
    file it cannot read): ``error.data`` carries the project error's code and its
    detail, which names the file and the next step."""

    code = "PROJECT_UNAVAILABLE"
    message = "Project memory cannot serve this request"

    def __init__(self, cause: ProjectError) -> None:
        super().__init__(cause.detail)
        self.cause = cause

    def wire_data(self) -> dict[str, Any]:
        return {"code": self.cause.code, "detail": self.cause.detail}


class ResourceNotFound(ProtocolError):
    """Legacy MCP uses -32002 for an unknown resource; 2026-07-28 uses -32602."""

    code = "RESOURCE_NOT_FOUND"
    message = "Resource not found"
    jsonrpc_code = -32002
    modern_jsonrpc_code = -32602


class InternalError(ProtocolError):
    code = "INTERNAL_ERROR"
    message = "Internal error"
    jsonrpc_code = -32603


class TrustedContextUnavailable(InternalError):
    code = "TRUSTED_CONTEXT_UNAVAILABLE"
    message = "Trusted invocation context unavailable"


class UnsupportedProtocolVersion(ProtocolError):
    code = "UNSUPPORTED_PROTOCOL_VERSION"
    message = "Unsupported protocol version"
    jsonrpc_code = -32022

    def __init__(self, requested: object, supported: tuple[str, ...]) -> None:
        super().__init__()
        self.requested = requested
        self.supported = supported

    def wire_data(self) -> dict[str, Any]:
        return {"supported": list(self.supported), "requested": self.requested}


# --- Governed memory contract errors (memory-contract.txt §2) ----------------------


class ContractError(EngramError):
    """A governed tool failure, answered as ``{ok: false, error: {code, ...}}``.

    ``retriable`` follows the contract's table; ``message`` is the constant sanitized
    string for the code.
    """

    code = "CONTRACT_ERROR"
    retriable: ClassVar[bool] = False


class InvalidSchema(ContractError):
    code = "INVALID_SCHEMA"
    message = "Arguments do not match the tool's closed schema."


class InvalidDigest(ContractError):
    code = "INVALID_DIGEST"
    message = "A digest is not sha256: followed by 64 lowercase hex characters."


class Unauthorized(ContractError):
    code = "UNAUTHORIZED"
    message = "The bound principal lacks authority for this operation."


class AuthorizationExpired(ContractError):
    code = "AUTHORIZATION_EXPIRED"
    message = "The authorization has expired."


class AuthorizationRevoked(ContractError):
    code = "AUTHORIZATION_REVOKED"
    message = "The authorization has been revoked."


class NotFound(ContractError):
    code = "NOT_FOUND"
    message = "The target is not available."


class DigestConflict(ContractError):
    code = "DIGEST_CONFLICT"
    message = "The idempotency key was already used with different content or target."


class IllegalTransition(ContractError):
    code = "ILLEGAL_TRANSITION"
    message = "The lifecycle state forbids this operation."


class AlreadyTerminal(ContractError):
    code = "ALREADY_TERMINAL"
    message = "The target is already in a terminal state."


class MutationOutcomeUnknown(ContractError):
    code = "MUTATION_OUTCOME_UNKNOWN"
    message = "The mutation may have committed; retry with the same key and arguments."
    retriable = True


class GateFailed(ContractError):
    code = "gate_failed"
    message = "A required confirmation or policy gate is not satisfied."


class StalePage(ContractError):
    code = "STALE_PAGE"
    message = "The page cursor no longer matches the query, parameters or snapshot."


class ResultTooLarge(ContractError):
    code = "RESULT_TOO_LARGE"
    message = "The whole result exceeds the 1,048,576-byte response ceiling."


class ProjectionOversized(ContractError):
    code = "PROJECTION_OVERSIZED"
    message = "A single record projection exceeds max_packet_bytes."


class RateLimited(ContractError):
    code = "RATE_LIMITED"
    message = "Rate limited; back off and retry."
    retriable = True


class DeadlineExceeded(ContractError):
    code = "DEADLINE_EXCEEDED"
    message = "The deadline was exceeded; retry."
    retriable = True


class Cancelled(ContractError):
    code = "CANCELLED"
    message = "The call was cancelled."
    retriable = True


class StoreUnavailable(ContractError):
    code = "STORE_UNAVAILABLE"
    message = "The store is unavailable; back off and retry."
    retriable = True


class FenceLost(ContractError):
    code = "FENCE_LOST"
    message = "The writer fence was lost; retry."
    retriable = True


class CursorGap(ContractError):
    code = "CURSOR_GAP"
    message = "The journal cursor has a gap; retry."
    retriable = True


class PolicyUnavailable(ContractError):
    code = "POLICY_UNAVAILABLE"
    message = "The host policy is unavailable; retry."
    retriable = True


class PolicyStale(ContractError):
    code = "POLICY_STALE"
    message = "The host policy decision is stale; retry."
    retriable = True


class ProjectionStale(ContractError):
    code = "PROJECTION_STALE"
    message = "A projection is stale; retry."
    retriable = True


class RankingUnavailable(ContractError):
    code = "RANKING_UNAVAILABLE"
    message = "A required ranking channel is unavailable."
    retriable = True


class CapabilityUnavailable(ContractError):
    code = "CAPABILITY_UNAVAILABLE"
    message = "A required capability is unavailable."


class JournalCorrupt(ContractError):
    code = "JOURNAL_CORRUPT"
    message = "The journal failed verification."

    def __init__(self, detail: str | None = None, cursor: int | None = None) -> None:
        super().__init__(detail)
        self.cursor = cursor


class BlobMissing(ContractError):
    code = "BLOB_MISSING"
    message = "Sealed content is missing."


class RegistryVersionUnavailable(ContractError):
    code = "REGISTRY_VERSION_UNAVAILABLE"
    message = "The registry version is unavailable."


class BackupInvalid(ContractError):
    code = "BACKUP_INVALID"
    message = "The backup is invalid."


class RestoreRefused(ContractError):
    code = "RESTORE_REFUSED"
    message = "The restore was refused."


class MigrationLedgerInvalid(ContractError):
    code = "MIGRATION_LEDGER_INVALID"
    message = "The migration ledger is invalid."


# --- Project memory ----------------------------------------------------------------


class ProjectError(EngramError):
    """A project-memory failure: a tool answers ``{ok: false, error: {code, message}}``.

    Project tools serve the developer's own repository, so ``detail`` (a path, a
    line, a reason) is shown to the agent; it never contains a detected secret.
    """

    code = "PROJECT_ERROR"


class NotInitialized(ProjectError):
    code = "NOT_INITIALIZED"
    message = "No project memory here: run `engram init` in the repository."


class HashesCorrupt(ProjectError):
    code = "HASHES_CORRUPT"
    message = "memory.hashes cannot be read."


class IndexDamaged(ProjectError):
    code = "INDEX_DAMAGED"
    message = "The project index was damaged; it is rebuilt at the next call."


class NotWritable(ProjectError):
    code = "NOT_WRITABLE"
    message = "A file could not be written; nothing was changed."


class ConfigError(ProjectError):
    code = "INVALID_CONFIG"
    message = "The project configuration is invalid."


class FrontmatterError(ProjectError):
    """A memory file whose frontmatter cannot be read."""

    code = "INVALID_MEMORY_FILE"
    message = "A memory file is invalid."

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class InvalidQuery(ProjectError):
    code = "INVALID_QUERY"
    message = "The query is invalid."


class RoleError(ProjectError):
    code = "INVALID_ROLE"
    message = "A role must be a non-empty name."


class CandidateError(ProjectError):
    code = "INVALID_CANDIDATE"
    message = "A candidate is invalid."


class SecretRefused(ProjectError):
    code = "SECRET_REFUSED"
    message = "Credential-like content is never saved."


class InstructionRefused(ProjectError):
    code = "INSTRUCTION_REFUSED"
    message = "A note line reads like an instruction to an agent; notes record facts."


class ApprovalError(ProjectError):
    """The token cannot be used: unknown, expired, used, or for another workspace."""

    code = "APPROVAL_INVALID"
    message = "The approval token cannot be used."


class ApprovalDeclined(ApprovalError):
    code = "APPROVAL_DECLINED"
    message = "approval was declined in the approval dialog"


class ApprovalTampered(ApprovalError):
    code = "APPROVAL_TAMPERED"
    message = "The pending proposal was edited; propose again."


class UnknownMemory(ProjectError):
    code = "UNKNOWN_MEMORY"
    message = "No memory has this id."


class InvalidArguments(ProjectError):
    code = "INVALID_ARGUMENTS"
    message = "The arguments do not match the tool's schema."


# --- Asking the human ---------------------------------------------------------------


class ElicitationFailed(EngramError):
    """The client did not answer an elicitation: timeout, error reply or closed stream.

    Callers treat it like a cancelled dialog and fall back; it never reaches the wire.
    """

    code = "ELICITATION_FAILED"
    message = "The client did not answer the dialog."


# --- Agent host configuration files (engram link / unlink / upgrade / doctor) -------


class TokenRefused(EngramError):
    """A bearer token ``engram-mcp --http`` does not accept: HTTP 401 before any tool
    runs. ``detail`` (why) is for the operator's log only, never for the response."""

    code = "TOKEN_REFUSED"
    message = "The bearer token is missing, invalid, expired or revoked."


class HostConfigError(EngramError):
    """A host's configuration file that engram refuses to change.

    Raised before anything is written: the file stays exactly as it was. ``detail``
    names the file (and the line where it applies) so the person can fix it by hand.
    """

    code = "HOST_CONFIG_ERROR"
    message = "A host configuration file cannot be changed safely."


class HostConfigUnparseable(HostConfigError):
    """The file is not valid in its format (JSON, JSONC or TOML); it is never overwritten."""

    code = "HOST_CONFIG_UNPARSEABLE"
    message = "A host configuration file cannot be parsed."


class HostConfigShape(HostConfigError):
    """The file parses, but a key on engram's path has the wrong type (e.g. a list)."""

    code = "HOST_CONFIG_SHAPE"
    message = "A host configuration file has an unexpected shape."


class ManagedBlockCorrupt(HostConfigError):
    """An engram managed block has duplicated or misordered markers; never repaired."""

    code = "MANAGED_BLOCK_CORRUPT"
    message = "An engram managed block has duplicated or misordered markers."


# --- Command line ------------------------------------------------------------------


class ExtraMissing(EngramError):
    """What was asked for needs an extra that is not installed (:mod:`engram.extras`).

    ``detail`` says what needs which extra and the ``pip install`` line that adds it. A
    usage-class exit code, as for :class:`UsageError`: nothing failed, the installation
    lacks a part the command line asked for.
    """

    code = "EXTRA_MISSING"
    message = "An optional part of engram is not installed."
    exit_code = 2


class UsageError(EngramError):
    """The command line was used wrongly."""

    code = "USAGE"
    message = "invalid usage"
    exit_code = 2
