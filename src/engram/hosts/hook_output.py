"""What ``engram hook <host>`` prints: exactly one JSON object, in the host's shape.

Session-start hooks inject context through the host's own field (upstream-facts.md,
"Hooks"; a ``systemMessage`` never reaches the model):

- Claude Code, Codex, Gemini CLI:
  ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT}}``
- Cursor: ``{"additional_context": TEXT}``

:func:`run_hook` is the whole hook except where TEXT comes from: the caller passes a
``load`` callable. The command wiring is expected to look like::

    run_hook(host, lambda hook: session_context(
        hook.root or Path.cwd(), budget_tokens, os.environ.get("ENGRAM_SESSION_OBJECTIVE")))

Whatever happens, stdout carries only that JSON line: anything ``load`` prints goes
to stderr, and an engram error becomes a note on stderr with empty context (Codex
rejects a SessionStart hook whose output is not its JSON shape).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engram.errors import EngramError, UsageError

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "HOOK_HOSTS",
    "HookInput",
    "hook_output",
    "read_hook_input",
    "run_hook",
]

#: Hosts whose session-start hook can inject context.
HOOK_HOSTS = ("claude", "codex", "gemini", "cursor")
#: A session-start injection of several thousand tokens gets hooks disabled
#: (upstream-facts.md), so the hook loads little by default.
DEFAULT_BUDGET_TOKENS = 1500


@dataclass(frozen=True, slots=True)
class HookInput:
    """What the host told the hook on stdin: the workspace and why the session started."""

    root: Path | None = None
    source: str | None = None


def hook_output(host: str, text: str) -> dict[str, Any]:
    """The host's session-start JSON carrying ``text``."""
    if host == "cursor":
        return {"additional_context": text}
    if host in HOOK_HOSTS:
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    known = ", ".join(HOOK_HOSTS)
    raise UsageError(f"no session hook for {host!r}; hooks exist for: {known}")


def read_hook_input(raw: str) -> HookInput:
    """Parse the host's stdin JSON; anything unreadable means "nothing known"."""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return HookInput()
    if not isinstance(data, dict):
        return HookInput()
    root = data.get("cwd")
    roots = data.get("workspace_roots")  # Cursor sends a list of roots
    if not isinstance(root, str) and isinstance(roots, list) and roots:
        root = roots[0]
    source = data.get("source") or data.get("trigger")
    return HookInput(
        root=Path(root) if isinstance(root, str) and root else None,
        source=source if isinstance(source, str) else None,
    )


def run_hook(
    host: str,
    load: Callable[[HookInput], str],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Read the host's input, ``load`` the context, print the host's JSON; returns 0."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    shape = hook_output(host, "")  # refuse an unknown host before doing anything
    raw = "" if stdin.isatty() else stdin.read()
    try:
        with contextlib.redirect_stdout(stderr):
            text = load(read_hook_input(raw))
        shape = hook_output(host, text)
    except EngramError as error:
        print(f"engram hook: {error.detail}", file=stderr)
    stdout.write(json.dumps(shape, ensure_ascii=False) + "\n")
    stdout.flush()
    return 0
