"""One memory = one Markdown file: reading (schema v1, v2, v3) and writing (v3).

A memory's id is the slug of its title; its file is ``<type folder>/<id>.md``. The
title of new text is the text without final punctuation, capitalised, when it has at
most 70 characters, otherwise a type prefix and its first 58 characters; such a cut
title is shared by every text that begins alike, so its id also carries eight hex digits
of the whole text's digest (two different memories never share an id by their title). Older
schema versions lack fields v3 requires; they are read with the defaults v3 would
have written, and written back as v3 when engram next changes them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Final

from engram.project.frontmatter import FrontmatterError, Value, parse_document, render_frontmatter

__all__ = [
    "FOLDERS",
    "TYPES",
    "Memory",
    "parse_memory",
    "render_memory",
    "slugify",
    "title_for",
]

TYPES: Final = ("rule", "skill", "knowledge")
FOLDERS: Final = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}
CONFIDENCE: Final = ("high", "medium", "low")
LIFECYCLE: Final = ("active", "review_due", "superseded", "archived")
LIST_FIELDS: Final = (
    "tags",
    "role",
    "depends_on",
    "parent",
    "source_files",
    "source_hashes",
    "evidence_refs",
    "derived_from",
    "triggers",
    "supersedes",
)
#: v3 field order when writing.
ORDER: Final = (
    "schema_version",
    "id",
    "type",
    "scope",
    "tags",
    "created",
    "updated",
    "author_name",
    "author_email",
    "source",
    "confidence",
    "authority",
    "revision",
    "valid_from",
    "last_confirmed",
    "valid_until",
    "role",
    "depends_on",
    "parent",
    "level",
    "source_files",
    "source_hashes",
    "evidence_refs",
    "derived_from",
    "triggers",
    "lifecycle",
    "supersedes",
    "superseded_by",
    "review_after",
    "last_verified",
    "archived_at",
    "evidence_status",
    "tier",
    "objective",
)
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Memory:
    """A parsed memory: its frontmatter fields and its body."""

    id: str
    type: str
    scope: str
    title: str
    body: str
    fields: dict[str, Value] = field(default_factory=dict)
    #: The line of the ``id`` key in the file (for error messages).
    id_line: int = field(default=1, compare=False)

    def get(self, key: str, default: Value | None = None) -> Value | None:
        return self.fields.get(key, default)

    def items(self, key: str) -> list[str]:
        value = self.fields.get(key, [])
        return list(value) if isinstance(value, list) else [str(value)]

    @property
    def tags(self) -> list[str]:
        return self.items("tags")

    @property
    def passage(self) -> str:
        """What the semantic channel embeds: the title, then the body's text without its
        Markdown frame (headings, bullet marks), which says nothing of the meaning."""
        lines = [
            line.strip().removeprefix("- ").removeprefix("* ")
            for line in self.body.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        return "\n".join([self.title, *lines])

    @property
    def lifecycle(self) -> str:
        return str(self.fields.get("lifecycle", "active"))

    @property
    def tier(self) -> str:
        return str(self.fields.get("tier", "durable"))

    @property
    def revision(self) -> int:
        value = self.fields.get("revision", 1)
        return value if isinstance(value, int) else 1

    def section(self, name: str) -> str:
        """The text of a ``## name`` section of the body ('' when absent)."""
        match = re.search(rf"^## {re.escape(name)}[ \t]*\n(.*?)(?=^## |\Z)", self.body, re.S | re.M)
        return match.group(1).strip() if match else ""

    def with_section(self, name: str, text: str) -> Memory:
        """This memory with the ``## name`` section's text replaced (added after the
        title, or at the end for ``Origin``, when absent); other sections are kept."""
        pattern = re.compile(rf"^## {re.escape(name)}[ \t]*\n.*?(?=^## |\Z)", re.S | re.M)
        section = f"## {name}\n{text.strip()}\n\n"
        if pattern.search(self.body):
            body = pattern.sub(lambda _: section, self.body, count=1)
        elif name == "Origin":
            body = self.body.rstrip("\n") + "\n\n" + section
        else:
            title, _, rest = self.body.partition("\n")
            body = f"{title}\n\n{section}{rest.lstrip(chr(10))}"
        return replace(self, body=body.rstrip("\n") + "\n")

    def with_fields(self, **changes: Value) -> Memory:
        return replace(self, fields={**self.fields, **changes})


#: The id of a title with no ASCII letter or digit.
_FALLBACK_ID: Final = "memory"


def slugify(title: str) -> str:
    """The id for a title: lowercase ASCII words joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:80].rstrip("-") or _FALLBACK_ID


def title_for(text: str, memory_type: str) -> str:
    """The title of new text (upstream rule: at most 70 characters, else prefixed)."""
    first = " ".join(text.strip().split())
    first = re.sub(r"[.!?;:,]+$", "", first)
    if len(first) <= 70:
        return first[:1].upper() + first[1:]
    prefix = {"rule": "Rule", "skill": "Skill", "knowledge": "Knowledge"}[memory_type]
    return f"{prefix}: {_cut_at_word(first, 58)}…"


def _cut_at_word(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, ending at a word's end where one fits."""
    cut = text[: limit + 1]
    space = cut.rfind(" ")
    head = cut[:space] if space > limit // 2 else text[:limit]
    return head.rstrip(" ,;:-")


def _today() -> str:
    return dt.date.today().isoformat()


