"""Demo, part 2: governed memory through the real server and the real ``engram host`` CLI.

Host init, a cited capture, admission, search, get, an idempotent replay, a
cross-tenant NOT_FOUND, then withdraw and forget through the path without a dialog:
``gate_failed``, the host operator confirms, the agent retries.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engram.demo import transcript
from engram.testing.clients import StdioClient, Trace

__all__ = ["run"]

PURPOSE = "purpose:release-engineering"
CITED = "Release tarballs are signed; the sha256 digest is published next to each tarball."


def _engram(*args: str) -> str:
    """Run the real ``engram`` CLI (the host operator's side)."""
    done = subprocess.run(
        [sys.executable, "-m", "engram", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


_NOW = int(time.time() * 1000)


def _capture(key: str, text: str, now: int = _NOW) -> dict[str, Any]:
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return {
        "idempotency_key": key,
        "payload": {
            "schema_version": 2,
            "purpose_ref": PURPOSE,
            "valid_time": {"t": now - 60_000},
            "components": [
                {"component_id": "c1", "kind": "decision", "text": text, "citation_ids": ["cit1"]}
            ],
            "primary_component_id": "c1",
            "primary_event": {"at": now - 60_000, "type_ref": "decided", "citation_id": "cit1"},
            "citations": [
                {
                    "citation_id": "cit1",
                    "source_ref": "repo:payments",
                    "locator": {"scheme": "file", "value": "RELEASING.md#L10-L14"},
                    "content_digest": digest,
                }
            ],
        },
        "evidence": {
            "evidence_ref": "review:pr-42",
            "evidence_digest": digest,
            "citation_ids": ["cit1"],
        },
    }


def _call(client: StdioClient, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = client.request("tools/call", {"name": f"engram_memory_{tool}", "arguments": arguments})
    envelope: dict[str, Any] = reply["result"]["structuredContent"]
    if envelope["ok"]:
        transcript.note(f"{tool}: {_summary(envelope['output']['value'])}")
    else:
        transcript.note(f"{tool}: {envelope['error']['code']}")
    return envelope


def _summary(value: dict[str, Any]) -> str:
    if "records" in value:
        return f"{len(value['records'])} record(s), BM25-ranked, with a rank receipt"
    if "read_receipt" in value:
        return f"{value['record']['record_id']} with its read receipt"
    if "receipt" in value:
        receipt = value["receipt"]
        return f"{receipt['from_state']} -> {receipt['to_state']} at cursor {receipt['cursor']}"
    outcome = value.get("outcome", value)
    named = outcome.get("record_id") or outcome.get("candidate_id")
    return f"{outcome['status']} {named}"


def _confirm_pending(profile: Path) -> None:
    pending = json.loads(_engram("host", "pending", "--json", "--host-profile", str(profile)))
    for request in pending["confirmations"]:
        transcript.note(f"$ engram host pending -> {request['tool']} {request['target']}")
        done = _engram("host", "confirm", request["request_id"], "--host-profile", str(profile))
        transcript.note(f"$ engram host confirm {request['request_id']} -> {done}")


def run(workdir: Path, trace: Trace) -> None:
    """Play the governed-memory story in ``workdir``."""
    transcript.heading("Governed memory: the host binds tenant, workspace, principal, purpose")
    profile = Path(
        _engram(
            "host",
            "init",
            str(workdir / "agent-a"),
            "--tenant",
            "acme",
            "--workspace",
            "payments",
            "--principal",
            "agent-a",
            "--purpose",
            PURPOSE,
            "--grant",
            "all",
        )
    )
    other = Path(
        _engram(
            "host",
            "init",
            str(workdir / "agent-x"),
            "--tenant",
            "other-co",
            "--workspace",
            "payments",
            "--principal",
            "agent-x",
            "--purpose",
            PURPOSE,
            "--store",
            str(workdir / "agent-a" / "memory.db"),
        )
    )
    transcript.note(f"$ engram host init ... -> {profile} (and {other.parent.name}, same store)")
    with StdioClient(["--host-profile", str(profile)], trace=trace) as agent:
        agent.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        captured = _call(agent, "capture", _capture("agent-a.release.capture-1", CITED))
        candidate = captured["output"]["value"]["candidate_id"]
        replay = _call(agent, "capture", _capture("agent-a.release.capture-1", CITED))
        transcript.note(f"same key, same content: {replay['output']['value']['status']}")
        admitted = _call(
            agent,
            "request_admission",
            {"candidate_id": candidate, "idempotency_key": "agent-a.release.admit-1"},
        )
        record = admitted["output"]["value"]["outcome"]["record_id"]
        _call(
            agent,
            "search",
            {"query": "how are release tarballs verified", "purpose_ref": PURPOSE, "limit": 3},
        )
        _call(agent, "get", {"record_id": record, "purpose_ref": PURPOSE})
        with StdioClient(["--host-profile", str(other)], trace=trace) as stranger:
            stranger.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            _call(stranger, "get", {"record_id": record, "purpose_ref": PURPOSE})
            transcript.note("another tenant on the same store: NOT_FOUND, like an unknown id")

        transcript.heading("Withdraw and forget need a human: no dialog here, so the host confirms")
        draft = _call(agent, "capture", _capture("agent-a.draft.capture-1", "A draft to drop."))
        withdraw = {
            "candidate_id": draft["output"]["value"]["candidate_id"],
            "idempotency_key": "agent-a.draft.withdraw-1",
            "reason_ref": "reason:duplicate",
        }
        _call(agent, "withdraw", withdraw)
        _confirm_pending(profile)
        _call(agent, "withdraw", withdraw)
        forget = {
            "record_id": record,
            "idempotency_key": "agent-a.release.forget-1",
            "reason_ref": "reason:superseded",
        }
        _call(agent, "forget", forget)
        _confirm_pending(profile)
        forgotten = _call(agent, "forget", forget)
        value = forgotten["output"]["value"]
        transcript.note(f"projection_invalidation: {value['projection_invalidation']}")
        _call(agent, "get", {"record_id": record, "purpose_ref": PURPOSE})
