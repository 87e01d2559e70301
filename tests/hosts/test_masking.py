"""What engram prints of a host's configuration: values that may be secrets masked."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.hosts.masking import (
    MASK,
    masked_argv,
    masked_text,
    masked_texts,
    shown_command,
    shown_options,
    shown_shell,
)

SECRET = "sk-SECRET-123"
#: A fake GitHub token: the shared credential detector knows its shape.
TOKEN = "ghp_Zq8Lm3Xv7Rt2Wp9Ks4Hd6Fj1Bn5Cy0Ga8Ue3"


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


def test_a_credential_the_detector_knows_is_masked_wherever_it_stands() -> None:
    assert shown_command(["npx", "mcp-remote", "https://mcp.example", TOKEN]) == (
        "npx mcp-remote https://mcp.example …"
    )
    assert shown_shell(f"./mine.sh {TOKEN}") == "./mine.sh …"
    text = f'{{\n  // my token: {TOKEN}\n  "mcpServers": {{}}\n}}\n'
    assert masked_text(text, Path("settings.json")) == (
        '{\n  // my token: …\n  "mcpServers": {}\n}\n'
    )
    assert masked_text(f"Use {TOKEN}.\n", Path("CLAUDE.md")) == "Use ….\n"


def test_both_sides_of_a_change_are_masked_alike() -> None:
    # DB_PASSWORD=… names the value as a password; its echo elsewhere is one too, even on
    # the side where the assignment is gone.
    before = '// DB_PASSWORD=Zx9kq2Lm7\n{"note": "Zx9kq2Lm7"}\n'
    after = '{"note": "Zx9kq2Lm7"}\n'
    assert masked_texts(before, after, Path("settings.json")) == (
        '// DB_PASSWORD=…\n{"note": "…"}\n',
        '{"note": "…"}\n',
    )
    assert masked_texts(None, before, Path("settings.json")) == (
        None,
        '// DB_PASSWORD=…\n{"note": "…"}\n',
    )


def test_masked_words_keep_their_places() -> None:
    argv = ["docker", "run", "-e", f"KEY={SECRET}", "img", "engram-mcp", "--root=/d"]
    assert masked_argv(argv) == ["docker", "run", "-e", "KEY=…", "img", "engram-mcp", "--root=/d"]


def test_engram_mcps_own_options_stay_readable_and_any_other_is_masked() -> None:
    options = ["--root", "/data", "--always-load", f"--api-key={SECRET}"]
    assert shown_options(options) == "--root /data --always-load --api-key=…"


def test_a_word_after_an_options_value_is_masked_as_any_other() -> None:
    # engram-mcp reads --root --root as --root given the value "--root": what follows
    # is not its own, so it is masked as any other word. The values are ones the
    # credential detector does not know, so only the masking rules can hide them.
    command = ["engram-mcp", "--root", "--root", "--token=hunter2pass"]
    assert shown_command(command) == "engram-mcp --root --root --token=…"
    options = ["--host-profile", "--host-profile", "API_KEY=abc123"]
    assert shown_options(options) == "--host-profile --host-profile API_KEY=…"


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


# --- files --------------------------------------------------------------------------

_JSON = f"""{{
  // the user's own servers
  "env": {{"ANTHROPIC_API_KEY": "{SECRET}"}},
  "mcpServers": {{
    "github": {{
      "command": "docker",
      "args": ["run", "-e", "GITHUB_TOKEN={SECRET}", "-i", "ghcr.io/github/server"],
      "env": {{"GITHUB_TOKEN": "{SECRET}", "RETRIES": 3}}
    }},
    "web": {{"url": "https://me:{SECRET}@mcp.example/?key={SECRET}",
             "headers": {{"Authorization": "Bearer {SECRET}"}}, "apiKey": "{SECRET}"}},
    "engram": {{
      "command": "/venv/bin/engram-mcp",
      "args": ["--root=/data", "--always-load"],
      "env": {{"ENGRAM_PINNED_VERSION": "0.1.0", "OPENAI_API_KEY": "{SECRET}"}}
    }}
  }},
  "hooks": {{"SessionStart": [{{"hooks": [{{"command": "TOKEN={SECRET} ./mine.sh"}}]}}]}}
}}
"""

_JSON_MASKED = """{
  // the user's own servers
  "env": {"ANTHROPIC_API_KEY": "…"},
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": ["run", "-e", "GITHUB_TOKEN=…", "-i", "ghcr.io/github/server"],
      "env": {"GITHUB_TOKEN": "…", "RETRIES": "…"}
    },
    "web": {"url": "https://me:…@mcp.example/?key=…",
             "headers": {"Authorization": "…"}, "apiKey": "…"},
    "engram": {
      "command": "/venv/bin/engram-mcp",
      "args": ["--root=/data", "--always-load"],
      "env": {"ENGRAM_PINNED_VERSION": "0.1.0", "OPENAI_API_KEY": "…"}
    }
  },
  "hooks": {"SessionStart": [{"hooks": [{"command": "TOKEN=… ./mine.sh"}]}]}
}
"""


def test_a_jsonc_file_is_shown_with_env_credentials_and_argument_values_masked() -> None:
    assert masked_text(_JSON, Path("settings.json")) == _JSON_MASKED
    assert masked_text("\ufeff" + _JSON, Path("opencode.jsonc")) == "\ufeff" + _JSON_MASKED


def test_opencodes_environment_and_command_list_are_masked() -> None:
    entry = {
        "type": "local",
        "command": ["env", f"KEY={SECRET}", "engram-mcp"],
        "environment": {"KEY": SECRET},
    }
    shown = masked_text(json.dumps({"mcp": {"engram": entry}}), Path("opencode.json"))
    assert json.loads(shown or "") == {
        "mcp": {
            "engram": {
                "type": "local",
                "command": ["env", "KEY=…", "engram-mcp"],
                "environment": {"KEY": "…"},
            }
        }
    }


_TOML = f"""# my Codex settings
model = "o3"

