"""Project memory fixtures: an initialised repository in a temp dir, a private global
memory root, and builders for memory files written the way a person would write them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.compose import open_project
from engram.project.layout import Layout, init_layout
from engram.project.workspace import ProjectMemory

FOLDER = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}


@pytest.fixture(autouse=True)
def global_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own global memory root, never the user's real one."""
    path = tmp_path_factory.mktemp("global")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(path))
    return path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return init_layout(tmp_path)[0]


@pytest.fixture
def memory(layout: Layout) -> Iterator[ProjectMemory]:
    """Project memory of ``tmp_path``, scanning the files on every call (no watcher)."""
    opened = open_project(layout.root)
    yield opened
    opened.index.close()


def today() -> str:
    return dt.date.today().isoformat()


def memory_text(
    memory_id: str,
    memory_type: str = "knowledge",
    content: str = "",
    *,
    title: str | None = None,
    tags: tuple[str, ...] = (),
    fields: str = "",
    sections: str = "",
) -> str:
    """The text of a schema v3 memory file; ``fields`` are extra frontmatter lines."""
    shown = title or memory_id.replace("-", " ").capitalize()
    bullets = "\n".join(f"- {line}" for line in (content or shown).splitlines())
    return (
        "---\n"
        "schema_version: 3\n"
        f"id: {memory_id}\n"
        f"type: {memory_type}\n"
        "scope: workspace\n"
        f"tags: [{', '.join(tags)}]\n"
        f"{fields}"
        "---\n\n"
        f"# {shown}\n\n## Content\n{bullets}\n{sections}"
    )


def write_memory_file(
    layout: Layout,
    memory_id: str,
    memory_type: str = "knowledge",
    content: str = "",
    *,
    title: str | None = None,
    tags: tuple[str, ...] = (),
    fields: str = "",
    sections: str = "",
) -> Path:
    """Write ``<folder>/<id>.md`` by hand (not through engram); returns its path."""
    path = layout.folder(FOLDER[memory_type]) / f"{memory_id}.md"
    text = memory_text(
        memory_id, memory_type, content, title=title, tags=tags, fields=fields, sections=sections
    )
    path.write_text(text, encoding="utf-8")
    return path


def write_config(layout: Layout, text: str) -> None:
    layout.config.write_text(text, encoding="utf-8")


def without_confidence_floor(layout: Layout) -> None:
    """Load every routed memory whatever its confidence: for tests of what routing does
    after the floor (order, roles, limits, packing) in projects too small to be sure."""
    write_config(layout, '{"load": {"confidence_floor": 0}}')


#: The text of a rule candidate that :func:`bury_a_related_rule` buries a related rule for.
BURIED_CANDIDATE = "Alpha beta gamma delta epsilon"


def bury_a_related_rule(rules: Path) -> None:
    """Write into ``rules`` the rule ``target``, closely related to
    :data:`BURIED_CANDIDATE` (word-set Jaccard 5/6), under twelve rules ``d0``..``d11``
    that BM25 ranks above it but that are too different to be related (Jaccard 5/11).

    At the default query level (8) the candidate is an ``ADD``; from 13 on it is
    ``SUPERSEDE target``.
    """
    words = BURIED_CANDIDATE.lower()
    for number in range(12):
        extra = " ".join(f"x{number}{letter}" for letter in "abcdef")
        text = memory_text(f"d{number}", "rule", f"{words} {extra}", title=BURIED_CANDIDATE)
        (rules / f"d{number}.md").write_text(text, encoding="utf-8")
    origin = " ".join(f"w{number}" for number in range(600))
    text = memory_text("target", "rule", f"{words} zeta", sections=f"\n## Origin\n- {origin}\n")
    (rules / "target.md").write_text(text, encoding="utf-8")
