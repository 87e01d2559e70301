"""The console's guard on its own (a fake clock): the one-time secret, sessions, form
tokens spent once and only for their action, and the console's own Host and Origin."""

from __future__ import annotations

import pytest

from engram.console.guard import FORM_TTL_S, HEADERS, Guard, Refusal


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _secret(guard: Guard) -> str:
    return guard.login_url.split("secret=", 1)[1]


def _refusal(call: object, *args: object) -> Refusal:
    with pytest.raises(Refusal) as refused:
        call(*args)  # type: ignore[operator]
    return refused.value


def test_the_login_secret_opens_one_session_and_is_spent() -> None:
    guard = Guard(8000)
    secret = _secret(guard)

    session = guard.log_in(secret)

    assert guard.session(session) == session
    again = _refusal(guard.log_in, secret)
    assert again.status == 403
    assert again.reason.startswith("this login link is not valid or was already used")
    with pytest.raises(RuntimeError):
        _ = guard.login_url


def test_a_wrong_or_missing_secret_is_refused_and_the_right_one_still_works() -> None:
    guard = Guard(8000)
    secret = _secret(guard)

    assert _refusal(guard.log_in, secret[:-1] + ("A" if secret[-1] != "A" else "B")).status == 403
    assert _refusal(guard.log_in, None).status == 403
    assert guard.session(guard.log_in(secret))


def test_a_page_without_a_session_is_refused_with_the_next_step() -> None:
    guard = Guard(8000)

    refused = _refusal(guard.session, None)
    forged = _refusal(guard.session, "not-a-session")

    assert refused.status == forged.status == 401
    assert "open the login URL `engram console` printed" in refused.reason


def test_the_console_has_a_random_name_of_its_own_under_localhost() -> None:
    import re

    one, other = Guard(8123), Guard(8123)

    assert re.fullmatch(r"engram-[0-9a-f]{16}\.localhost:8123", one.host)
    assert one.host != other.host
    assert one.origin == f"http://{one.host}"
    assert one.login_url.startswith(f"http://{one.host}/login?secret=")


def test_only_the_consoles_own_host_is_served() -> None:
    guard = Guard(8123)

    guard.check_host(guard.host)
    name = guard.host.removesuffix(":8123")
    for host in (
        "127.0.0.1:8123",
        "localhost:8123",
        "evil.example:8123",
        f"{name}:8124",
        name,
        guard.host.upper(),
        f"x.{guard.host}",
        None,
    ):
        assert _refusal(guard.check_host, host).status == 421


def test_a_form_token_is_spent_by_its_first_use() -> None:
    guard = Guard(8000)
    session = guard.log_in(_secret(guard))
    token = guard.issue(session, "/project/proposals/abc")

    guard.spend(session, guard.origin, "/project/proposals/abc", token)
    replayed = _refusal(guard.spend, session, guard.origin, "/project/proposals/abc", token)

    assert replayed.status == 403
    assert replayed.reason == "this form was already used or is not this page's: reload the page"


def test_a_form_token_works_only_for_its_action_and_session() -> None:
    guard = Guard(8000)
    session = guard.log_in(_secret(guard))
    token = guard.issue(session, "/governed/0/confirm/conf_a")
    other = guard.issue("another-session", "/governed/0/confirm/conf_a")

    wrong_action = _refusal(guard.spend, session, guard.origin, "/governed/0/confirm/conf_b", token)
    wrong_session = _refusal(
        guard.spend, session, guard.origin, "/governed/0/confirm/conf_a", other
    )

    assert wrong_action.status == wrong_session.status == 403
    guard.spend(session, guard.origin, "/governed/0/confirm/conf_a", token)


def test_an_action_from_another_origin_is_refused_and_leaves_the_token_unspent() -> None:
    guard = Guard(8000)
    session = guard.log_in(_secret(guard))
    token = guard.issue(session, "/x")

    others = ("http://evil.example", "http://127.0.0.1:8000", "http://localhost:8000", "null")
    for origin in (*others, guard.origin.replace(":8000", ":8001"), None):
        refused = _refusal(guard.spend, session, origin, "/x", token)
        assert (refused.status, refused.reason) == (
            403,
            "this action came from another page: use the console itself",
        )
    guard.spend(session, guard.origin, "/x", token)


def test_an_action_without_a_session_is_refused_before_its_token_is_looked_at() -> None:
    guard = Guard(8000)
    session = guard.log_in(_secret(guard))
    token = guard.issue(session, "/x")

    assert _refusal(guard.spend, None, guard.origin, "/x", token).status == 401
    guard.spend(session, guard.origin, "/x", token)


def test_a_form_older_than_an_hour_is_refused() -> None:
    clock = Clock()
    guard = Guard(8000, clock=clock)
    session = guard.log_in(_secret(guard))
    token = guard.issue(session, "/x")

    clock.now += FORM_TTL_S + 1

    refused = _refusal(guard.spend, session, guard.origin, "/x", token)
    assert (refused.status, refused.reason) == (
        403,
        "this form is more than an hour old: reload the page",
    )


def test_every_answer_forbids_scripts_framing_referrers_and_caching() -> None:
    assert HEADERS["Content-Security-Policy"] == (
        "default-src 'none'; style-src 'self'; form-action 'self';"
        " frame-ancestors 'none'; base-uri 'none'"
    )
    assert HEADERS["Referrer-Policy"] == "same-origin"
    assert HEADERS["X-Frame-Options"] == "DENY"
    assert HEADERS["Cache-Control"] == "no-store"
