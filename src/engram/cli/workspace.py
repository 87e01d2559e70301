"""Which project a host command works on: the ``--root DIR`` option and the rule
that finds the project from it.

The workspace is the project enclosing the current directory (or ``--root DIR``),
found as ``engram status`` and engram-mcp find it: the nearest directory upwards
holding ``.agents/.engram``; without one, the directory itself. ``link``,
``unlink``, ``upgrade`` and ``doctor`` share it; this module does not read the
host environment (:class:`~engram.hosts.command.HostEnv` does).
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["ROOT_OPTION", "workspace_root"]

ROOT_OPTION = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Work on the project enclosing DIR (default: the current directory).",
)


def workspace_root(start: Path | None = None) -> Path:
    """The project enclosing ``start`` (default: the current directory): the nearest
    directory upwards holding ``.agents/.engram``, else ``start`` itself."""
    from engram.project.layout import NotInitialized, find_root

    begin = (start or Path.cwd()).absolute()
    try:
        return find_root(begin).root
    except NotInitialized:
        return begin
