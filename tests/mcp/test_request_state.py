"""Sealed request states: bound to tool, binding and arguments; expiring; unforgeable."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engram.errors import InvalidRequestState
from engram.mcp.request_state import STATE_TTL_MS, OpenState, StateSealer
from engram.memory.gate import APPROVAL_TTL_MS

KEY = b"k" * 32


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


def _sealed(clock: Clock) -> tuple[StateSealer, str]:
    sealer = StateSealer(KEY, clock)
    state = OpenState(asked={"confirm": "d1"}, answers={})
    return sealer, sealer.seal("tool_a", "ws-1", {"x": 1}, state)


def test_a_state_opens_for_the_same_call_and_returns_what_was_asked() -> None:
    sealer, token = _sealed(Clock())
    assert sealer.open(token, "tool_a", "ws-1", {"x": 1}) == OpenState(
        asked={"confirm": "d1"}, answers={}
    )


@pytest.mark.parametrize(
    ("tool", "binding", "arguments"),
    [("tool_b", "ws-1", {"x": 1}), ("tool_a", "ws-2", {"x": 1}), ("tool_a", "ws-1", {"x": 2})],
)
def test_a_state_refuses_another_tool_binding_or_arguments(
    tool: str, binding: str, arguments: dict[str, int]
) -> None:
    sealer, token = _sealed(Clock())
    with pytest.raises(InvalidRequestState):
        sealer.open(token, tool, binding, arguments)


def test_a_state_expires_after_its_ttl() -> None:
    assert STATE_TTL_MS == APPROVAL_TTL_MS  # the contract's ceiling for a human approval
    clock = Clock()
    sealer, token = _sealed(clock)
    clock.now += STATE_TTL_MS - 1
    sealer.open(token, "tool_a", "ws-1", {"x": 1})
    clock.now += 1
    with pytest.raises(InvalidRequestState):
        sealer.open(token, "tool_a", "ws-1", {"x": 1})


def test_a_state_from_another_key_is_refused() -> None:
    _, token = _sealed(Clock())
    with pytest.raises(InvalidRequestState):
        StateSealer(b"other" * 8, Clock()).open(token, "tool_a", "ws-1", {"x": 1})


def test_argument_key_order_does_not_matter_because_arguments_are_canonicalized() -> None:
    clock = Clock()
    sealer = StateSealer(KEY, clock)
    token = sealer.seal("t", "w", {"a": 1, "b": [1, 2]}, OpenState())
    assert sealer.open(token, "t", "w", {"b": [1, 2], "a": 1}) == OpenState()


@given(st.integers(min_value=0), st.integers(min_value=0, max_value=255))
def test_any_flipped_byte_is_refused(position: int, value: int) -> None:
    sealer, token = _sealed(Clock())
    index = position % len(token)
    replacement = chr(value)
    assume(token[index] != replacement)
    forged = token[:index] + replacement + token[index + 1 :]
    with pytest.raises(InvalidRequestState):
        sealer.open(forged, "tool_a", "ws-1", {"x": 1})
