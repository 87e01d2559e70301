"""``engram``: the command-line entry point and its error boundary.

Every :class:`~engram.errors.EngramError` is shown as ``engram: <detail>`` on stderr
with the exit code its class declares; anything unexpected is a bug, reported with
its type and exit code 70 (EX_SOFTWARE), never with its message (which could carry
data).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from engram import __version__
from engram.cli.doctor import doctor
from engram.cli.link import link, unlink, upgrade
from engram.errors import EngramError

__all__ = ["cli", "main"]

EXIT_INTERNAL = 70


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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


cli.add_command(link)
cli.add_command(unlink)
cli.add_command(upgrade)
cli.add_command(doctor)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the CLI; the one place the command line turns errors into exit codes."""
    try:
        cli.main(args=list(argv) if argv is not None else None, standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except EngramError as error:
        click.echo(f"engram: {error.detail}", err=True)
        sys.exit(error.exit_code)
    except Exception as error:
        click.echo(f"engram: internal error ({type(error).__name__})", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(0)
