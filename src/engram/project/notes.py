"""Working-tier notes: short task notes that expire, and their promotion.

A note is redacted (credential-like text replaced by ``[REDACTED:<kind>]``) and
refused outright when a line reads like an instruction to an agent (a prompt
injection waiting for the next session). It lives in ``working/`` (Git-ignored) as
``note-<slug>.md`` with ``source: note``, ``tier: working`` and ``valid_until`` =
today + ``load.working_ttl_days``; the ``note-`` prefix means a note can never update
a durable memory of the same name. ``engram promote`` is the only way to make a note
durable.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from engram.errors import InstructionRefused, SecretRefused
from engram.project.frontmatter import Value
from engram.project.memory_file import Memory, new_memory

__all__ = ["InstructionRefused", "make_note", "promoted", "refuse_instructions"]

#: Lines that address an agent rather than record a fact.
_INSTRUCTION_PATTERNS: Final = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|your)\b"
        r".{0,40}\b(instructions?|rules?|prompts?|guidelines?)\b",
        r"^\s*(system|assistant|developer)\s*:",
        r"<\|?(system|im_start|im_end)\|?>|\[/?INST\]",
        r"\byou (are now|must now|will now|should now)\b",
        r"\b(do not|don't|never) (tell|reveal|mention|show)\b.{0,30}\b(user|human)\b",
        r"\b(run|execute)\b.{0,20}\b(curl|wget|rm -rf|sudo|chmod 777)\b",
        r"\bnew (system )?instructions?\b",
    )
)


def refuse_instructions(text: str) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if any(pattern.search(line) for pattern in _INSTRUCTION_PATTERNS):
            raise InstructionRefused(f"note line {number} reads like an instruction to an agent")


def make_note(
    text: str, objective: str, memory_type: str, scope: str, ttl_days: int, today: dt.date
) -> Memory:
    """A redacted working note (refuses instruction-like lines first)."""
    from engram.safety.disguise import contains_disguised_secret
    from engram.safety.secrets import redact

    refuse_instructions(text)
    clean = redact(text)
    if contains_disguised_secret([clean, redact(objective)]):
        raise SecretRefused(
            "the note holds credential-like content (disguised: encoded, spaced, split or in"
            " look-alike letters); write it without the secret"
        )
    fields: dict[str, Value] = {
        "source": "note",
        "tier": "working",
        "valid_until": (today + dt.timedelta(days=ttl_days)).isoformat(),
    }
    if objective:
        fields["objective"] = " ".join(redact(objective).split())
    memory = new_memory(memory_type, clean, scope=scope, fields=fields)
    # "note-" once, whatever the text begins with ("Note: ..." gave note-note-...).
    note_id = "note-" + memory.id.removeprefix("note-")
    return Memory(note_id, memory.type, memory.scope, memory.title, memory.body, memory.fields)


def promoted(note: Memory) -> Memory:
    """The durable memory a note becomes."""
    fields = {
        key: value
        for key, value in note.fields.items()
        if key not in ("tier", "valid_until", "objective")
    }
    fields["source"] = "note-promoted"
    durable_id = note.id.removeprefix("note-")
    return Memory(durable_id, note.type, note.scope, note.title, note.body, fields)