[mcp_servers.github]
command = "docker"   # the runner
args = ["run", "-e", "GITHUB_TOKEN={SECRET}",
  "ghcr.io/github/server"]
env = {{ GITHUB_TOKEN = "{SECRET}", ENGRAM_PINNED_VERSION = "0.1.0" }}

[mcp_servers.web]
url = "https://mcp.example/?token={SECRET}"
bearer_token = '{SECRET}'
http_headers = {{ "X-Key" = "{SECRET}" }}

[mcp_servers.engram.env]
OPENAI_API_KEY = "{SECRET}"  # mine
"""

_TOML_MASKED = """# my Codex settings
model = "o3"

[mcp_servers.github]
command = "docker"   # the runner
args = ["run", "-e", "GITHUB_TOKEN=…",
  "ghcr.io/github/server"]
env = { GITHUB_TOKEN = "…", ENGRAM_PINNED_VERSION = "0.1.0" }

[mcp_servers.web]
url = "https://mcp.example/?token=…"
bearer_token = "…"
http_headers = { "X-Key" = "…" }

[mcp_servers.engram.env]
OPENAI_API_KEY = "…"  # mine
"""


def test_a_toml_file_is_shown_with_its_env_tables_and_arguments_masked() -> None:
    assert masked_text(_TOML, Path("config.toml")) == _TOML_MASKED


def test_a_toml_file_tomlkit_cannot_give_back_as_written_has_every_string_masked() -> None:
    # tomlkit gathers the two [[hooks]] entries under one array, above [mcp_servers.z.env]:
    # the lines it would give back would not be the file's.
    text = f'[[hooks]]\nk = "a"\n[mcp_servers.z.env]\nK = "{SECRET}"\n[[hooks]]\nk = "b"\n'
    assert tomlkit.parse(text).as_string() != text  # what this test is about
    assert masked_text(text, Path("config.toml")) == (
        '[[hooks]]\nk = "…"\n[mcp_servers.z.env]\nK = "…"\n[[hooks]]\nk = "…"\n'
    )


def test_a_file_that_cannot_be_parsed_has_every_string_value_masked() -> None:
    text = f'{{"env": {{"KEY": "{SECRET}"}}, "args": ["-e", "K={SECRET}"] oops'
    assert masked_text(text, Path("mcp.json")) == '{"env": {"KEY": "…"}, "args": ["…", "…"] oops'


def test_other_files_are_shown_as_they_are_but_for_what_the_detector_finds() -> None:
    text = f"KEY={SECRET}\n"
    assert masked_text(text, Path("CLAUDE.md")) == text
    assert masked_text(None, Path("mcp.json")) is None


@settings(max_examples=200)
@given(value=_TEXT)
def test_no_env_value_in_a_json_or_toml_file_is_ever_shown(value: str) -> None:
    secret = SECRET + value
    entry = {"command": "docker", "args": ["-e", f"K={secret}"], "env": {"K": secret}}
    for path, text in (
        (Path("mcp.json"), json.dumps({"mcpServers": {"x": entry}}, indent=2)),
        (Path("mcp.json"), json.dumps({"mcpServers": {"x": entry}}, ensure_ascii=False)),
        (Path("config.toml"), tomlkit.dumps({"mcp_servers": {"x": entry}})),
    ):
        shown = masked_text(text, path) or ""
        assert SECRET not in shown
        assert MASK in shown
