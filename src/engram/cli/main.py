"""``engram``: the command-line entry point and its error boundary.

Every :class:`~engram.errors.EngramError` is shown as ``engram: <detail>`` on stderr
with the exit code its class declares (translated once, in the group, so that
``click.testing.CliRunner`` sees the same exit codes as a user). Anything unexpected
is a bug, reported with its type and exit code 70 (EX_SOFTWARE), never with its
message (which could carry data).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from engram import __version__
from engram.cli.doctor import doctor
from engram.cli.link import link, unlink, upgrade
from engram.cli.output import JSON_MARK
from engram.errors import EngramError

__all__ = ["cli", "main"]

EXIT_INTERNAL = 70


class _Failure(click.ClickException):
    """An :class:`EngramError` as click shows it: ``engram: <detail>`` on stderr, or,
    for a command run with ``--json``, ``{"ok": false, "error": {"code", "message"}}`` on
    stdout; with its exit code."""

    def __init__(self, error: EngramError, as_json: bool) -> None:
        super().__init__(error.detail)
        self.code = error.code
        self.as_json = as_json
        # click declares exit_code on the class, yet reads it from the instance.
        self.exit_code = error.exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        if self.as_json:
            failure = {"ok": False, "error": {"code": self.code, "message": self.message}}
            click.echo(json.dumps(failure, indent=2, ensure_ascii=False), file=file)
        else:
            from engram.safety.display import shown

            click.echo(f"engram: {shown(self.message)}", err=True, file=file)


class _EngramGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EngramError as error:
            raise _Failure(error, bool(ctx.meta.get(JSON_MARK))) from error


@click.group(cls=_EngramGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="engram")
def cli() -> None:
    """engram: a memory AI coding agents can trust, served over MCP."""


@cli.command()
def demo() -> None:
    """Run an end-to-end tour through the real engram-mcp server."""
    from engram.demo.run import run_demo

    status = run_demo()
    if status != 0:
        raise click.exceptions.Exit(status)


def _register() -> None:
    from engram.cli.console import console
    from engram.cli.host import host
    from engram.cli.project import PROJECT_COMMANDS

    cli.add_command(host)
    for command in PROJECT_COMMANDS:
        cli.add_command(command)
    cli.add_command(cli.commands["save-session"], "ss")
    cli.add_command(link)
    cli.add_command(unlink)
    cli.add_command(upgrade)
    cli.add_command(doctor)
    cli.add_command(console)


_register()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the CLI; the one place the command line turns errors into exit codes."""
    args = list(argv) if argv is not None else sys.argv[1:]
    # Asked for JSON: a failure click or a bug raises is JSON too (an EngramError already
    # is, by _Failure).
    as_json = "--json" in args
    try:
        # Out of standalone mode, click returns the code of a command's ``Exit`` (doctor's
        # 1 on a failed check) rather than raising it.
        status = cli.main(args=args, standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except _Failure as error:
        error.show()
        sys.exit(error.exit_code)
    except click.ClickException as error:
        if as_json:
            _json_failure("USAGE_ERROR", error.format_message())
        else:
            error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except Exception as error:
        message = f"internal error ({type(error).__name__})"
        if as_json:
            _json_failure("INTERNAL_ERROR", message)
        else:
            click.echo(f"engram: {message}", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(status if isinstance(status, int) else 0)


def _json_failure(code: str, message: str) -> None:
    failure = {"ok": False, "error": {"code": code, "message": message}}
    click.echo(json.dumps(failure, indent=2, ensure_ascii=False))
