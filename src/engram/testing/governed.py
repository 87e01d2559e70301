"""Builders for governed memory: a fake clock, bindings, valid capture arguments, and
host profiles on disk.

Every builder returns a fresh value that passes the closed schemas as it is, so a
test changes only the field it is about (:func:`mutate`).
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engram.memory.binding import Binding
from engram.memory.tools import MEMORY_TOOLS

__all__ = [
    "DIGEST",
    "NOW",
    "PURPOSE",
    "Clock",
    "binding",
    "capture_args",
    "current_capture_args",
    "host_profile",
    "mutate",
    "now_ms",
]

#: The fake clock's instant: 2027-01-15T08:00:00.000Z, in milliseconds.
NOW = 1_800_000_000_000
#: A well-formed content digest for citations and evidence.
DIGEST = "sha256:" + hashlib.sha256(b"cited content").hexdigest()
#: The purpose every builder binds to.
PURPOSE = "purpose:release-engineering"


class Clock:
    """A clock that stands still until a test moves it (``clock.now += DAY``)."""

    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def now_ms() -> int:
    """The real clock, in milliseconds (what a server started by a test runs on)."""
    return int(time.time() * 1000)


def binding(
    tenant: str = "tenant-a",
    workspace: str = "ws-1",
    principal: str = "alice",
    grants: tuple[str, ...] = MEMORY_TOOLS,
    purpose: str = PURPOSE,
) -> Binding:
    """What a host binds an agent's calls to; every tool granted unless told otherwise."""
    return Binding(
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        agent_id=f"{principal}-agent",
        session="ses_test",
        purpose_ref=purpose,
        grants=frozenset(grants),
    )


def capture_args(
    text: str = "Release tarballs are verified with sha256 digests before upload.",
    key: str = "agent-a.task-42.capture-1",
    **payload_changes: Any,
) -> dict[str, Any]:
    """Valid ``capture`` arguments: one cited decision, valid a day before :data:`NOW`."""
    payload: dict[str, Any] = {
        "schema_version": 2,
        "purpose_ref": PURPOSE,
        "valid_time": {"t": NOW - 86_400_000},
        "components": [
            {"component_id": "c1", "kind": "decision", "text": text, "citation_ids": ["cit1"]}
        ],
        "primary_component_id": "c1",
        "primary_event": {"at": NOW - 86_400_000, "type_ref": "decided", "citation_id": "cit1"},
        "citations": [
            {
                "citation_id": "cit1",
                "source_ref": "repo:engram",
                "locator": {"scheme": "file", "value": "docs/release.md"},
                "content_digest": DIGEST,
            }
        ],
    }
    payload.update(payload_changes)
    return {
        "idempotency_key": key,
        "payload": payload,
        "evidence": {
            "evidence_ref": "ev:review-7",
            "evidence_digest": DIGEST,
            "citation_ids": ["cit1"],
        },
    }


def current_capture_args(
    text: str = "Release tarballs are verified with sha256 digests before upload.",
    key: str = "agent-a.task-42.capture-1",
    **payload_changes: Any,
) -> dict[str, Any]:
    """:func:`capture_args` valid from a minute ago on the real clock, so that the
    record is current for a server (which runs on the real clock)."""
    payload_changes.setdefault("valid_time", {"t": now_ms() - 60_000})
    return capture_args(text, key, **payload_changes)


def mutate(arguments: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A deep copy of ``arguments`` with ``change`` applied to it."""
    copied = copy.deepcopy(arguments)
    change(copied)
    return copied


def host_profile(
    directory: Path,
    grants: Sequence[str] | None = ("all",),
    *,
    tenant: str = "tenant-a",
    workspace: str = "ws-1",
    principal: str = "alice",
    purpose: str = PURPOSE,
    semantic: bool = False,
    **options: Any,
) -> Path:
    """``engram host init`` into ``directory``; returns the profile's path.

    Every tool is granted unless ``grants`` says otherwise (``None``: the host's
    default grants, as ``engram host init`` without ``--grant``). The semantic channel
    is off unless asked for: its projection is built in the background, so a server's
    ranking would depend on how far the build got.
    """
    from engram.host.setup import init_host

    return init_host(
        directory,
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        purpose=purpose,
        grants=None if grants is None else list(grants),
        semantic=semantic,
        **options,
    )
