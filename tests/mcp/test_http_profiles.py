"""``engram-mcp --http`` serves each token's profile as it is now (issue 26, items 2 and
3), in process: a changed profile gets a new dispatcher at its next request, and the one
before is closed once its last call has ended, never under a call."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.mcp.http import HttpSettings
from engram.mcp.options import ServerOptions
from engram.testing import host_profile


def test_a_changed_profile_gets_a_new_dispatcher_and_the_old_closes_after_its_last_call(
    tmp_path: Path,
) -> None:
    path = host_profile(tmp_path / "host")
    token = issue_token(load_profile(path), int(time.time()))
    closed = threading.Event()
    with contextlib.ExitStack() as resources:
        settings = HttpSettings(load_profile(path), frozenset(), ServerOptions(), resources)
        first, key = settings.dispatcher(settings.admit(token))  # a call in progress
        first.resources.callback(closed.set)
        again, _ = settings.dispatcher(settings.admit(token))
        settings.release(again)
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("max_days = 30", "max_days = 7"), encoding="utf-8")

        changed, same_key = settings.dispatcher(settings.admit(token))
        settings.release(changed)
        still_open = closed.is_set()
        settings.release(first)  # the call under the old profile ends

        assert again is first
        assert changed is not first
        assert same_key == key  # a legacy session keeps its binding
        assert still_open is False
        assert closed.wait(30)
        assert list(settings.dispatchers.values()) == [changed]


def test_tokens_of_one_profile_with_other_grants_are_served_side_by_side(tmp_path: Path) -> None:
    path = host_profile(tmp_path / "host")
    text = path.read_text(encoding="utf-8")
    granted = next(line for line in text.splitlines() if line.startswith("tools = "))
    path.write_text(text.replace(granted, 'tools = ["search"]'), encoding="utf-8")
    narrow = issue_token(load_profile(path), int(time.time()))
    path.write_text(text, encoding="utf-8")  # every tool granted again
    wide = issue_token(load_profile(path), int(time.time()))
    with contextlib.ExitStack() as resources:
        settings = HttpSettings(load_profile(path), frozenset(), ServerOptions(), resources)
        served = []
        for token in (narrow, wide, narrow, wide):
            one, _ = settings.dispatcher(settings.admit(token))
            settings.release(one)
            served.append(one)

    assert served[0] is served[2]
    assert served[1] is served[3]
    assert served[0] is not served[1]
    assert not any(one.retired for one in served)


def test_a_profile_changed_outside_its_policy_gets_a_new_dispatcher_too(tmp_path: Path) -> None:
    path = host_profile(tmp_path / "host")
    token = issue_token(load_profile(path), int(time.time()))
    with contextlib.ExitStack() as resources:
        settings = HttpSettings(load_profile(path), frozenset(), ServerOptions(), resources)
        before, _ = settings.dispatcher(settings.admit(token))
        settings.release(before)
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace('durability = "full"', 'durability = "normal"'), encoding="utf-8"
        )

        after, _ = settings.dispatcher(settings.admit(token))
        settings.release(after)

    assert after is not before
    assert after.profile.durability == "normal"
    assert before.retired is True
