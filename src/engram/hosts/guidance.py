"""What engram tells agents in their hosts: the ``/engram`` command and the
instruction block.

Both follow the force rule (mcp-server.txt, "Force rule"): an explicit
``/engram save-session --force`` or ``/engram ss -f`` uses the CLI write path;
``/engram ss -f last 50 sessions`` means ``engram save-session --query-level 50
--force``; without ``--force`` the agent only proposes, and a host without a shell
(MCP only) commits through ``engram_commit`` after the human approves. The text
never asks the agent to allow-list or auto-approve ``engram_commit``.

Files engram writes whole carry :data:`GENERATED` so that a later link, upgrade or
unlink knows they are engram's and a hand-written file of the same name is left
alone.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["GENERATED", "instruction_block", "is_generated", "slash_command"]

#: The marker line of a file engram wrote (a comment in each file's language).
GENERATED = "engram:generated"

Flavour = Literal["claude", "cursor", "gemini", "opencode"]

_DESCRIPTION = "Engram project memory: load, search, save-session (ss), commit"

_RULES = """\
Engram is this project's memory of rules, decisions and conventions (MCP server `engram`).

Do what the request asks:

- `load QUERY` or no argument: call `engram_load` with the task (`current session` when
  there is none) and follow what it returns.
- `search QUERY`: call `engram_search` and show the matches.
- `save-session` (alias `ss`) without `--force` (alias `-f`): call `engram_save_session`
  with the session's durable lessons, show the numbered candidates and their verdicts,
  and wait. Call `engram_commit` only after the human approves exact candidates
  (`approve: "all"` or their numbers).
- `save-session --force` or `ss -f` (an explicit force from the human): use the CLI
  write path, not the MCP tools. Write the candidates, one per line
  (`TYPE: rule|skill|workflow|knowledge | TEXT: ...`), to a temporary file and run
  `engram save-session --file FILE --force`.
- `ss -f last N sessions` (for example `last 50 sessions`): run
  `engram save-session --query-level N --force` (with `--file FILE` as above).
- If this host cannot run shell commands (MCP only), never force: propose with
  `engram_save_session` and commit through `engram_commit` once the human approves.

Never call `engram_commit` before the human has approved the candidates shown, and
never add it to an allow list or auto-approve it."""


def slash_command(flavour: Flavour) -> str:
    """The ``/engram`` command file for a host."""
    if flavour == "gemini":
        body = _RULES.replace("Do what the request asks:", "Do what the request asks: {{args}}")
        return (
            f"# {GENERATED}: written by `engram link gemini`; `engram unlink gemini` removes it\n"
            f'description = "{_DESCRIPTION}"\n'
            f'prompt = """\n{body}\n"""\n'
        )
    arguments = "$ARGUMENTS"
    body = _RULES.replace("Do what the request asks:", f"Do what the request asks: {arguments}")
    marker = f"<!-- {GENERATED}: written by `engram link {flavour}` -->"
    if flavour == "cursor":  # Cursor commands are plain Markdown, no front matter
        return f"# /engram\n\n{body}\n\n{marker}\n"
    hint = "[load QUERY | search QUERY | save-session [--force] | ss -f [last N sessions]]"
    front = f"---\ndescription: {_DESCRIPTION}\nargument-hint: {hint}\n---\n"
    if flavour == "opencode":
        front = f"---\ndescription: {_DESCRIPTION}\n---\n"
    return f"{front}\n{body}\n\n{marker}\n"


def is_generated(text: str) -> bool:
    """Whether a whole file was written by engram."""
    return GENERATED in text


def instruction_block() -> str:
    """The body of the managed block in ``AGENTS.md`` / ``CLAUDE.md`` / ``GEMINI.md``."""
    return """\
## Engram project memory

This project keeps its rules, decisions and conventions in Engram (MCP server `engram`).

- Before a task, call `engram_load` with the task and follow what it returns; use
  `engram_search` to look something up.
- To record durable project knowledge, call `engram_save` or `engram_save_session`: they
  only propose. Show the numbered candidates and call `engram_commit` only after the human
  approves them. Never auto-approve `engram_commit` or add it to an allow list.
- `/engram save-session --force` or `/engram ss -f` (explicit force): use the CLI,
  `engram save-session --file FILE --force`; `/engram ss -f last 50 sessions` means
  `engram save-session --query-level 50 --force`."""
