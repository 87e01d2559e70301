"""The shred ledger: every forget and withdraw, kept beside the keys, outside the store.

A backup holds the store as it was; restoring one taken before a forget would bring the
forgotten record back, plaintext included, since the backup carries its data key. The
ledger remembers every shredding (scope, operation, target, instant) in the key directory,
which backups do not hold and a restore does not replace, so a restore re-applies each
forget performed after the backup was taken (:func:`engram.memory.backup.restore`).

One JSON object per line, appended and fsynced after the operation commits, the file
readable by its owner only. A line torn by a crash is ignored. An operation whose line
could not be written (its process died after the commit, the disk was full) gets it at the
agent's retry, which replays the operation and writes a missing line; without a retry it
stays missing. The ledger holds ids only, never content.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["LEDGER_NAME", "ShredLedger", "Shredding"]

LEDGER_NAME: Final = "shred-ledger.jsonl"


@dataclass(frozen=True, slots=True)
class Shredding:
    """One forget or withdraw: where, what, when (epoch milliseconds)."""

    scope_id: str
    operation: str
    target: str
    at_ms: int


class ShredLedger:
    """The ledger of one key directory."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LEDGER_NAME

    def append(self, shredding: Shredding) -> None:
        line = json.dumps(
            {
                "scope_id": shredding.scope_id,
                "operation": shredding.operation,
                "target": shredding.target,
                "at_ms": shredding.at_ms,
            },
            sort_keys=True,
        )
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, (line + "\n").encode("ascii"))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def holds(self, scope_id: str, operation: str, target: str) -> bool:
        """Whether the ledger already records this operation on this target."""
        return any(
            (entry.scope_id, entry.operation, entry.target) == (scope_id, operation, target)
            for entry in self.entries()
        )

    def entries(self) -> list[Shredding]:
        """Every shredding recorded, oldest first (a torn line is skipped)."""
        try:
            text = self.path.read_text(encoding="ascii", errors="replace")
        except FileNotFoundError:
            return []
        found = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                found.append(
                    Shredding(
                        str(entry["scope_id"]),
                        str(entry["operation"]),
                        str(entry["target"]),
                        int(entry["at_ms"]),
                    )
                )
            except (ValueError, KeyError, TypeError):
                continue
        return found
