"""The person closes the loop in the console: an UPDATE of a stale memory shows what became
of its files beside it, and "Needs review" lists every stale memory with the diff of each
file since it was recorded (from Git), on a real Git repository."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from engram.project.repository import blob_id
from engram.testing import call, data_of
from engram.testing.projects import Project
from tests.console.conftest import start_console
from tests.console.test_http import _log_in, _page
from tests.project.gitrepo import commit_all, git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
MEMORY = "payment-retries-stop-after-3-attempts-src-retry-py"
OLD = blob_id(b"ATTEMPTS = 3\nDELAY = 1\n")[:12]


@pytest.fixture
def stale_project(project: Project) -> Project:
    """A memory citing src/retry.py, committed, then the file edited."""
    git(project.root, "init", "-q", "-b", "main")
    write(project.root, "src/retry.py", "ATTEMPTS = 3\nDELAY = 1\n")
    saved = project.engram(
        "ss",
        "-f",
        stdin="TYPE: rule | TEXT: Payment retries stop after 3 attempts (src/retry.py)\n",
    )
    assert f"wrote {MEMORY}" in saved.stdout, saved.stdout + saved.stderr
    commit_all(project.root, "retry")
    write(project.root, "src/retry.py", "ATTEMPTS = 5\nDELAY = 1\n")
    return project


DIFF = [
    f"--- src/retry.py (recorded {OLD})",
    "+++ src/retry.py (now)",
    "@@ -1,2 +1,2 @@",
    "-ATTEMPTS = 3",
    "+ATTEMPTS = 5",
    " DELAY = 1",
]


def test_an_update_of_a_stale_memory_shows_the_change_in_its_file(
    stale_project: Project,
) -> None:
    line = f"TYPE: rule | TEXT: Payment retries stop after 5 attempts | UPDATE: {MEMORY}\n"
    with stale_project.start() as agent:
        proposed = data_of(call(agent, "engram_save_session", {"text": line}))
    console = start_console(stale_project)
    page = _page(console, "/project/proposals", _log_in(console))
    console.stop()

    assert (
        f"1. UPDATE {MEMORY} changes a memory whose files moved: src/retry.py changed since"
    ) in proposed["text"]
    assert "\n".join(["src/retry.py changed since it was recorded:", *DIFF]) in proposed["text"]
    assert (
        '<p class="warn">The memory it changes stands on files that moved: src/retry.py'
        " changed since"
    ) in page
    shown = [html.unescape(part) for part in _spans(page)]
    for diff_line in DIFF:
        assert diff_line in shown


def test_approving_the_update_records_the_new_hashes(stale_project: Project) -> None:
    line = f"TYPE: rule | TEXT: Payment retries stop after 5 attempts | UPDATE: {MEMORY}\n"
    with stale_project.start() as agent:
        token = data_of(call(agent, "engram_save_session", {"text": line}))["approval_token"]
        data_of(call(agent, "engram_commit", {"approval_token": token, "approve": "all"}))

    assert stale_project.engram("stale").stdout.startswith("no stale memory")
    text = (stale_project.base / "rules" / f"{MEMORY}.md").read_text()
    new = blob_id(b"ATTEMPTS = 5\nDELAY = 1\n")
    assert f"source_hashes: [{new}]" in text


def test_needs_review_lists_each_stale_memory_with_the_diff_of_its_files(
    stale_project: Project,
) -> None:
    console = start_console(stale_project)
    cookie = _log_in(console)
    page = _page(console, "/project/stale", cookie)
    memory_page = _page(console, f"/project/memory/{MEMORY}", cookie)
    (stale_project.root / "src" / "retry.py").write_text("ATTEMPTS = 3\nDELAY = 1\n")
    after_revert = _page(console, "/project/stale", cookie)
    console.stop()

    assert f'<h2><a href="/project/memory/{MEMORY}">{MEMORY}</a></h2>' in page
    assert f"engram reconfirm {MEMORY}" in page
    shown = [html.unescape(part) for part in _spans(page)]
    assert [line for line in shown if line in DIFF] == DIFF
    assert '<p class="warn">Stale: src/retry.py changed since' in memory_page
    assert [html.unescape(p) for p in _spans(memory_page) if html.unescape(p) in DIFF] == DIFF
    assert (
        '<p id="none-stale">Nothing needs review: the files of 1 memory are as recorded.</p>'
    ) in after_revert


def _spans(page: str) -> list[str]:
    return re.findall(r'<span class="(?:side|ctx|add|del)">([^<]*)</span>', page)


def test_the_operator_sees_the_records_whose_cited_file_changed(
    project: Project, tmp_path: Path
) -> None:
    from tests.cli.test_host_commands import _admit, _init

    profile = _init(tmp_path / "h")
    cited = tmp_path / "h" / "repo" / "docs" / "release.md"
    cited.parent.mkdir(parents=True)
    cited.write_bytes(b"cited content")
    text = profile.read_text()
    profile.write_text(
        text.replace('policy = "default"\n', 'policy = "default"\nverifier_root = "repo"\n')
    )
    record = _admit(profile)
    cited.write_bytes(b"edited since")
    console = start_console(project, "--host-profile", str(profile))
    page = _page(console, "/governed/0/stale", _log_in(console))
    console.stop()

    assert (
        f'<tr><td><a href="/governed/0/records/{record}">{record}</a></td><td>cit1</td>'
        '<td class="path">docs/release.md</td><td class="warn">changed</td></tr>'
    ) in page


def test_approving_in_the_console_records_the_files_a_memory_names(project: Project) -> None:
    from tests.console.test_proposals_page import _decide

    git(project.root, "init", "-q", "-b", "main")
    write(project.root, "src/limits.py", "LIMIT = 100\n")
    line = "TYPE: knowledge | TEXT: Payment limits live in src/limits.py\n"
    with project.start() as agent:
        assert data_of(call(agent, "engram_save_session", {"text": line}))["saved"] is False
    console = start_console(project)
    cookie = _log_in(console)
    status, _, _ = _decide(
        console, _page(console, "/project/proposals", cookie), cookie, decision="approve"
    )
    console.stop()

    assert status == 303
    text = (project.base / "knowledge" / "payment-limits-live-in-src-limits-py.md").read_text()
    assert "source_files: [src/limits.py]\n" in text
    limits = blob_id(b"LIMIT = 100\n")
    assert f"source_hashes: [{limits}]\n" in text
