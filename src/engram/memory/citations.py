"""Which admitted records cite files that changed since: the host operator's view.

Where a host profile sets ``[admission] verifier_root`` (the host's checkout of the
repository its agents cite), admission checks each ``file``-scheme citation against the
file's bytes (:class:`engram.memory.admission.DefaultAdmissionPolicy`). Files change after
that; :func:`stale_citations` checks the scope's ``accepted_current`` records again, each
citation's ``content_digest`` (``sha256:`` of the exact bytes) against the file now:

- ``changed``: the file is there with other bytes;
- ``missing``: no such file under the root (deleted, renamed, or a path leading out of it).

Host-only, like :mod:`engram.memory.maintenance`: it reads one scope, the profile's, and is
reached through ``engram host stale``, never through MCP; nothing is written, journaled or
audited, and the contract's outputs (``get``, ``search``) are unchanged. Other schemes stay
assertions, as at admission.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engram.memory.binding import Scope
from engram.memory.engine import MemoryEngine
from engram.memory.overview import Overview

__all__ = ["StaleCitation", "citation_state", "stale_citations"]

_PAGE: Final = 500


@dataclass(frozen=True)
class StaleCitation:
    """One citation of a current record whose file is not as it was cited."""

    record_id: str
    citation_id: str
    path: str
    #: ``changed`` or ``missing``.
    state: str

    def data(self) -> dict[str, str]:
        return {
            "record_id": self.record_id,
            "citation_id": self.citation_id,
            "path": self.path,
            "state": self.state,
        }


def citation_state(citation: dict[str, Any], root: Path) -> str:
    """``ok``, ``changed``, ``missing`` (no file of ``root`` at that path) or ``unchecked``
    (a scheme other than ``file``) of one citation against the files under ``root``."""
    if citation["locator"]["scheme"] != "file":
        return "unchecked"
    base = root.resolve()
    target = (base / str(citation["locator"]["value"])).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        return "missing"
    actual = "sha256:" + hashlib.sha256(target.read_bytes()).hexdigest()
    return "ok" if actual == str(citation["content_digest"]) else "changed"


def stale_citations(
    engine: MemoryEngine, scope: Scope, root: Path
) -> tuple[list[StaleCitation], int]:
    """The stale citations of ``scope``'s current records, by record (newest admitted
    first) and citation, and how many current records were checked."""
    overview = Overview(engine, scope)
    found: list[StaleCitation] = []
    checked = 0
    after: str | None = None
    while True:
        page = overview.records("accepted_current", after, _PAGE)
        for summary in page.items:
            checked += 1
            found += _stale_of(engine, scope, summary.record_id, root)
        if page.next is None:
            return found, checked
        after = page.next


def _stale_of(
    engine: MemoryEngine, scope: Scope, record_id: str, root: Path
) -> list[StaleCitation]:
    with engine.store.read() as reader:
        row = reader.record(scope.scope_id, record_id)
        if row is None or row.state != "accepted_current":
            return []  # changed between the page and now
        body = json.loads(engine.vault.open(reader, row.record_id, row.scope_id, row.sealed))
    stale = []
    for citation in body["content"]["citations"]:
        state = citation_state(citation, root)
        if state in ("changed", "missing"):
            path = str(citation["locator"]["value"])
            stale.append(StaleCitation(record_id, str(citation["citation_id"]), path, state))
    return stale
