"""Memory files: the layout, one file per memory, reading v1/v2/v3, ids and titles,
invalid files, hand edits picked up by the next call, and the rebuildable index."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.compose import open_project
from engram.project.layout import Layout, init_layout
from engram.project.memory_file import slugify, title_for
from engram.project.proposals import Candidate, parse_candidate_lines
from engram.project.workspace import ProjectMemory, UnknownMemory
from tests.project.conftest import today, write_memory_file

# --- engram init --------------------------------------------------------------------


def test_init_creates_the_memory_folders_the_hash_file_and_the_git_files(
    tmp_path: Path,
) -> None:
    layout, created = init_layout(tmp_path)

    base = tmp_path / ".agents" / ".engram"
    assert layout.base == base
    assert created == [
        "rules/",
        "skills/",
        "knowledge/",
        "working/",
        ".gitignore",
        ".gitattributes",
        "memory.hashes",
    ]
    assert sorted(p.name for p in base.iterdir() if p.is_dir()) == [
        "knowledge",
        "rules",
        "skills",
        "working",
    ]
    assert (base / "memory.hashes").read_text() == ""
    assert (base / ".gitattributes").read_text() == (
        "/memory.hashes merge=union\n/.gitignore merge=union\n/.gitattributes merge=union\n"
    )
    ignored = (base / ".gitignore").read_text().splitlines()
    assert "working/" in ignored
    assert "pending-approvals.json" in ignored


def test_init_twice_creates_nothing_and_changes_nothing(tmp_path: Path) -> None:
    layout, _ = init_layout(tmp_path)
    gitignore = (layout.base / ".gitignore").read_text()

    again, created = init_layout(tmp_path)

    assert again == layout
    assert created == []
    assert (layout.base / ".gitignore").read_text() == gitignore
    assert (layout.base / "memory.hashes").read_text() == ""


def test_init_keeps_existing_gitignore_lines_and_adds_each_entry_once(tmp_path: Path) -> None:
    base = tmp_path / ".agents" / ".engram"
    base.mkdir(parents=True)
    (base / ".gitignore").write_text("# mine\nscratch/\nworking/\n")

    init_layout(tmp_path)
    init_layout(tmp_path)

    lines = (base / ".gitignore").read_text().splitlines()
    assert lines[:3] == ["# mine", "scratch/", "working/"]
    assert lines.count("working/") == 1
    assert lines.count("pending-approvals.json") == 1


# --- one memory = one file ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "folder"),
    [("rule", "rules"), ("skill", "skills"), ("workflow", "skills"), ("knowledge", "knowledge")],
)
def test_a_saved_memory_is_one_file_named_after_its_id_in_its_type_folder(
    memory: ProjectMemory, layout: Layout, kind: str, folder: str
) -> None:
    candidates = parse_candidate_lines(f"TYPE: {kind} | TEXT: Keep the changelog current.")
    proposal = memory.propose(candidates, "workspace")

    outcome = memory.write(proposal, [1], human_approved=False)

    assert outcome.written == [
        {
            "number": 1,
            "verdict": "ADD",
            "id": "keep-the-changelog-current",
            "file": f"{folder}/keep-the-changelog-current.md",
        }
    ]
    files = sorted(p.relative_to(layout.base).as_posix() for p in layout.base.rglob("*.md"))
    assert files == [f"{folder}/keep-the-changelog-current.md"]


def test_a_schema_v3_file_is_read_with_every_field_it_declares(
    memory: ProjectMemory, layout: Layout
) -> None:
    path = layout.folder("rules") / "use-tabs.md"
    path.write_text(
        "---\n"
        "schema_version: 3\n"
        "id: use-tabs\n"
        "type: rule\n"
        "scope: workspace\n"
        "tags: [style, task_type:edit]\n"
        "created: 2024-03-01\n"
        "updated: 2024-03-02\n"
        'author_name: "Ada Lovelace"\n'
        "author_email: ada@example.org\n"
        "source: manual\n"
        "confidence: high\n"
        "authority: instruction\n"
        "revision: 4\n"
        "valid_from: 2024-03-01\n"
        "last_confirmed: 2024-03-02\n"
        "role:\n"
        "  - backend\n"
        "  - infra\n"
        "depends_on: [editor-config]\n"
        "---\n\n# Use tabs\n\n## Content\n- Indent with tabs\n"
    )

    loaded = memory.load(memory_id="use-tabs")
    parsed = memory.index.memory("use-tabs")

    assert loaded.packed == "## Rule: Use tabs [use-tabs]\n- Indent with tabs\n"
    assert parsed is not None
    assert (parsed.type, parsed.scope, parsed.title) == ("rule", "workspace", "Use tabs")
    assert parsed.fields == {
        "schema_version": 3,
        "id": "use-tabs",
        "type": "rule",
        "scope": "workspace",
        "tags": ["style", "task_type:edit"],
        "created": "2024-03-01",
        "updated": "2024-03-02",
        "author_name": "Ada Lovelace",
        "author_email": "ada@example.org",
        "source": "manual",
        "confidence": "high",
        "authority": "instruction",
        "revision": 4,
        "valid_from": "2024-03-01",
        "last_confirmed": "2024-03-02",
        "role": ["backend", "infra"],
        "depends_on": ["editor-config"],
    }
    assert memory.problems() == []


V1_FILE = (
    "---\nid: old-style\ntype: knowledge\nscope: workspace\ntags: [db]\n---\n"
    "# Old style\n\n## Content\n- The database is postgres\n"
)
V2_FILE = (
    "---\nschema_version: 2\nid: old-style\ntype: knowledge\nscope: workspace\ntags: [db]\n"
    "created: 2024-01-02\nupdated: 2024-01-03\nconfidence: high\n---\n"
    "# Old style\n\n## Content\n- The database is postgres\n"
)


@pytest.mark.parametrize(
    ("text", "created", "confidence"),
    [(V1_FILE, None, "medium"), (V2_FILE, "2024-01-02", "high")],
    ids=["v1-without-schema-version", "v2-without-revision-or-authority"],
)
def test_an_older_file_reads_with_v3_defaults(
    memory: ProjectMemory, layout: Layout, text: str, created: str | None, confidence: str
) -> None:
    (layout.folder("knowledge") / "old-style.md").write_text(text)

    memory.refresh()
    parsed = memory.index.memory("old-style")

    assert parsed is not None
    assert parsed.fields["schema_version"] == 3
    assert parsed.fields["revision"] == 1
    assert parsed.fields["authority"] == "reference"
    assert parsed.fields["source"] == "manual"
    assert parsed.fields["confidence"] == confidence
    assert parsed.fields["created"] == (created or today())
    assert parsed.tags == ["db"]
    assert memory.problems() == []


@pytest.mark.parametrize(
    ("text", "created", "confidence"),
    [(V1_FILE, None, "medium"), (V2_FILE, "2024-01-02", "high")],
    ids=["v1-without-schema-version", "v2-without-revision-or-authority"],
)
def test_an_older_file_is_written_back_as_v3_on_update(
    memory: ProjectMemory,
    layout: Layout,
    text: str,
    created: str | None,
    confidence: str,
) -> None:
    path = layout.folder("knowledge") / "old-style.md"
    path.write_text(text)
    proposal = memory.propose(
        [Candidate("knowledge", "The database is postgres 16", update="old-style")], "workspace"
    )

    outcome = memory.write(proposal, [1], human_approved=False)

    day = today()
    assert outcome.written == [
        {
            "number": 1,
            "verdict": "UPDATE old-style",
            "id": "old-style",
            "file": "knowledge/old-style.md",
        }
    ]
    assert path.read_text() == (
        "---\n"
        "schema_version: 3\n"
        "id: old-style\n"
        "type: knowledge\n"
        "scope: workspace\n"
        "tags: [db]\n"
        f"created: {created or day}\n"
        f"updated: {day}\n"
        'author_name: ""\n'
        'author_email: ""\n'
        "source: manual\n"
        f"confidence: {confidence}\n"
        "authority: reference\n"
        "revision: 2\n"
        f"valid_from: {day}\n"
        f"last_confirmed: {day}\n"
        "---\n\n"
        "# Old style\n\n## Content\n- The database is postgres 16\n"
    )


# --- ids and titles ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Use tabs for indentation", "use-tabs-for-indentation"),
        ("Café au lait: the  BEST drink!", "cafe-au-lait-the-best-drink"),
        ("Rule: Run `make lint` (always)", "rule-run-make-lint-always"),
        ("!!!", "memory"),
    ],
)
def test_an_id_is_the_slug_of_the_title(title: str, slug: str) -> None:
    assert slugify(title) == slug


@pytest.mark.parametrize(
    ("text", "kind", "title"),
    [
        ("use tabs for indentation.", "rule", "Use tabs for indentation"),
        ("  keep   the\nchangelog current?!  ", "knowledge", "Keep the changelog current"),
        ("a" * 70, "rule", "A" + "a" * 69),
        ("a" * 70 + ".", "rule", "A" + "a" * 69),
        ("b" * 71, "rule", "Rule: " + "b" * 58 + "…"),
        ("c" * 71, "skill", "Skill: " + "c" * 58 + "…"),
        ("d" * 71, "knowledge", "Knowledge: " + "d" * 58 + "…"),
        # Cut at the end of a word, never inside one.
        (
            "Run ./scripts/test (ruff, ruff format, mypy strict, pytest) before every push",
            "rule",
            "Rule: Run ./scripts/test (ruff, ruff format, mypy strict…",
        ),
    ],
)
def test_a_title_is_the_capitalised_text_up_to_70_chars_else_a_type_prefix_and_58_chars(
    text: str, kind: str, title: str
) -> None:
    assert title_for(text, kind) == title


def test_two_files_with_the_same_id_report_the_second_and_the_first_file_wins(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "dup", "rule", "Rule text")
    write_memory_file(layout, "dup", "knowledge", "Knowledge text")

    loaded = memory.load(memory_id="dup")

    assert loaded.packed == "## Rule: Dup [dup]\n- Rule text\n"
    assert memory.problems() == [("knowledge/dup.md", "duplicate id dup (also in rules/dup.md)")]


def test_deleting_the_first_of_two_files_with_the_same_id_makes_the_other_load(
    memory: ProjectMemory, layout: Layout
) -> None:
    first = write_memory_file(layout, "dup", "rule", "Rule text")
    write_memory_file(layout, "dup", "knowledge", "Knowledge text")
    memory.refresh()

    first.unlink()
    loaded = memory.load(memory_id="dup")

    assert loaded.packed == "## Knowledge: Dup [dup]\n- Knowledge text\n"
    assert memory.problems() == []


# --- invalid files -----------------------------------------------------------------------

INVALID = {
    "knowledge/no-fence.md": (
        b"id: no-fence\ntype: knowledge\n",
        "line 1: missing frontmatter (the file must start with ---)",
    ),
    "knowledge/bad-line.md": (
        b"---\nid: bad-line\ntype: knowledge\nscope workspace\n---\n# Bad\n",
        "line 4: expected 'key: value'",
    ),
    "rules/wrong-folder.md": (
        b"---\nid: wrong-folder\ntype: knowledge\nscope: workspace\n---\n# Wrong\n",
        "line 3: type knowledge does not belong in this folder",
    ),
    "knowledge/future.md": (
        b"---\nschema_version: 9\nid: future\ntype: knowledge\nscope: workspace\n---\n# F\n",
        "line 2: unknown schema_version 9",
    ),
    "knowledge/renamed.md": (
        b"---\nid: other-id\ntype: knowledge\nscope: workspace\n---\n# Renamed\n",
        "line 2: file name does not match id other-id",
    ),
    "knowledge/latin1.md": (
        b"---\nid: latin1\ntype: knowledge\nscope: workspace\n---\n# Caf\xe9\n",
        "not UTF-8 text",
    ),
    "knowledge/many-tags.md": (
        b"---\nid: many-tags\ntype: knowledge\nscope: workspace\n"
        b"tags: [a, b, c, d, e, f, g]\n---\n# Tags\n",
        "line 5: at most 6 tags",
    ),
}


def _write_raw(layout: Layout, relative: str, data: bytes) -> None:
    (layout.base / relative).write_bytes(data)


def test_invalid_files_are_reported_by_path_and_never_stop_valid_files_loading(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "valid-one", "knowledge", "The staging host is bluebird")
    for relative, (data, _) in INVALID.items():
        _write_raw(layout, relative, data)

    result = memory.load("staging bluebird")

    assert result.selected_keys == ["valid-one"]
    assert [path for path, _ in memory.problems()] == sorted(INVALID)
    assert memory.status().invalid_files == len(INVALID)


@pytest.mark.parametrize("relative", sorted(INVALID))
def test_an_invalid_file_is_reported_with_the_line_and_reason(
    memory: ProjectMemory, layout: Layout, relative: str
) -> None:
    data, reason = INVALID[relative]
    _write_raw(layout, relative, data)

    memory.refresh()

    assert memory.problems() == [(relative, reason)]


def test_problems_reports_invalid_files_on_a_fresh_open(layout: Layout) -> None:
    _write_raw(layout, "knowledge/bad-line.md", INVALID["knowledge/bad-line.md"][0])
    opened = open_project(layout.root)

    assert opened.problems() == [("knowledge/bad-line.md", "line 4: expected 'key: value'")]


def test_an_invalid_file_fixed_by_hand_loads_on_the_next_call(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_raw(layout, "knowledge/bad-line.md", INVALID["knowledge/bad-line.md"][0])
    memory.refresh()

    write_memory_file(layout, "bad-line", "knowledge", "Fixed now")
    result = memory.load(memory_id="bad-line")

    assert result.packed == "## Knowledge: Bad line [bad-line]\n- Fixed now\n"
    assert memory.problems() == []


# --- hand edits, deletions, the index ------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["inotify", "scan"])
def watched(request: pytest.FixtureRequest, layout: Layout) -> Iterator[ProjectMemory]:
    """Project memory with and without the inotify change feed."""
    opened = open_project(layout.root, watch=request.param)
    yield opened
    opened.index.close()


def test_a_file_edited_by_hand_is_picked_up_by_the_next_load_and_search(
    watched: ProjectMemory, layout: Layout
) -> None:
    path = write_memory_file(layout, "database", "knowledge", "The database is postgres")
    assert watched.search("postgres").entries[0]["id"] == "database"

    path.write_text(path.read_text().replace("is postgres", "is now cockroachdb"))

    assert watched.load(memory_id="database").packed == (
        "## Knowledge: Database [database]\n- The database is now cockroachdb\n"
    )
    assert [e["id"] for e in watched.search("cockroachdb").entries] == ["database"]
    assert watched.search("postgres").entries == []


def test_a_same_size_edit_in_place_is_picked_up_by_the_watcher_even_with_the_old_mtime(
    layout: Layout,
) -> None:
    path = write_memory_file(layout, "database", "knowledge", "The database is postgres")
    opened = open_project(layout.root, watch=True)
    assert opened.load(memory_id="database").packed.endswith("- The database is postgres\n")
    before = path.stat()

    with path.open("r+b") as handle:
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"postgres", b"cassandr"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert path.stat().st_size == before.st_size
    assert opened.load(memory_id="database").packed.endswith("- The database is cassandr\n")
    assert [e["id"] for e in opened.search("cassandr").entries] == ["database"]
    opened.index.close()


def test_a_same_size_edit_with_a_new_mtime_is_picked_up_without_a_watcher(
    memory: ProjectMemory, layout: Layout
) -> None:
    path = write_memory_file(layout, "database", "knowledge", "The database is postgres")
    assert memory.load(memory_id="database").packed.endswith("- The database is postgres\n")
    before = path.stat()

    path.write_bytes(path.read_bytes().replace(b"postgres", b"cassandr"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))

    assert memory.load(memory_id="database").packed.endswith("- The database is cassandr\n")


def test_a_file_added_by_hand_is_picked_up_by_the_next_call(
    watched: ProjectMemory, layout: Layout
) -> None:
    assert watched.search("bluebird").entries == []

    write_memory_file(layout, "staging-host", "knowledge", "The staging host is bluebird")

    assert [e["id"] for e in watched.search("bluebird").entries] == ["staging-host"]


def test_deleting_a_file_removes_its_memory(watched: ProjectMemory, layout: Layout) -> None:
    path = write_memory_file(layout, "staging-host", "knowledge", "The staging host is bluebird")
    write_memory_file(layout, "other", "knowledge", "Something unrelated")
    assert [e["id"] for e in watched.search("bluebird").entries] == ["staging-host"]

    path.unlink()

    assert watched.search("bluebird").entries == []
    assert watched.load("staging bluebird").selected_keys == []
    with pytest.raises(UnknownMemory):
        watched.load(memory_id="staging-host")


def test_the_index_file_can_be_deleted_and_is_rebuilt_from_the_files(layout: Layout) -> None:
    write_memory_file(layout, "staging-host", "knowledge", "The staging host is bluebird")
    write_memory_file(layout, "deploy-rule", "rule", "Deploy only from main")
    first = open_project(layout.root)
    before = (first.search("bluebird").entries, first.load("deploy main").packed)
    first.index.close()

    for path in layout.base.glob("index.sqlite*"):
        path.unlink()
    second = open_project(layout.root)

    assert (second.search("bluebird").entries, second.load("deploy main").packed) == before
    assert layout.index.exists()
    second.index.close()


# --- duplicates ----------------------------------------------------------------------


def test_the_same_files_give_the_same_duplicate_winner_whatever_the_index_history(
    layout: Layout,
) -> None:
    write_memory_file(layout, "dup", "knowledge", "Knowledge version")
    first = open_project(layout.root)
    first.refresh()
    write_memory_file(layout, "dup", "rule", "Rule version")
    first.refresh()
    grown = first.load(memory_id="dup").packed
    first.index.close()
    for suffix in ("", "-wal", "-shm"):
        (layout.base / f"index.sqlite{suffix}").unlink(missing_ok=True)
    rebuilt = open_project(layout.root).load(memory_id="dup").packed
    assert grown == rebuilt
    assert "Rule version" in rebuilt  # rules/ comes before knowledge/ in folder order
