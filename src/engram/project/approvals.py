"""Approval tokens: proof that a proposal exists, kept as a hash in pending-approvals.json.

A token is 192 random bits (URL-safe text), shown once to the agent. The file (which
Git ignores) stores only its SHA-256, the workspace it is bound to, the proposal's
exact candidates with their frozen verdicts, and a digest over them, so a pending
candidate edited in the file fails the integrity check. A token expires after 30
minutes and works once; a proposal the human declined in the dialog keeps its entry,
so a later commit with its token is told why it fails. The token proves a proposal
exists, not that a human approved it: the host's permission prompt on
``engram_commit`` (or the dialog) is the human gate.

The entry also keeps the proposal's query level, inside the digest, so the commit
recomputes verdicts at the depth they were shown with. An entry written before the
level was stored has no key and means the default level.

And it keeps who proposed (:class:`Proposer`: the MCP client as it named itself, the
server's session, the agent id of the host profile binding it), inside the digest too,
for the person who reviews it. An entry written before engram recorded it has none, and
reads as a proposer nobody recorded.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engram.canonical import digest
from engram.durable import explained, write_atomic
from engram.errors import ApprovalDeclined, ApprovalError, ApprovalTampered
from engram.project.proposals import DEFAULT_QUERY_LEVEL

__all__ = [
    "TOKEN_TTL_MS",
    "ApprovalDeclined",
    "ApprovalError",
    "ApprovalTampered",
    "Pending",
    "Proposals",
    "Proposer",
    "Waiting",
]

TOKEN_TTL_MS: Final = 30 * 60 * 1000
#: What the integrity digest covers (``query_level`` and ``proposer`` only when the entry
#: has them: an older engram wrote neither).
_DIGESTED: Final = (
    "workspace",
    "kind",
    "scope",
    "candidates",
    "verdicts",
    "query_level",
    "proposer",
)


@dataclass(frozen=True)
class Pending:
    """A stored proposal."""

    kind: str
    candidates: list[dict[str, Any]]
    verdicts: list[dict[str, str]]
    scope: str
    query_level: int = DEFAULT_QUERY_LEVEL


@dataclass(frozen=True)
class Proposer:
    """Who proposed, as the server knew it when the proposal was made, never what the
    proposal itself says: the MCP client's name, title and version as the client gave
    them (``clientInfo``, unverified: any program can call itself anything), the
    ``engram-mcp`` process's session, and the agent id of the host profile binding that
    server. An empty field is unknown; all are empty for an entry an older engram wrote."""

    client: str = ""
    title: str = ""
    version: str = ""
    session: str = ""
    agent: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "agent": self.agent,
            "client": self.client,
            "session": self.session,
            "title": self.title,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: Any) -> Proposer:
        """The proposer an entry records (unknown where it records none)."""
        if not isinstance(data, dict):
            return cls()
        return cls(
            **{
                key: value
                for key in ("client", "title", "version", "session", "agent")
                if isinstance(value := data.get(key), str)
            }
        )

    @property
    def known(self) -> bool:
        return any(self.to_json().values())


@dataclass(frozen=True)
class Waiting:
    """A proposal waiting for a person, as the review console lists it: its id (the
    SHA-256 of its token, never the token), the digest an approval is bound to, and who
    proposed it."""

    proposal_id: str
    digest: str
    pending: Pending
    created_ms: int
    expires_ms: int
    proposer: Proposer = Proposer()


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


#: What to do about an unreadable pending-approvals.json: it holds only proposals.
_REMEDY = (
    ": delete it (it holds only proposals not yet approved, which the agent can propose"
    " again; no memory is lost)"
)


class Proposals:
    """The pending proposals of one workspace."""

    def __init__(self, path: Path, workspace: str, clock: Callable[[], int] | None = None) -> None:
        self.path = path
        self.workspace = hashlib.sha256(workspace.encode("utf-8")).hexdigest()
        self._now = clock or (lambda: int(time.time() * 1000))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        lock_path = self.path.with_name(self.path.name + ".lock")
        with explained(lock_path.parent):
            lock = lock_path.open("a")
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            yield data
            data["proposals"] = {
                key: entry
                for key, entry in data["proposals"].items()
                if entry["expires_ms"] > self._now()
            }
            write_atomic(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"version": 1, "proposals": {}}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ApprovalTampered(f"{self.path} does not parse{_REMEDY}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("proposals"), dict):
            raise ApprovalTampered(f"{self.path} has an unexpected shape{_REMEDY}")
        return data

    def create(self, pending: Pending, *, by: Proposer, state: str = "pending") -> str:
        """Store a proposal and who made it; the token (the only time it exists in the
        clear)."""
        token = secrets.token_urlsafe(24)
        entry = {
            "workspace": self.workspace,
            "kind": pending.kind,
            "scope": pending.scope,
            "candidates": pending.candidates,
            "verdicts": pending.verdicts,
            "query_level": pending.query_level,
            "proposer": by.to_json(),
            "state": state,
            "created_ms": self._now(),
            "expires_ms": self._now() + TOKEN_TTL_MS,
        }
        entry["candidates_digest"] = self._digest(entry)
        with self._locked() as data:
            data["proposals"][_hash(token)] = entry
        return token

    @staticmethod
    def _digest(entry: dict[str, Any]) -> str:
        return digest("proposal", {key: entry[key] for key in _DIGESTED if key in entry})

    def take(self, token: str, check: Callable[[Pending], None] | None = None) -> Pending:
        """Use a token once: the proposal it proves, or why it cannot be used.

        ``check`` may refuse the use before the token is spent.
        """
        return self._use(_hash(token), None, "used", check)

    def waiting(self) -> list[Waiting]:
        """The proposals of this workspace still waiting, oldest first (the review
        console's list; an edited entry is left out, as a commit would refuse it)."""
        now, found = self._now(), []
        for key, entry in self._read()["proposals"].items():
            if entry.get("workspace") != self.workspace or entry.get("state") != "pending":
                continue
            level = entry.get("query_level", DEFAULT_QUERY_LEVEL)
            if entry["expires_ms"] <= now or not _positive(level):
                continue
            if entry.get("candidates_digest") != self._digest(entry):
                continue
            pending = Pending(
                entry["kind"], entry["candidates"], entry["verdicts"], entry["scope"], level
            )
            found.append(
                Waiting(
                    key,
                    entry["candidates_digest"],
                    pending,
                    entry["created_ms"],
                    entry["expires_ms"],
                    Proposer.from_json(entry.get("proposer")),
                )
            )
        return sorted(found, key=lambda waiting: (waiting.created_ms, waiting.proposal_id))

    def review(
        self,
        proposal_id: str,
        digest: str,
        approve: bool,
        check: Callable[[Pending], None] | None = None,
    ) -> Pending:
        """A person's answer in the review console: the proposal ``proposal_id`` (see
        :meth:`waiting`), once, and only while its candidates still have ``digest``.
        Approving spends it as a commit would; declining keeps it as declined, so the
        agent's later ``engram_commit`` is told why it fails."""
        return self._use(proposal_id, digest, "used" if approve else "declined", check)

    def _use(
        self,
        key: str,
        digest: str | None,
        state: str,
        check: Callable[[Pending], None] | None,
    ) -> Pending:
        with self._locked() as data:
            entry = data["proposals"].get(key)
            if entry is None or entry["expires_ms"] <= self._now():
                raise ApprovalError("unknown, expired or already used approval_token")
            if entry.get("workspace") != self.workspace:
                raise ApprovalError("approval_token belongs to another workspace")
            if entry.get("state") == "declined":
                raise ApprovalDeclined("approval was declined in the approval dialog")
            if entry.get("state") != "pending":
                raise ApprovalError("approval_token was already used")
            level = entry.get("query_level", DEFAULT_QUERY_LEVEL)
            if entry.get("candidates_digest") != self._digest(entry) or not _positive(level):
                raise ApprovalTampered("the pending candidates were edited; propose again")
            if digest is not None and digest != entry["candidates_digest"]:
                raise ApprovalTampered("the proposal changed since it was shown; reload the page")
            pending = Pending(
                entry["kind"], entry["candidates"], entry["verdicts"], entry["scope"], level
            )
            if check is not None:
                check(pending)
            entry["state"] = state
        return pending
