"""What engram prints of a host's configuration: values that may be secrets masked."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.hosts.masking import (
    masked_argv,
    shown_command,
    shown_options,
    shown_shell,
)

SECRET = "sk-SECRET-123"


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (
            ["docker", "run", "-e", f"OPENAI_API_KEY={SECRET}", "-i", "img", "engram-mcp"],
            "docker run -e OPENAI_API_KEY=… -i img engram-mcp",
        ),
        (["env", f"API_TOKEN={SECRET}", "engram-mcp"], "env API_TOKEN=… engram-mcp"),
        (
            ["docker", "run", "--env", f"KEY={SECRET}", "-e", "HOME", "img", "engram-mcp"],
            "docker run --env KEY=… -e HOME img engram-mcp",
        ),
        (["podman", "run", f"--env=KEY={SECRET}", "img"], "podman run --env=KEY=… img"),
        (
            ["engram-mcp", "--root", "/data", "--host-profile=h.toml", "--always-load"],
            "engram-mcp --root /data --host-profile=h.toml --always-load",
        ),
        (
            ["engram-mcp", "--api-key", SECRET, f"--token={SECRET}", "--verbose"],
            "engram-mcp --api-key … --token=… --verbose",
        ),
        (
            ["npx", "mcp-remote", "https://mcp.example", "--header", f"Authorization: {SECRET}"],
            "npx mcp-remote https://mcp.example --header …",
        ),
        (
            ["uvx", "--index-url", f"https://me:{SECRET}@pypi.example/simple", "engram-mcp"],
            "uvx --index-url https://me:…@pypi.example/simple engram-mcp",
        ),
        (
            ["uvx", "--index-url", f"https://pypi.example/simple?token={SECRET}", "engram-mcp"],
            "uvx --index-url 'https://pypi.example/simple?token=…' engram-mcp",
        ),
        (
            ["sh", "-c", f'OPENAI_API_KEY="{SECRET} x" exec engram-mcp'],
            "sh -c 'OPENAI_API_KEY=… exec engram-mcp'",
        ),
        (["sh", "-c", f"KEY='{SECRET} engram-mcp"], "sh -c 'KEY=…'"),
        (
            ["uvx", "--from", "engram==0.0.5", "engram-mcp"],
            "uvx --from engram==0.0.5 engram-mcp",
        ),
        (["pipx", "run", "--spec", "engram>=1,<2", "engram-mcp"], None),
        (["/My Tools/engram-mcp", ""], None),
    ],
)
def test_a_command_line_is_shown_with_every_value_masked(
    argv: list[str], shown: str | None
) -> None:
    assert shown_command(argv) == (shown or shlex.join(argv))
    assert SECRET not in shown_command(argv)
    assert not any(SECRET in word for word in masked_argv(argv))


def test_masked_words_keep_their_places() -> None:
    argv = ["docker", "run", "-e", f"KEY={SECRET}", "img", "engram-mcp", "--root=/d"]
    assert masked_argv(argv) == ["docker", "run", "-e", "KEY=…", "img", "engram-mcp", "--root=/d"]


def test_engram_mcps_own_options_stay_readable_and_any_other_is_masked() -> None:
    options = ["--root", "/data", "--always-load", f"--api-key={SECRET}"]
    assert shown_options(options) == "--root /data --always-load --api-key=…"


def test_a_hook_command_is_masked_word_by_word_and_otherwise_left_as_written() -> None:
    assert shown_shell(f"TOKEN={SECRET} ./mine.sh --fast") == "TOKEN=… ./mine.sh --fast"
    assert shown_shell("'/opt/my tools/engram' hook claude") == "'/opt/my tools/engram' hook claude"


_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)


@settings(max_examples=200)
@given(value=_TEXT, name=st.from_regex(r"[A-Z_][A-Z0-9_]{0,10}", fullmatch=True))
def test_no_assignment_value_is_ever_shown(value: str, name: str) -> None:
    secret = SECRET + value
    for argv in (
        ["docker", "run", "-e", f"{name}={secret}", "img", "engram-mcp"],
        ["env", f"{name}={secret}", "engram-mcp", f"--x-{name.lower()}={secret}"],
        ["sh", "-c", shlex.join([f"{name}={secret}", "engram-mcp"])],
    ):
        assert SECRET not in shown_command(argv)
        assert SECRET not in " ".join(masked_argv(argv))
