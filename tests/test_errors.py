"""The error tree: stable codes, constant messages, JSON-RPC codes, exit codes."""

from __future__ import annotations

from typing import TypeVar

from engram import errors
from engram.errors import ContractError, EngramError, ProtocolError
from engram.protocol import jsonrpc

E = TypeVar("E", bound=EngramError)


def _subclasses(root: type[E]) -> list[type[E]]:
    found: list[type[E]] = []
    for cls in root.__subclasses__():
        found += [cls, *_subclasses(cls)]
    return found


def test_every_public_error_is_exported_and_derives_from_engram_error() -> None:
    exported = {getattr(errors, name) for name in errors.__all__}
    assert exported == {EngramError, *_subclasses(EngramError)}


def test_codes_are_unique_per_class() -> None:
    codes = [cls.code for cls in _subclasses(EngramError)]
    assert len(codes) == len(set(codes))


def test_protocol_errors_use_the_named_json_rpc_constants() -> None:
    named = {
        jsonrpc.PARSE_ERROR,
        jsonrpc.INVALID_REQUEST,
        jsonrpc.METHOD_NOT_FOUND,
        jsonrpc.INVALID_PARAMS,
        jsonrpc.INTERNAL_ERROR,
        jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
        jsonrpc.RESOURCE_NOT_FOUND,
    }
    assert {cls.jsonrpc_code for cls in _subclasses(ProtocolError)} <= named


def test_the_contract_retriable_table() -> None:
    retriable = {cls.code for cls in _subclasses(ContractError) if cls.retriable}
    assert retriable == {
        "MUTATION_OUTCOME_UNKNOWN",
        "RATE_LIMITED",
        "DEADLINE_EXCEEDED",
        "CANCELLED",
        "STORE_UNAVAILABLE",
        "FENCE_LOST",
        "CURSOR_GAP",
        "POLICY_UNAVAILABLE",
        "POLICY_STALE",
        "PROJECTION_STALE",
        "RANKING_UNAVAILABLE",
    }


def test_usage_errors_exit_with_two_and_other_errors_with_one() -> None:
    assert errors.UsageError.exit_code == 2
    assert EngramError.exit_code == 1
