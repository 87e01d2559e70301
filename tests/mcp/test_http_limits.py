"""The HTTP server's limits in memory: what the environment sets, how the cap on open
connections is planned below the file limit, and how repeated log lines are held back.
The server itself, flooded, is tested in tests/adversarial/test_http_flood.py."""

from __future__ import annotations

import logging

import pytest

from engram.mcp.http_limits import RepeatLimit, plan_connections
from engram.mcp.options import HttpLimits, parse_options


def test_the_limits_default_to_10_s_of_headers_30_s_of_body_5_s_of_keep_alive() -> None:
    assert parse_options([], {}).http_limits == HttpLimits(10.0, 30.0, 5, 1000)


def test_the_environment_sets_each_limit() -> None:
    env = {
        "ENGRAM_HTTP_HEADER_TIMEOUT_S": "0.5",
        "ENGRAM_HTTP_BODY_TIMEOUT_S": "2",
        "ENGRAM_HTTP_KEEP_ALIVE_S": "1",
        "ENGRAM_HTTP_MAX_CONNECTIONS": "50",
    }

    options = parse_options([], env)

    assert options.http_limits == HttpLimits(0.5, 2.0, 1, 50)
    assert options.ignored == ()


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf", "1.5e999"])
def test_a_limit_that_is_not_a_positive_number_is_ignored_with_a_note(value: str) -> None:
    options = parse_options([], {"ENGRAM_HTTP_BODY_TIMEOUT_S": value})

    assert options.http_limits.body_timeout == 30.0
    assert options.ignored == (f"ENGRAM_HTTP_BODY_TIMEOUT_S={value}",)


def test_whole_seconds_of_keep_alive_and_a_whole_number_of_connections() -> None:
    env = {"ENGRAM_HTTP_KEEP_ALIVE_S": "2.5", "ENGRAM_HTTP_MAX_CONNECTIONS": "10.0"}

    options = parse_options([], env)

    assert (options.http_limits.keep_alive, options.http_limits.max_connections) == (5, 1000)
    assert options.ignored == ("ENGRAM_HTTP_KEEP_ALIVE_S=2.5", "ENGRAM_HTTP_MAX_CONNECTIONS=10.0")


@pytest.mark.parametrize(
    ("file_limit", "planned"),
    [
        (1024, (64, 704)),  # the common soft limit, when the hard one is no higher
        (4096, (128, 1000)),
        (1 << 20, (128, 1000)),
        (256, (16, 128)),
        (64, (8, 8)),  # too few files to plan for: a few connections all the same
        (None, (128, 1000)),  # no limit (not POSIX)
    ],
)
def test_the_cap_leaves_room_below_the_file_limit_for_one_accept_burst_and_the_store(
    file_limit: int | None, planned: tuple[int, int]
) -> None:
    assert plan_connections(1000, file_limit) == planned


def test_an_operator_s_lower_cap_is_kept() -> None:
    assert plan_connections(4, 1024) == (64, 4)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _record(text: str, *args: object, name: str = "engram.mcp.http") -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, text, args, None)


def test_a_repeated_line_is_written_once_per_interval_then_with_how_many_were_held() -> None:
    clock = Clock()
    limit = RepeatLimit(10.0, clock)
    written = []
    for step in range(25):  # one line a second for 25 s
        clock.now = 100.0 + step
        record = _record("clients left before sending a whole request body")
        if limit.filter(record):
            written.append(record.getMessage())

    assert written == [
        "clients left before sending a whole request body",
        "clients left before sending a whole request body (9 more like it held back)",
        "clients left before sending a whole request body (9 more like it held back)",
    ]


def test_different_lines_and_loggers_are_held_back_apart() -> None:
    limit = RepeatLimit(10.0, Clock())

    passed = [
        limit.filter(_record("refused a request: %s", "expired")),
        limit.filter(_record("refused a request: %s", "revoked")),
        limit.filter(_record("refused a request: %s", "expired")),
        limit.filter(_record("refused a request: %s", "expired", name="uvicorn.error")),
    ]

    assert passed == [True, True, False, True]


def test_a_traceback_s_first_line_is_what_repeats() -> None:
    clock = Clock()
    limit = RepeatLimit(10.0, clock)

    assert limit.filter(_record("Exception in ASGI application\nat line 1"))
    assert not limit.filter(_record("Exception in ASGI application\nat line 2"))
    clock.now += 10
    record = _record("Exception in ASGI application\nat line 3")
    assert limit.filter(record)
    assert (
        record.getMessage() == "Exception in ASGI application (1 more like it held back)\nat line 3"
    )


def test_past_its_table_every_new_line_of_a_logger_shares_one_allowance() -> None:
    limit = RepeatLimit(10.0, Clock())

    passed = [limit.filter(_record(f"line {n}")) for n in range(RepeatLimit.KEYS + 10)]

    assert passed.count(True) == RepeatLimit.KEYS + 1  # each known line, then one for the rest
