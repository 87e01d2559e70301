"""``engram console``: the review page, on loopback (see :mod:`engram.console`)."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["console"]


@click.command("console")
@click.option(
    "--host-profile",
    "profiles",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Also review this host profile's governed memory; repeatable.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65_535),
    default=0,
    show_default="a free port",
    help="The port on 127.0.0.1.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
def console(profiles: tuple[Path, ...], port: int, open_browser: bool) -> None:
    """Serve the review console for this project (and host profiles) on 127.0.0.1.

    Prints a URL with a one-time secret; opening it starts the session. Needs
    the console extra (pip install 'engram-trust[console]').
    """
    from engram.extras import require

    require("console", "the console")
    from engram.console.serve import serve

    serve(Path.cwd(), list(profiles), port, click.echo, open_browser)