def _defaults(memory_type: str) -> dict[str, Value]:
    today = _today()
    return {
        "scope": "workspace",
        "tags": [],
        "created": today,
        "updated": today,
        "author_name": "",
        "author_email": "",
        "source": "manual",
        "confidence": "medium",
        "authority": "reference" if memory_type == "knowledge" else "instruction",
        "revision": 1,
        "valid_from": today,
        "last_confirmed": today,
    }


def new_memory_fields(memory_type: str, **changes: Value) -> dict[str, Value]:
    """The fields of a new memory of ``memory_type`` (dated today), with ``changes``."""
    return {**_defaults(memory_type), **changes}


def _require(
    fields: dict[str, Value], key: str, allowed: tuple[str, ...], lines: dict[str, int]
) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or value not in allowed:
        raise FrontmatterError(lines.get(key, 1), f"{key} must be one of {', '.join(allowed)}")
    return value


def _check(fields: dict[str, Value], lines: dict[str, int]) -> None:
    for key in LIST_FIELDS:
        if key in fields and not isinstance(fields[key], list):
            fields[key] = [str(fields[key])]
    if len(fields.get("tags", [])) > 6:  # type: ignore[arg-type]
        raise FrontmatterError(lines.get("tags", 1), "at most 6 tags")
    _require(fields, "confidence", CONFIDENCE, lines)
    _require(fields, "authority", ("instruction", "reference"), lines)
    revision = fields.get("revision")
    if not isinstance(revision, int) or revision < 1:
        raise FrontmatterError(lines.get("revision", 1), "revision must be a whole number >= 1")
    if "lifecycle" in fields:
        _require(fields, "lifecycle", LIFECYCLE, lines)
    for key in ("created", "updated", "valid_from", "last_confirmed", "valid_until"):
        if key in fields and not _DATE.match(str(fields[key])):
            raise FrontmatterError(lines.get(key, 1), f"{key} must be a date (YYYY-MM-DD)")


def parse_memory(text: str, expected_type: str | None = None) -> Memory:
    """Parse a memory file; raises ``FrontmatterError`` with the line and reason."""
    document = parse_document(text)
    fields, lines = dict(document.fields), document.lines
    version = fields.get("schema_version", 1)
    if version not in (1, 2, 3):
        raise FrontmatterError(lines.get("schema_version", 1), f"unknown schema_version {version}")
    memory_type = _require(fields, "type", (*TYPES, "workflow"), lines)
    memory_type = "skill" if memory_type == "workflow" else memory_type
    if expected_type is not None and memory_type != expected_type:
        raise FrontmatterError(
            lines.get("type", 1), f"type {memory_type} does not belong in this folder"
        )
    fields = {**_defaults(memory_type), **fields, "schema_version": 3, "type": memory_type}
    memory_id = fields.get("id")
    if not isinstance(memory_id, str) or slugify(memory_id) != memory_id:
        raise FrontmatterError(
            lines.get("id", 1), "id must be a slug (lowercase letters, digits, hyphens)"
        )
    scope = _require(fields, "scope", ("workspace", "global"), lines)
    _check(fields, lines)
    title_match = re.search(r"^# (.+)$", document.body, re.M)
    title = title_match.group(1).strip() if title_match else memory_id.replace("-", " ")
    return Memory(
        memory_id,
        memory_type,
        scope,
        title,
        document.body.rstrip() + "\n",
        fields,
        lines.get("id", 1),
    )


def render_memory(memory: Memory) -> str:
    """The v3 text of a memory: canonical frontmatter, then its body."""
    fields = {
        **memory.fields,
        "schema_version": 3,
        "id": memory.id,
        "type": memory.type,
        "scope": memory.scope,
    }
    ordered = [(key, fields[key]) for key in ORDER if key in fields]
    extra = sorted((key, value) for key, value in fields.items() if key not in ORDER)
    return render_frontmatter([*ordered, *extra]) + "\n" + memory.body.rstrip() + "\n"


def new_memory(
    memory_type: str,
    text: str,
    *,
    scope: str = "workspace",
    title: str | None = None,
    context: str = "",
    origin: str = "",
    fields: dict[str, Value] | None = None,
) -> Memory:
    """A new memory from proposal text (not yet written)."""
    chosen = title or title_for(text, memory_type)
    bullets = [line.strip() for line in text.strip().splitlines() if line.strip()]
    body = f"# {chosen}\n\n## Content\n" + "\n".join(
        line if line.startswith("- ") else f"- {line}" for line in bullets
    )
    if context:
        body += f"\n- Context: {context.strip()}"
    if origin:
        body += f"\n\n## Origin\n- {origin.strip()}"
    merged = {**_defaults(memory_type), **(fields or {}), "scope": scope}
    memory_id = slugify(chosen)
    # A cut title is shared by every text that begins alike, and a title with no ASCII
    # letter or digit slugs to the fallback: either way the id carries the text's digest.
    if title is None and (_cut(text) or memory_id == _FALLBACK_ID != chosen.lower()):
        memory_id = with_text_digest(memory_id, text)
    return Memory(memory_id, memory_type, scope, chosen, body + "\n", merged)


def with_text_digest(memory_id: str, text: str) -> str:
    """``memory_id`` with eight hex digits of the (whitespace-collapsed) text's SHA-256."""
    whole = " ".join(text.split()).encode("utf-8")
    return f"{memory_id[:71].rstrip('-')}-{hashlib.sha256(whole).hexdigest()[:8]}"


def _cut(text: str) -> bool:
    """Whether :func:`title_for` shortens this text (its title is not the whole text)."""
    first = re.sub(r"[.!?;:,]+$", "", " ".join(text.strip().split()))
    return len(first) > 70


__all__ += ["new_memory", "new_memory_fields", "with_text_digest"]
