"""Reading an entry's command line: where engram-mcp starts, and what it is given."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.hosts.command import (
    SERVER_FLAGS,
    SERVER_VALUED_OPTIONS,
    CommandLine,
    HostEnv,
    read_command_line,
    server_command,
)
from engram.mcp.options import USAGE, parse_options

NPX = ("npx", "-y", "--package", "@the-long-ride/engram@0.0.28", "engram-mcp")


@pytest.mark.parametrize(
    ("argv", "launcher", "options"),
    [
        (["engram-mcp", "--always-load"], ("engram-mcp",), ("--always-load",)),
        (["/v/bin/engram-mcp"], ("/v/bin/engram-mcp",), ()),
        (
            ["/usr/bin/python3", "-m", "engram.mcp", "--root", "."],
            ("/usr/bin/python3", "-m", "engram.mcp"),
            ("--root", "."),
        ),
        ([*NPX, "--no-elicitation"], NPX, ("--no-elicitation",)),
        (
            ["uvx", "--from", "engram==0.0.5", "engram-mcp"],
            ("uvx", "--from", "engram==0.0.5", "engram-mcp"),
            (),
        ),
        (
            ["pipx", "run", "--spec", "engram==1", "engram-mcp"],
            ("pipx", "run", "--spec", "engram==1", "engram-mcp"),
            (),
        ),
        (
            ["uvx", "--from", "engram-mcp", "engram-mcp"],
            ("uvx", "--from", "engram-mcp", "engram-mcp"),
            (),
        ),
        (["/v/engram-mcp", *NPX[1:]], ("/v/engram-mcp", *NPX[1:]), ()),
        (
            ["engram-mcp", "--root", "/src/engram-mcp"],
            ("engram-mcp",),
            ("--root", "/src/engram-mcp"),
        ),
        (["engram-mcp", "--root=/src/engram-mcp"], ("engram-mcp",), ("--root=/src/engram-mcp",)),
    ],
)
def test_the_command_line_splits_where_engram_mcp_starts(
    argv: list[str], launcher: tuple[str, ...], options: tuple[str, ...]
) -> None:
    assert read_command_line(argv) == CommandLine(launcher, options)


def test_a_command_naming_no_engram_mcp_cannot_be_read() -> None:
    assert read_command_line(["/opt/run-engram.sh", "-v"]) is None
    assert read_command_line(["npx", "-y", "@the-long-ride/engram"]) is None
    assert read_command_line([]) is None


def test_runners_are_not_engrams_own_form_and_leave_nothing_stray() -> None:
    line = read_command_line([*NPX, "--always-load"])
    assert line is not None
    assert not line.own_form
    assert (line.leftover, line.unknown_options) == ((), ())
    own = read_command_line(["/usr/bin/python3", "-m", "engram.mcp"])
    assert own is not None
    assert own.own_form


@pytest.mark.parametrize(
    "argv",
    [
        ["/v/bin/engram-mcp", "--root", "."],
        ["engram-mcp"],
        ["/usr/bin/python3.12", "-m", "engram.mcp"],
        ["C:/Python312/python.exe", "-m", "engram.mcp"],
        list(NPX),
        ["npx.cmd", "-y", "engram-mcp"],
        ["uvx", "--from", "engram==0.0.5", "engram-mcp"],
        ["pipx", "run", "--spec", "engram==1", "engram-mcp"],
        ["uv", "run", "--with", "engram", "engram-mcp"],
        ["uv", "tool", "run", "--from", "engram", "engram-mcp"],
        ["uv", "run", "python", "-m", "engram.mcp"],
        ["/v/engram-mcp", *NPX[1:]],
    ],
)
def test_engrams_own_forms_and_package_runners_can_be_repinned(argv: list[str]) -> None:
    line = read_command_line(argv)
    assert line is not None
    assert line.repinnable


@pytest.mark.parametrize(
    "argv",
    [
        ["docker", "run", "-i", "--rm", "ghcr.io/me/engram", "engram-mcp", "--root", "/data"],
        ["docker", "run", "-i", "img", "python", "-m", "engram.mcp"],
        ["ssh", "build-box", "engram-mcp"],
        ["ssh", "build-box", "/srv/venv/bin/python3", "-m", "engram.mcp"],
        ["env", "ENGRAM_ROOT=/p", "engram-mcp"],
        ["/opt/run-engram.sh", "-m", "engram.mcp"],
        ["uv", "pip", "engram-mcp"],
    ],
)
def test_any_other_launcher_of_engram_mcp_is_not_repinnable(argv: list[str]) -> None:
    line = read_command_line(argv)
    assert line is not None
    assert not line.repinnable
    assert line.program == argv[0]


def test_a_runners_words_after_engrams_program_are_leftover() -> None:
    line = read_command_line(["/v/engram-mcp", *NPX[1:], "--no-elicitation", "--bogus"])
    assert line is not None
    assert line.leftover == NPX[1:]
    assert line.unknown_options == ("--bogus",)


def test_a_valued_option_without_its_value_is_unknown() -> None:
    line = read_command_line(["engram-mcp", "--always-load", "--host-profile"])
    assert line is not None
    assert line.unknown_options == ("--host-profile",)


def test_the_options_table_is_the_servers_own() -> None:
    usage = USAGE.split("\n\n")[0]  # the usage lines, up to the first blank one
    listed = dict(re.findall(r"\[(--[a-z-]+)( [A-Z]+)?\]", usage))
    assert {name for name, value in listed.items() if not value} == SERVER_FLAGS
    assert {name for name, value in listed.items() if value} == SERVER_VALUED_OPTIONS
    for flag in SERVER_FLAGS:
        assert parse_options([flag], {}).ignored == ()
    for option in SERVER_VALUED_OPTIONS:
        value = "127.0.0.1:8765" if option == "--http" else "x"
        assert parse_options([option, value], {}).ignored == ()
    assert parse_options(["--http", "x"], {}).ignored == ("--http x",)  # not HOST:PORT


def _env(tmp_path: Path, on_path: set[str], from_index: bool, folder: str = "venv/bin") -> HostEnv:
    venv = tmp_path / folder
    venv.mkdir(parents=True)
    (venv / "engram-mcp").write_text("#!/bin/sh\n")
    return HostEnv(
        workspace=tmp_path,
        home=tmp_path / "home",
        config_home=tmp_path / "home" / ".config",
        which=lambda name: f"/usr/bin/{name}" if name in on_path else None,
        executable=venv / "python",
        version="1.2.3",
        from_index=from_index,
    )


UVX = ["/usr/bin/uvx", "--from", "engram-trust==1.2.3", "engram-mcp"]
PIPX = ["/usr/bin/pipx", "run", "--spec", "engram-trust==1.2.3", "engram-mcp"]


@pytest.mark.parametrize(
    ("on_path", "from_index", "folder", "portable", "argv"),
    [
        # The script beside the interpreter, by its absolute path, however engram was
        # installed and whatever is on this shell's PATH: it starts from any shell.
        ({"engram-mcp", "uvx"}, True, "venv/bin", False, ["<venv>/engram-mcp"]),
        ({"uvx", "pipx"}, False, "venv/bin", False, ["<venv>/engram-mcp"]),
        (set(), True, "venv/bin", False, ["<venv>/engram-mcp"]),
        # A runner's temporary environment (uvx, pipx run) may go any time: the runner
        # pinned to this exact version, by its absolute path.
        ({"uvx", "pipx"}, True, ".cache/uv/archive-v0/x/bin", False, UVX),
        ({"pipx"}, True, ".cache/pipx/x/bin", False, PIPX),
        # From a checkout, no index holds this version: the path, even from a cache.
        ({"uvx"}, False, ".cache/uv/archive-v0/x/bin", False, ["<venv>/engram-mcp"]),
        # A workspace file the team shares: engram-mcp as found on each person's PATH,
        # else the runner by name, else this machine's path.
        ({"engram-mcp", "uvx"}, True, "venv/bin", True, ["engram-mcp"]),
        ({"uvx"}, True, ".cache/uv/archive-v0/x/bin", True, ["uvx", *UVX[1:]]),
        ({"uvx"}, False, "venv/bin", True, ["<venv>/engram-mcp"]),
    ],
)
def test_the_command_form_runs_without_this_shells_path_unless_the_file_is_shared(
    tmp_path: Path,
    on_path: set[str],
    from_index: bool,
    folder: str,
    portable: bool,
    argv: list[str],
) -> None:
    env = _env(tmp_path, on_path, from_index, folder)

    command = server_command(env, portable)

    venv = str(tmp_path / folder)
    assert [word.replace(venv, "<venv>") for word in command.argv] == argv
    assert command.pinned == (None if argv == ["engram-mcp"] else "1.2.3")
    line = read_command_line(command.argv)
    assert line is not None
    assert line.repinnable  # engram's own command is always one it can re-pin
