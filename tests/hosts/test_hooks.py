"""Session hooks: installing engram's hook item, and what `engram hook` prints."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from engram.errors import ProjectError, UsageError
from engram.hosts.claude import TARGET as CLAUDE
from engram.hosts.cursor import TARGET as CURSOR
from engram.hosts.gemini import TARGET as GEMINI
from engram.hosts.hook_output import HookInput, hook_output, read_hook_input, run_hook
from engram.hosts.hooks import (
    installed_hooks,
    is_hook_command,
    kept_settings,
    with_hook,
    without_hook,
)

FILE = Path("hooks.json")


def test_hook_commands_are_recognised_by_what_they_run() -> None:
    assert is_hook_command("engram hook claude")
    assert is_hook_command("'/opt/my venv/bin/engram' hook cursor")
    assert is_hook_command("/usr/bin/python3 -m engram hook codex")
    assert not is_hook_command("engram-mcp")
    assert not is_hook_command("echo engram hook")
    assert not is_hook_command("unterminated 'quote")


def test_claude_hook_joins_existing_session_start_hooks_and_leaves_them_alone() -> None:
    text = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}'
    spec = CLAUDE.hooks
    assert spec is not None
    added = with_hook(spec, text, "engram hook claude", FILE)
    groups = json.loads(added)["hooks"]["SessionStart"]
    assert groups[0] == {"hooks": [{"type": "command", "command": "echo hi"}]}
    assert groups[1] == {
        "hooks": [{"type": "command", "command": "engram hook claude", "timeout": 30}]
    }
    assert with_hook(spec, added, "engram hook claude", FILE) == added
    repinned = with_hook(spec, added, "/new/engram hook claude", FILE)
    assert len(installed_hooks(spec, repinned, FILE)) == 1
    assert without_hook(spec, added, FILE) == text


def test_gemini_hooks_are_named_and_time_out_in_milliseconds() -> None:
    spec = GEMINI.hooks
    assert spec is not None
    added = json.loads(with_hook(spec, None, "engram hook gemini", FILE))
    hook = added["hooks"]["SessionStart"][0]["hooks"][0]
    assert hook == {
        "name": "engram",
        "type": "command",
        "command": "engram hook gemini",
        "timeout": 30000,
    }


def test_cursor_hooks_file_gets_a_version_and_disappears_when_only_it_is_left() -> None:
    spec = CURSOR.hooks
    assert spec is not None
    added = with_hook(spec, None, "engram hook cursor", FILE)
    assert json.loads(added) == {
        "version": 1,
        "hooks": {"sessionStart": [{"command": "engram hook cursor", "timeout": 30}]},
    }
    assert without_hook(spec, added, FILE) is None


@pytest.mark.parametrize("host", ["claude", "codex", "gemini"])
def test_session_start_output_uses_additional_context(host: str) -> None:
    assert hook_output(host, "rules") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "rules"}
    }


def test_cursor_output_uses_additional_context_with_an_underscore() -> None:
    assert hook_output("cursor", "rules") == {"additional_context": "rules"}


def test_hosts_without_a_context_hook_are_a_usage_error() -> None:
    with pytest.raises(UsageError):
        hook_output("windsurf", "x")


def test_hook_input_gives_the_workspace_of_each_host() -> None:
    assert read_hook_input('{"cwd": "/p", "source": "startup"}') == HookInput(Path("/p"), "startup")
    assert read_hook_input('{"workspace_roots": ["/w"]}').root == Path("/w")
    assert read_hook_input("not json") == HookInput()
    assert read_hook_input("[1]") == HookInput()


def test_run_hook_prints_only_the_hosts_json_even_when_loading_prints() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()

    def load(hook: HookInput) -> str:
        print("stray output")
        return f"memory for {hook.root}"

    status = run_hook(
        "claude", load, stdin=io.StringIO('{"cwd": "/p"}'), stdout=stdout, stderr=stderr
    )
    assert status == 0
    assert json.loads(stdout.getvalue()) == hook_output("claude", "memory for /p")
    assert stdout.getvalue().count("\n") == 1
    assert "stray output" in stderr.getvalue()


def test_run_hook_answers_with_empty_context_when_loading_fails() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()

    def load(hook: HookInput) -> str:
        raise ProjectError("no memory here")

    run_hook("cursor", load, stdin=io.StringIO(""), stdout=stdout, stderr=stderr)
    assert json.loads(stdout.getvalue()) == {"additional_context": ""}
    assert "no memory here" in stderr.getvalue()


MIXED = """{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {"type": "command", "command": "./mine.sh"},
          {"type": "command", "command": "/old/bin/engram hook claude --budget-tokens 800"}
        ]
      }
    ]
  }
}
"""


def test_an_engram_hook_inside_someone_elses_group_is_recognised() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    assert installed_hooks(spec, MIXED, FILE) == [
        {"type": "command", "command": "/old/bin/engram hook claude --budget-tokens 800"}
    ]


def test_relinking_repins_an_engram_hook_where_it_is_and_adds_no_second_one() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    repinned = with_hook(spec, MIXED, "/new/bin/engram hook claude", FILE)
    assert repinned == MIXED.replace(
        "/old/bin/engram hook claude --budget-tokens 800",
        "/new/bin/engram hook claude --budget-tokens 800",
    )
    assert with_hook(spec, repinned, "/new/bin/engram hook claude", FILE) == repinned


def test_unlink_takes_engrams_hook_out_of_a_shared_group_and_keeps_the_group() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    assert without_hook(spec, MIXED, FILE) == (
        "{\n"
        '  "hooks": {\n'
        '    "SessionStart": [\n'
        "      {\n"
        '        "matcher": "startup",\n'
        '        "hooks": [\n'
        '          {"type": "command", "command": "./mine.sh"}\n'
        "        ]\n"
        "      }\n"
        "    ]\n"
        "  }\n"
        "}\n"
    )


def test_unlink_removes_a_group_that_held_only_engrams_hooks() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    mine = '{"matcher": "resume", "hooks": [{"type": "command", "command": "./mine.sh"}]}'
    engrams = (
        '{"hooks": [{"type": "command", "command": "engram hook claude"}, '
        '{"type": "command", "command": "engram hook claude --budget-tokens 900"}]}'
    )
    text = f'{{"hooks": {{"SessionStart": [{engrams}, {mine}]}}, "model": "opus"}}'
    assert without_hook(spec, text, FILE) == (
        f'{{"hooks": {{"SessionStart": [{mine}]}}, "model": "opus"}}'
    )
    assert without_hook(spec, f'{{"hooks": {{"SessionStart": [{engrams}]}}}}', FILE) is None


def test_cursor_flat_items_are_repinned_in_place() -> None:
    spec = CURSOR.hooks
    assert spec is not None
    text = (
        '{"version": 1, "hooks": {"sessionStart": [{"command": "engram hook cursor", '
        '"timeout": 60}, {"command": "./mine.sh"}]}}'
    )
    repinned = with_hook(spec, text, "/v/bin/engram hook cursor", FILE)
    assert repinned == text.replace('"engram hook cursor"', '"/v/bin/engram hook cursor"')
    assert without_hook(spec, repinned, FILE) == (
        '{"version": 1, "hooks": {"sessionStart": [{"command": "./mine.sh"}]}}'
    )


CUSTOMISED = (
    '{"hooks": {"SessionStart": ['
    '{"matcher": "startup", "hooks": [{"type": "command", "command": "engram hook claude", '
    '"timeout": 60}]}, '
    '{"hooks": [{"type": "command", "command": "./mine.sh"}]}'
    "]}}"
)


def test_linking_again_keeps_a_customised_engram_hook_and_names_what_differs() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    repinned = with_hook(spec, CUSTOMISED, "/v/bin/engram hook claude", FILE)
    assert repinned == CUSTOMISED.replace('"engram hook claude"', '"/v/bin/engram hook claude"')
    assert kept_settings(spec, repinned, FILE) == ["timeout", "matcher"]


def test_force_resets_a_customised_engram_hook_to_engrams_own_item() -> None:
    spec = CLAUDE.hooks
    assert spec is not None
    reset = with_hook(spec, CUSTOMISED, "engram hook claude", FILE, force=True)
    assert reset == (
        '{"hooks": {"SessionStart": ['
        '{"hooks": [{"type": "command", "command": "./mine.sh"}]}, '
        '{"hooks": [{"type": "command", "command": "engram hook claude", "timeout": 30}]}'
        "]}}"
    )
    assert kept_settings(spec, reset, FILE) == []
    assert with_hook(spec, reset, "engram hook claude", FILE, force=True) == reset


def test_force_leaves_one_hook_where_there_were_two() -> None:
    spec = CURSOR.hooks
    assert spec is not None
    item = {"command": "engram hook cursor", "timeout": 30}
    twice = json.dumps({"version": 1, "hooks": {"sessionStart": [item, item]}})
    assert with_hook(spec, twice, "engram hook cursor", FILE) == twice
    once = with_hook(spec, twice, "engram hook cursor", FILE, force=True)
    assert json.loads(once) == {"version": 1, "hooks": {"sessionStart": [item]}}


def test_a_gemini_hook_without_engrams_name_counts_as_changed() -> None:
    spec = GEMINI.hooks
    assert spec is not None
    hook = {"type": "command", "command": "engram hook gemini", "timeout": 30000}
    text = json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    assert kept_settings(spec, text, FILE) == ["name"]
