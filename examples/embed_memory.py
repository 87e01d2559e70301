"""Embed engram's governed memory in a host process (see docs/embedding.md).

Run: .venv/bin/python examples/embed_memory.py
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path

from engram.host.runtime import open_engine
from engram.host.setup import init_host
from engram.memory.binding import Binding


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        # 1. The host operator creates a profile, a store and its keys once.
        profile = init_host(
            Path(directory) / "agent-a",
            tenant="acme",
            workspace="payments",
            principal="agent-a",
            purpose="purpose:release-engineering",
            grants=["all"],
        )
        store = profile.parent / "memory.db"

        # 2. The host opens the engine and binds every call itself.
        engine = open_engine(store, store.with_name("memory.db.keys"))
        agent = Binding(
            tenant="acme",
            workspace="payments",
            principal="agent-a",
            agent_id="agent-a",
            session="session-1",
            purpose_ref="purpose:release-engineering",
            grants=frozenset({"search", "get", "capture", "request_admission"}),
        )
        cited = "Release tarballs are signed and their sha256 digest is published."
        digest = "sha256:" + hashlib.sha256(cited.encode()).hexdigest()
        now = int(time.time() * 1000)
        captured = engine.call(
            "capture",
            {
                "idempotency_key": "agent-a.release.capture-1",
                "payload": {
                    "schema_version": 2,
                    "purpose_ref": "purpose:release-engineering",
                    "valid_time": {"t": now - 1000},
                    "components": [
                        {
                            "component_id": "c1",
                            "kind": "decision",
                            "text": cited,
                            "citation_ids": ["cit1"],
                        }
                    ],
                    "primary_component_id": "c1",
                    "primary_event": {
                        "at": now - 1000,
                        "type_ref": "decided",
                        "citation_id": "cit1",
                    },
                    "citations": [
                        {
                            "citation_id": "cit1",
                            "source_ref": "repo:payments",
                            "locator": {"scheme": "file", "value": "RELEASING.md"},
                            "content_digest": digest,
                        }
                    ],
                },
                "evidence": {
                    "evidence_ref": "review:42",
                    "evidence_digest": digest,
                    "citation_ids": ["cit1"],
                },
            },
            agent,
        )
        candidate = captured["output"]["value"]["candidate_id"]
        print("capture:", captured["output"]["value"]["status"])

        admitted = engine.call(
            "request_admission",
            {"candidate_id": candidate, "idempotency_key": "agent-a.release.admit-1"},
            agent,
        )
        outcome = admitted["output"]["value"]["outcome"]
        print("admission:", outcome["status"])

        found = engine.call(
            "search",
            {
                "query": "how are release tarballs verified",
                "purpose_ref": "purpose:release-engineering",
            },
            agent,
        )
        records = found["output"]["value"]["records"]
        print(
            "search:", [packet["record"]["record_id"] == outcome["record_id"] for packet in records]
        )

        other_tenant = Binding(
            tenant="other",
            workspace="payments",
            principal="agent-x",
            agent_id="agent-x",
            session="s",
            purpose_ref="purpose:release-engineering",
            grants=frozenset({"get"}),
        )
        foreign = engine.call(
            "get",
            {"record_id": outcome["record_id"], "purpose_ref": "purpose:release-engineering"},
            other_tenant,
        )
        print("other tenant:", foreign["error"]["code"])


if __name__ == "__main__":
    main()
