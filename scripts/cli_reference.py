"""Generate docs/cli.md from the ``--help`` of every ``engram`` command.

usage: .venv/bin/python scripts/cli_reference.py [--check]
``--check`` exits 1 when docs/cli.md is out of date (the test suite runs it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engram.cli.main import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _sections(
    command: click.Command, path: list[str], parent: click.Context | None = None
) -> list[str]:
    # A fixed width: the file must not depend on the terminal it was made in. Each
    # context has its parent, as on the command line: a subcommand inherits the group's
    # settings (its -h).
    context = click.Context(
        command,
        parent=parent,
        info_name=path[-1] if parent else " ".join(path),
        terminal_width=100,
        max_content_width=100,
        **command.context_settings,
    )
    help_text = command.get_help(context).replace("Usage: ", "usage: ", 1)
    out = [f"## `{' '.join(path)}`\n\n```text\n{help_text.rstrip()}\n```\n"]
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is not None and not (name == "ss" and path == ["engram"]):
                out += _sections(sub, [*path, name], context)
    return out


def render() -> str:
    header = (
        "# Command-line reference\n\n"
        "Generated from `--help` by `scripts/cli_reference.py`; a test keeps it current.\n"
        "`engram ss` is `engram save-session`; `engram-mcp --help` is in docs/protocol.md.\n\n"
    )
    return header + "\n".join(_sections(cli, ["engram"]))


def main() -> None:
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if DOC.exists() and DOC.read_text() == text else 1)
    DOC.write_text(text)


if __name__ == "__main__":
    main()
