"""The link targets, in the order ``engram link list`` shows them."""

from __future__ import annotations

from engram.errors import UsageError
from engram.hosts import antigravity, claude, codex, cursor, gemini, opencode, windsurf
from engram.hosts.target import Target

__all__ = ["TARGETS", "target_named"]

TARGETS: dict[str, Target] = {
    module.TARGET.name: module.TARGET
    for module in (claude, codex, cursor, gemini, opencode, antigravity, windsurf)
}


def target_named(name: str) -> Target:
    """The target called ``name``; a usage error lists the known ones."""
    try:
        return TARGETS[name]
    except KeyError:
        known = ", ".join(TARGETS)
        raise UsageError(f"unknown target {name!r}; choose one of: {known}, all, list") from None
