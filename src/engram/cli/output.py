"""The ``--json`` option every reporting verb takes.

A verb run with ``--json`` prints its result as JSON, and so does its failure:
:mod:`engram.cli.main` reads the mark this option leaves in the command's context
(shared by the whole chain of contexts) to print ``{"ok": false, "error": …}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

__all__ = ["JSON_HELP", "JSON_MARK", "json_option"]

JSON_HELP: Final = "Print the result as JSON (a failure as {ok: false, error: {code, message}})."
#: The key in ``click.Context.meta`` that says the command was run with ``--json``.
JSON_MARK: Final = "engram.json"

F = TypeVar("F", bound=Callable[..., Any])


def _remember(ctx: click.Context, _: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[JSON_MARK] = True
    return value


def json_option(help_text: str = JSON_HELP) -> Callable[[F], F]:
    """``--json`` (the ``as_json`` parameter), marking the context when given."""
    return click.option(
        "--json", "as_json", is_flag=True, help=help_text, callback=_remember, is_eager=True
    )
