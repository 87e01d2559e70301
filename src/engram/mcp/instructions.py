"""The server instructions: one self-contained string for ``initialize`` and
``server/discover``. Hosts read at most 512 characters (Codex truncates there, and
Claude Code shows it in place of deferred tool definitions), so it says when to use
the tools and that ``engram_commit`` needs the human."""

from typing import Final

__all__ = ["INSTRUCTIONS", "MAX_INSTRUCTIONS_CHARS"]

MAX_INSTRUCTIONS_CHARS: Final = 512

INSTRUCTIONS: Final = (
    "Engram is this project's memory of rules, decisions and conventions. "
    "Before a task, call engram_load with the task to recall what applies; "
    "use engram_search to look something up. To record durable project knowledge, "
    "call engram_save or engram_save_session: they only propose. engram_commit writes, "
    "and only after the human has approved the exact candidates shown; never call it "
    "on your own. engram_note keeps short task notes. "
    "engram_memory_* tools, when present, are governed memory bound by the host."
)
