"""Readable transcript lines for the demo: what was sent, what came back."""

from __future__ import annotations

import json
from typing import Any

import click

__all__ = ["heading", "note", "received", "sent"]

_WIDTH = 160


def _short(message: object) -> str:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def heading(title: str) -> None:
    click.echo()
    click.secho(f"== {title}", bold=True)


def note(text: str) -> None:
    click.echo(f"   {text}")


def sent(message: dict[str, Any] | bytes) -> None:
    body = message.decode("utf-8", "replace") if isinstance(message, bytes) else _short(message)
    click.secho(f"-> {body[:_WIDTH]}", fg="cyan")


def received(message: dict[str, Any]) -> None:
    click.secho(f"<- {_short(message)}", fg="green" if "error" not in message else "yellow")
