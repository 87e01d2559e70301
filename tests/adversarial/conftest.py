"""What every attack starts from: a host the operator set up with `engram host init`."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from engram.cli.main import cli
from engram.testing import PURPOSE


def host_init(directory: Path, *options: str) -> Path:
    """``engram host init DIRECTORY`` as the operator runs it (principal ``agent-a``, every
    tool granted, ``options`` added); the profile's path."""
    arguments = ["host", "init", str(directory), "--tenant", "acme", "--workspace", "w"]
    arguments += ["--principal", "agent-a", "--purpose", PURPOSE, "--grant", "all", *options]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip())
