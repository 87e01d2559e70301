"""Hostile inputs, generated: what an agent that writes every argument to hurt might send.

Deterministic for a seed (``random.Random``), cheap to make in the tens of thousands:
:func:`hostile_arguments` mutates valid tool arguments (fields dropped, added, retyped,
made huge, deep, or full of control characters); :func:`hostile_frame` makes one stdio
line of JSON-RPC gone wrong; :func:`hostile_http` one HTTP request. :func:`leaks` says
what a response must never hold: a stack trace, a source path, a module's file.
"""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any, Final

__all__ = ["hostile_arguments", "hostile_frame", "hostile_http", "leaks"]

#: Values no schema of ours accepts in most places.
_NASTY: Final[tuple[Any, ...]] = (
    None,
    True,
    0,
    -1,
    2**63,
    -(2**70),
    1.5e308,
    "",
    " ",
    "\x1b]0;owned\x07\x1b[2J",
    "\u202etxt.exe",
    "\x00\x01\x02",
    "A" * 70_000,
    "ref:" + "é" * 300,
    "../../../../etc/passwd",
    "ghp_" + "a1B2" * 9,
    "AKIAIOSFODNN7EXAMPL3",
    [],
    {},
    [None] * 200,
    {"$ref": "#"},
)
_LEAK: Final = re.compile(r"Traceback|File \"|\.py\b|/work/|/root/|/tmp/|site-packages|Error:")


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _nasty(chosen: random.Random) -> Any:
    kind = chosen.random()
    if kind < 0.6:
        return copy.deepcopy(chosen.choice(_NASTY))
    if kind < 0.7:
        return _deep(chosen.randint(20, 400))
    if kind < 0.85:
        return "".join(chr(chosen.randint(0, 0x2FFF)) for _ in range(chosen.randint(1, 64)))
    return {f"k{n}": n for n in range(chosen.randint(1, 300))}


def hostile_arguments(valid: dict[str, Any], chosen: random.Random) -> Any:
    """``valid`` with one to three hostile changes (or, rarely, not an object at all)."""
    if chosen.random() < 0.03:
        return _nasty(chosen)
    arguments = copy.deepcopy(valid)
    for _ in range(chosen.randint(1, 3)):
        path = chosen.choice(_paths(arguments))
        if not path:
            arguments[f"x_{chosen.randint(0, 9)}"] = _nasty(chosen)
            continue
        *parents, last = path
        holder: Any = arguments
        for step in parents:
            holder = holder[step]
        action = chosen.random()
        if action < 0.25 and isinstance(holder, dict):
            del holder[last]
        elif action < 0.35 and isinstance(holder, dict):
            holder[f"{last}_{chosen.randint(0, 9)}"] = _nasty(chosen)
        else:
            holder[last] = _nasty(chosen)
    return arguments


def hostile_frame(chosen: random.Random, valid: dict[str, Any]) -> bytes:
    """One line for a stdio server: broken JSON, wrong shapes, odd ids, wild methods."""
    kind = chosen.randrange(8)
    if kind == 0:
        return bytes(chosen.randrange(256) for _ in range(chosen.randint(1, 400))).replace(
            b"\n", b" "
        )
    if kind == 1:
        text = json.dumps(valid)
        return text[: chosen.randint(0, len(text))].encode()
    if kind == 2:
        return json.dumps(_nasty(chosen)).encode()
    message = copy.deepcopy(valid)
    if kind == 3:
        message["id"] = _nasty(chosen)
    elif kind == 4:
        message["method"] = chosen.choice(
            ["", "tools/call ", "TOOLS/LIST", "rpc.discover", "$/cancel", "x" * 5000, "ping"]
        )
    elif kind == 5:
        message["params"] = _nasty(chosen)
    elif kind == 6:
        message["jsonrpc"] = chosen.choice(["1.0", "2", 2.0, None, ""])
    else:
        message = hostile_arguments(message, chosen)
    return json.dumps(message).encode()


def hostile_http(
    chosen: random.Random, token: str, valid: dict[str, Any]
) -> tuple[str, str, dict[str, str], bytes]:
    """One HTTP request: method, path, headers and body, each possibly wrong."""
    method = chosen.choice(["POST"] * 6 + ["GET", "DELETE", "PUT", "OPTIONS", "PATCH"])
    path = chosen.choice(["/mcp"] * 8 + ["/", "/mcp/", "/MCP", "/mcp/../mcp", "/mcp?x=1"])
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": valid.get("params", {}).get("name", ""),
    }
    if chosen.random() < 0.85:
        headers["Authorization"] = chosen.choice(
            [f"Bearer {token}"] * 6 + ["Bearer", "Basic Zm9vOmJhcg==", f"Bearer {token}x", "x"]
        )
    for name, choices in (
        ("MCP-Protocol-Version", ["2026-07-28", "2025-11-25", "1999-01-01", "", "2026-07-28 "]),
        ("Mcp-Method", ["tools/call", "tools/list", "ping", "", "x\x7f"]),
        ("Mcp-Name", ["engram_memory_capture", "engram_memory_forget", "", "nope"]),
        ("Mcp-Session-Id", ["", "0" * 32, "ses_unknown"]),
        ("Origin", ["http://127.0.0.1", "http://evil.example", "null"]),
        ("Content-Type", ["text/plain", "application/json; charset=latin-1", ""]),
    ):
        if chosen.random() < 0.3:
            headers[name] = chosen.choice(choices)
    kind = chosen.random()  # the valid body, none, or a hostile one
    body = json.dumps(valid).encode() if kind < 0.3 else b""
    if kind >= 0.4:
        body = hostile_frame(chosen, valid)
    return method, path, headers, body


def leaks(text: str) -> list[str]:
    """What ``text`` (a response) shows that it never may: traces, paths, module files."""
    return _LEAK.findall(text)
