"""The host operator is told which current records cite files that changed since they
were admitted (``[admission] verifier_root``): changed, missing, as cited again after a
revert; one scope at a time, and the contract's outputs are unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.memory.admission import DefaultAdmissionPolicy
from engram.memory.citations import StaleCitation, stale_citations
from engram.testing import PURPOSE, binding, capture_args
from tests.memory.conftest import Memory, open_memory


def _admitted(memory: Memory, text: str, key: str, who: Any = None) -> str:
    args = capture_args(text=text, key=f"{key}.capture-00000001")
    candidate = str(memory.value("capture", args, who)["candidate_id"])
    outcome = memory.value(
        "request_admission",
        {"candidate_id": candidate, "idempotency_key": f"{key}.admission-0001"},
        who,
    )["outcome"]
    assert outcome["status"] == "accepted", outcome
    return str(outcome["record_id"])


def test_a_cited_file_changed_deleted_and_restored(tmp_path: Path, clock: Any) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    cited = repo / "docs" / "release.md"
    cited.write_bytes(b"cited content")  # what capture_args's digest is of
    memory = open_memory(tmp_path / "store", clock)
    memory.engine.admission_policy = DefaultAdmissionPolicy(repo)
    record = _admitted(memory, "Builds are reproducible.", "one")
    scope = binding().scope
    get = {"record_id": record, "purpose_ref": PURPOSE}
    before = memory.value("get", get)["record"]

    assert stale_citations(memory.engine, scope, repo) == ([], 1)
    cited.write_bytes(b"edited since")
    assert stale_citations(memory.engine, scope, repo) == (
        [StaleCitation(record, "cit1", "docs/release.md", "changed")],
        1,
    )
    assert memory.value("get", get)["record"] == before  # the contract's output unchanged
    cited.unlink()
    assert stale_citations(memory.engine, scope, repo)[0] == [
        StaleCitation(record, "cit1", "docs/release.md", "missing")
    ]
    cited.write_bytes(b"cited content")
    assert stale_citations(memory.engine, scope, repo) == ([], 1)


def test_only_the_scope_asked_about_is_read(tmp_path: Path, clock: Any) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "release.md").write_bytes(b"cited content")
    memory = open_memory(tmp_path / "store", clock)
    memory.engine.admission_policy = DefaultAdmissionPolicy(repo)
    other = binding(workspace="ws-2")
    _admitted(memory, "Builds are reproducible.", "one", other)
    (repo / "docs" / "release.md").write_bytes(b"edited since")

    assert stale_citations(memory.engine, binding().scope, repo) == ([], 0)
    assert [c.state for c in stale_citations(memory.engine, other.scope, repo)[0]] == ["changed"]
