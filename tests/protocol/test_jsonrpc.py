"""JSON-RPC message classification and response building."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.errors import InvalidRequest, ParseError, UnsupportedProtocolVersion
from engram.protocol.jsonrpc import (
    Batch,
    Notification,
    Request,
    Response,
    dumps,
    error_response,
    parse_message,
)


def test_a_request_has_an_id_a_method_and_object_params() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"k":1}}') == Request(
        "a", "m", {"k": 1}
    )


def test_missing_params_are_an_empty_object() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":0,"method":"m"}') == Request(0, "m", {})


def test_a_message_without_id_is_a_notification() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"n"}') == Notification("n", {})


def test_a_message_without_method_is_a_reply_to_our_request() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":"engram-1","result":{"action":"cancel"}}') == (
        Response("engram-1", {"action": "cancel"}, None)
    )


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":3}',
        b'{"jsonrpc":"2.0","result":{}}',
    ],
)
def test_a_malformed_reply_is_a_bad_request(line: bytes) -> None:
    with pytest.raises(InvalidRequest):
        parse_message(line)


@pytest.mark.parametrize("line", [b"", b"{", b"\xff", b'{"a":Infinity}', b"[" * 100_000])
def test_bytes_that_are_not_json_are_a_parse_error(line: bytes) -> None:
    with pytest.raises(ParseError):
        parse_message(line)


def test_error_response_carries_the_constant_message_and_data() -> None:
    error = UnsupportedProtocolVersion("1999-01-01", ("2026-07-28",))
    assert error_response(5, error) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"},
        },
    }


def test_dumps_writes_one_line_even_for_text_with_newlines_and_separators() -> None:
    line = dumps({"text": "a\nb\r\u2028c\u0000"})
    assert b"\n" not in line
    assert b"\r" not in line


def test_dumps_writes_a_lone_surrogate_as_its_ascii_escape() -> None:
    message = {"jsonrpc": "2.0", "id": "\ud800", "result": {"text": "é\udfff"}}
    line = dumps(message)
    assert line == b'{"jsonrpc":"2.0","id":"\\ud800","result":{"text":"\\u00e9\\udfff"}}'
    assert json.loads(line) == message


def test_dumps_keeps_utf8_when_no_surrogate_stands_alone() -> None:
    assert dumps({"text": "é😀"}) == '{"text":"é😀"}'.encode()


#: Text as JSON strings can carry it: lone surrogates (Hypothesis leaves category Cs
#: out unless asked), control characters, letters, emoji.
JSON_TEXT = st.text(alphabet=st.characters(categories=["Cs", "Cc", "Ll", "Lu", "Lo", "So", "Zs"]))


@given(JSON_TEXT)
def test_any_text_the_parser_accepts_serializes_to_one_utf8_line_that_reads_back(
    text: str,
) -> None:
    request = parse_message(json.dumps({"jsonrpc": "2.0", "id": text, "method": text}).encode())
    assert isinstance(request, Request)
    line = dumps({"jsonrpc": "2.0", "id": request.id, "result": {"method": request.method}})
    assert b"\n" not in line
    assert json.loads(line.decode("utf-8")) == {
        "jsonrpc": "2.0",
        "id": text,
        "result": {"method": text},
    }


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_dumps_refuses_what_json_cannot_carry(value: float) -> None:
    # json raises a bare ValueError; tests never match on message text.
    with pytest.raises(ValueError):  # noqa: PT011
        dumps({"x": value})


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" + b"0" * 400 + b".0"])
def test_a_number_beyond_a_double_is_a_parse_error(number: bytes) -> None:
    with pytest.raises(ParseError):
        parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":' + number + b"}}")


def test_an_array_is_a_batch_whose_invalid_members_carry_their_own_errors() -> None:
    batch = parse_message(
        b'[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n"},'
        b'{"jsonrpc":"2.0","id":"e","result":{}},{"jsonrpc":"1.0","id":2,"method":"m"},[1]]'
    )
    assert isinstance(batch, Batch)
    first, second, third, *invalid = batch.members
    assert (first, second, third) == (
        Request(1, "m", {}),
        Notification("n", {}),
        Response("e", {}, None),
    )
    assert [(type(member), getattr(member, "request_id", "")) for member in invalid] == [
        (InvalidRequest, 2),
        (InvalidRequest, None),
    ]


def test_an_empty_array_is_one_invalid_request() -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_message(b"[]")
    assert raised.value.request_id is None
