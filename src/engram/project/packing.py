"""Packing routed memories into a token budget, with tiered disclosure.

Token estimate: ``ceil(UTF-8 bytes / 4)``. For English text that is the usual "about
four characters a token" (the upstream estimate); for text in scripts of two to four
bytes a character it counts more tokens per character, closer to what tokenizers
do. The budget is checked on the exact final text, so the packed output never
exceeds it.

Tiered disclosure (the default): memories in load order get their body while it
fits; the rest become one-line cards (``- id (type): title``), retrievable with
``engram_load`` by id; what does not fit even as a card is omitted. ``cards`` gives
cards only. ``full`` widens each body: every section, all rule variants, and a line
of metadata.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from engram.project.memory_file import Memory

__all__ = ["Packed", "estimate_tokens", "pack", "render_body"]

_VARIANT_TITLES: Final = {"light": "Light", "balanced": "Balanced", "strict": "Strict"}


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def _variant(memory: Memory, variant: str) -> str:
    variants = memory.section("Rule Variants")
    if not variants or variant == "off":
        return ""
    title = _VARIANT_TITLES[variant]
    lines, keep = [], False
    for line in variants.splitlines():
        if line.startswith("### "):
            keep = line[4:].strip() == title
            continue
        if keep:
            lines.append(line)
    chosen = "\n".join(lines).strip()
    return f"Variant ({variant}):\n{chosen}" if chosen else ""


def render_body(memory: Memory, variant: str, full: bool) -> str:
    """The text of one memory as ``engram_load`` shows it."""
    label = f"{memory.type.capitalize()}: "
    title = memory.title if memory.title.startswith(label) else label + memory.title
    heading = f"## {title} [{memory.id}]"
    if full:
        meta = (
            f"scope {memory.scope}; revision {memory.revision}; "
            f"confidence {memory.get('confidence')}; tags {', '.join(memory.tags) or '-'}"
        )
        body = (
            memory.body.split("\n", 1)[1].strip() if memory.body.startswith("# ") else memory.body
        )
        return f"{heading}\n{meta}\n{body.strip()}"
    content = memory.section("Content") or memory.body.strip()
    parts = [heading, content]
    if memory.type == "rule":
        chosen = _variant(memory, variant)
        if chosen:
            parts.append(chosen)
    return "\n".join(parts)


def card(memory: Memory) -> str:
    return f"- {memory.id} ({memory.type}): {memory.title}"


@dataclass
class Packed:
    text: str
    body_keys: list[str] = field(default_factory=list)
    card_ids: list[str] = field(default_factory=list)
    omitted_ids: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def _join(header: str, bodies: list[str], cards: list[str]) -> str:
    parts = [header, *bodies]
    if cards:
        parts.append("More memories (engram_load with id):\n" + "\n".join(cards))
    return "\n\n".join(parts) + "\n"


def pack(
    memories: list[Memory],
    header: str,
    budget: int,
    *,
    disclosure: str = "tiered",
    full: bool = False,
    variant: str = "balanced",
    marks: Mapping[str, tuple[str, str]] | None = None,
) -> Packed:
    """Fit ``memories`` (in load order) into ``budget`` tokens. ``marks``: what to say
    of a memory, a line under its heading and a note after its card, counted in the
    budget."""
    bodies: list[str] = []
    cards: list[str] = []
    packed = Packed("")
    marks = marks or {}
    for memory in memories:
        mark, note = marks.get(memory.id, ("", ""))
        if disclosure != "cards":
            body = render_body(memory, variant, full)
            if mark:
                heading, _, rest = body.partition("\n")
                body = f"{heading}\n{mark}\n{rest}".rstrip("\n")
            if estimate_tokens(_join(header, [*bodies, body], cards)) <= budget:
                bodies.append(body)
                packed.body_keys.append(memory.id)
                continue
        line = card(memory) + (f" [{note}]" if note else "")
        if estimate_tokens(_join(header, bodies, [*cards, line])) <= budget:
            cards.append(line)
            packed.card_ids.append(memory.id)
        else:
            packed.omitted_ids.append(memory.id)
    packed.text = _join(header, bodies, cards)
    return packed
