"""A governed-memory store in this process's memory, for tests of the domain.

:class:`InMemoryStore` implements :class:`engram.memory.ports.MemoryStore` with Python
dictionaries. It passes the same contract suite as the SQLite and PostgreSQL stores
(``tests/store/contract/``, one suite parametrised over the three), which is what keeps
it honest: a behaviour the suite does not pin down is one a domain test must not rely on.
It ranks like the PostgreSQL store (the same stages of
:func:`engram.search.lexical.search_stages`, BM25 with :func:`engram.search.lexical.idf`
over exact document counts).

Semantics kept from the real stores:

- **Transactions.** One writer at a time (a lock, like PostgreSQL's advisory lock);
  a transaction works on its own copy of the tables and replaces them at the end of the
  block, so a failure leaves nothing behind and a snapshot (:meth:`InMemoryStore.read`)
  never sees a write that is not committed. A write the real stores refuse (a key
  already there) is ``StoreUnavailable``, as they report a driver's error. A write or a
  snapshot opened inside another one on the same thread is refused as SQLite refuses it.
- **Values.** What the real stores keep as JSON text comes back as new objects decoded
  from it (sorted keys where they sort them), never the caller's object.

What it leaves out: durability (``durable`` is accepted and ignored), another process,
an older analyzer's projection (nothing but a test writes one), and what a purge removes
from files (:meth:`InMemoryStore.checkpoint` has nothing to fold). Tests of those stay
on the real stores.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import json
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from engram.errors import StoreUnavailable
from engram.memory.journal import event_digest
from engram.memory.ports import (
    DAY_MS,
    AuditEntry,
    CandidateRow,
    ConfirmationRow,
    Event,
    IdempotencyRow,
    RecordRow,
)
from engram.memory.purge import PurgeFinisher
from engram.testing.memory_reads import (
    RECORD_FIELDS,
    Reads,
    Tables,
    fresh_audit,
    fresh_candidate,
    fresh_confirmation,
)

__all__ = ["InMemoryStore"]

#: The tokens of analyzed text, as FTS5's ``unicode61`` tokenizer splits it.
_TOKEN: Final = re.compile(r"[^\W_]+")
_CANDIDATE_FIELDS: Final = frozenset(field.name for field in dataclasses.fields(CandidateRow))

_Row = TypeVar("_Row")


class _Refused(Exception):
    """A write the real stores' constraints refuse (reported as ``StoreUnavailable``)."""


class _Transaction(Reads):
    """Writes on the transaction's own version of the tables: each table is copied when
    the transaction first changes it (:class:`_Writable`), so a transaction costs what it
    changes, not the size of the store."""

    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)
        self.w = _Writable(tables)

    def prefetch_data_keys(self, owners: Sequence[str]) -> None:
        """Nothing: a transaction reads keys as it goes, so it sees its own writes."""

    # The agent's path.

    def idempotency(
        self, scope_id: str, principal: str, key: str, hashed: bool
    ) -> IdempotencyRow | None:
        row = self.t.idempotency.get((scope_id, principal, key))
        if row is None or row[3] != int(hashed):
            return None
        return IdempotencyRow(row[0], row[1], json.loads(row[2]))

    def remember(self, scope_id: str, principal: str, key: str, row: IdempotencyRow) -> None:
        _insert(
            self.w.idempotency,
            (scope_id, principal, key),
            (row.tool, row.intent_digest, json.dumps(row.outcome), 1),
        )

    def add_candidate(self, row: CandidateRow) -> None:
        _insert(self.w.candidates, row.candidate_id, fresh_candidate(row))

    def update_candidate(self, candidate_id: str, **changes: Any) -> None:
        _known(changes, _CANDIDATE_FIELDS)
        row = self.t.candidates.get(candidate_id)
        if row is not None:
            self.w.candidates[candidate_id] = fresh_candidate(dataclasses.replace(row, **changes))

    def add_record(self, row: RecordRow) -> None:
        if row.record_id in self.t.rowids:
            raise _Refused("record id taken")
        self._insert_record(row)

    def _insert_record(self, row: RecordRow) -> None:
        rowid = self.t.next_rowid
        self.t.next_rowid += 1
        sealed = None if row.sealed is None else bytes(row.sealed)
        self.w.records[rowid] = dataclasses.replace(row, sealed=sealed)
        self.w.rowids[row.record_id] = rowid
        self._count_record(row.scope_id, row.state, row.admitted_ms, +1)

    def update_record(self, record_id: str, **changes: Any) -> None:
        _known(changes, frozenset(RECORD_FIELDS))
        rowid = self.t.rowids.get(record_id)
        if rowid is None:
            return
        before = self.t.records[rowid]
        after = dataclasses.replace(before, **changes)
        if after.record_id != record_id:
            raise _Refused("a record keeps its id")
        self.w.records[rowid] = after
        if "state" in changes and before.state != after.state:
            self._count_record(before.scope_id, before.state, before.admitted_ms, -1)
            self._count_record(before.scope_id, after.state, before.admitted_ms, +1)

    def _count_record(self, scope_id: str, state: str, admitted_ms: int, change: int) -> None:
        key = (scope_id, state, admitted_ms // DAY_MS)
        self.w.record_days[key] = self.t.record_days.get(key, 0) + change

    def record_with_payload(
        self,
        scope_id: str,
        payload_digest: str,
        states: Sequence[str],
        unexpired_at: int | None = None,
    ) -> str | None:
        return self._first_with_payload(scope_id, payload_digest, states, unexpired_at)

    def put_data_key(self, owner: str, scope_id: str, kek_id: str, wrapped: bytes) -> None:
        self.w.data_keys[owner] = (scope_id, kek_id, bytes(wrapped))

    def delete_data_key(self, owner: str) -> None:
        self.w.data_keys.pop(owner, None)

    def append_event(self, scope_id: str, body: dict[str, Any], touches_records: bool) -> Event:
        head = self.head(scope_id)
        cursor = head.cursor + 1
        digest = event_digest(scope_id, cursor, head.event_digest, body)
        self._insert_event(scope_id, cursor, digest, head.event_digest, body)
        state = self.t.scope_state.get(scope_id)
        if state is None:
            version = cursor if touches_records else 0
        else:
            version = cursor if touches_records else state[2]
        self.w.scope_state[scope_id] = (cursor, digest, version)
        return Event(cursor, digest)

    def _insert_event(
        self, scope_id: str, cursor: int, digest: str, previous: str, body: dict[str, Any]
    ) -> None:
        target = body.get("target")
        _insert(
            self.w.journal,
            (scope_id, cursor),
            (
                digest,
                previous,
                json.dumps(body, sort_keys=True),
                None if target is None else str(target),
            ),
        )
        at = body.get("at")
        if isinstance(at, int) and not isinstance(at, bool):
            key = (
                scope_id,
                at // DAY_MS,
                str(body.get("operation", "")),
                str(body.get("to_state") or ""),
            )
            self.w.activity[key] = self.t.activity.get(key, 0) + 1

    def audit(self, entry: AuditEntry, if_absent: bool = False) -> None:
        if entry.audit_id in self.t.audit:
            if if_absent:
                return
            raise _Refused("audit id taken")
        self.w.audit[entry.audit_id] = (self.t.next_audit, fresh_audit(entry))
        self.t.next_audit += 1

    def add_confirmation(self, row: ConfirmationRow) -> None:
        _insert(self.w.confirmations, row.request_id, fresh_confirmation(row))

    def live_approval(
        self,
        scope_id: str,
        principal: str,
        tool: str,
        target: str,
        operation_digest: str,
        approved_since_ms: int,
    ) -> ConfirmationRow | None:
        found = sorted(
            (
                row
                for row in self.t.confirmations.values()
                if (row.scope_id, row.principal, row.tool, row.target, row.operation_digest)
                == (scope_id, principal, tool, target, operation_digest)
                and row.approved_ms is not None
                and row.approved_ms >= approved_since_ms
                and row.consumed_ms is None
            ),
            key=lambda row: (row.approved_ms or 0, row.request_id),
        )
        return fresh_confirmation(found[0]) if found else None

    def consume_confirmation(self, request_id: str, now_ms: int) -> None:
        row = self.t.confirmations.get(request_id)
        if row is not None and row.consumed_ms is None:
            self.w.confirmations[request_id] = dataclasses.replace(row, consumed_ms=now_ms)

    def open_request_exists(
        self, scope_id: str, principal: str, operation_digest: str, created_since_ms: int
    ) -> bool:
        return any(
            (row.scope_id, row.principal, row.operation_digest)
            == (scope_id, principal, operation_digest)
            and row.created_ms >= created_since_ms
            and (row.consumed_ms is None or row.approved_ms is None)
            for row in self.t.confirmations.values()
        )

    def open_requests(self, scope_id: str, principal: str, created_since_ms: int) -> int:
        return sum(
            1
            for row in self.t.confirmations.values()
            if (row.scope_id, row.principal) == (scope_id, principal)
            and row.created_ms >= created_since_ms
            and row.approved_ms is None
            and row.consumed_ms is None
        )

    def add_purge(self, scope_id: str, owner: str, kind: str, now_ms: int) -> None:
        self.w.purges.setdefault(owner, (scope_id, kind, now_ms, None))

    # The projections.

    def index(self, scope_id: str, record_id: str, text: str) -> None:
        rowid = self.t.rowids.get(record_id)
        if rowid is None:
            return
        words = _TOKEN.findall(text)
        _insert(
            self.w.documents,
            (scope_id, self.tag, rowid),
            (len(words), dict(collections.Counter(words))),
        )
        self._count_size(scope_id, self.tag, 1, len(words))

    def _count_size(self, scope_id: str, tag: str, documents: int, tokens: int) -> None:
        size = self.t.sizes.get((scope_id, tag), (0, 0))
        self.w.sizes[(scope_id, tag)] = (size[0] + documents, size[1] + tokens)

    def unindex(self, scope_id: str, record_id: str, text: str) -> None:
        rowid = self.t.rowids.get(record_id)
        if rowid is None:
            return
        for vector in [key for key in self.t.vectors if key[0] == rowid]:
            self._drop_vector(vector)
        for document in [k for k in self.t.documents if k[0] == scope_id and k[2] == rowid]:
            length, _ = self.w.documents.pop(document)
            self._count_size(scope_id, document[1], -1, -length)

    def _drop_vector(self, key: tuple[int, str]) -> None:
        scope, _ = self.w.vectors.pop(key)
        version = self.t.vector_versions.get((scope, key[1]))
        if version is not None:
            self.w.vector_versions[(scope, key[1])] = (version[0] - 1, version[1], version[2] + 1)

    def put_vector(self, scope_id: str, rowid: int, model: str, vector: bytes) -> None:
        if (scope_id, self.tag, rowid) not in self.t.documents:
            return
        version = self.t.vector_versions.get((scope_id, model))
        if (rowid, model) in self.t.vectors:
            scope = self.t.vectors[(rowid, model)][0]
            self.w.vectors[(rowid, model)] = (scope, bytes(vector))
            updated = self.t.vector_versions.get((scope, model))
            if updated is not None:
                self.w.vector_versions[(scope, model)] = (*updated[:2], updated[2] + 1)
            return
        self.w.vectors[(rowid, model)] = (scope_id, bytes(vector))
        self.w.vector_versions[(scope_id, model)] = (
            (1, rowid, 1)
            if version is None
            else (version[0] + 1, max(version[1], rowid), version[2] + 1)
        )

    def drop_other_vectors(self, scope_id: str, model: str) -> None:
        for key, (scope, _) in list(self.t.vectors.items()):
            if scope == scope_id and key[1] != model:
                self._drop_vector(key)
        for scope, kind in list(self.t.vector_versions):
            if scope == scope_id and kind != model:
                del self.w.vector_versions[(scope, kind)]

    def legacy_indexed(self, scope_id: str) -> list[RecordRow]:
        rowids = {
            rowid
            for scope, analyzer, rowid in self.t.documents
            if scope == scope_id and analyzer != self.tag
        }
        found = self.records_by_rowid(scope_id, sorted(rowids))
        return [found[rowid] for rowid in sorted(found)]

    def drop_legacy_index(self, scope_id: str) -> None:
        for document in [k for k in self.t.documents if k[0] == scope_id and k[1] != self.tag]:
            del self.w.documents[document]
        for size in [k for k in self.t.sizes if k[0] == scope_id and k[1] != self.tag]:
            del self.w.sizes[size]

    # The operator.

    def approve_confirmation(self, request_id: str, now_ms: int) -> None:
        row = self.t.confirmations.get(request_id)
        if row is not None:
            self.w.confirmations[request_id] = dataclasses.replace(row, approved_ms=now_ms)

    def revoke(self, scope_id: str, principal: str, now_ms: int) -> None:
        self.w.revocations[(scope_id, principal)] = now_ms

    # Purges, restores and key rotation.

    def purge_index(self, scope_id: str) -> None:
        """Nothing to merge: a dictionary keeps no deleted entries."""

    def mark_purged(self, owner: str, now_ms: int) -> None:
        row = self.t.purges.get(owner)
        if row is not None:
            self.w.purges[owner] = (*row[:3], now_ms)

    def import_rows(self, rows: dict[str, Any]) -> None:
        for record in rows["records"]:
            row = RecordRow(**{name: record[name] for name in RECORD_FIELDS})
            self.add_record(row)
            if record["wrapped_key"] is not None:
                kek_id, wrapped = record["wrapped_key"]
                self.put_data_key(row.record_id, row.scope_id, kek_id, wrapped)
        for e in rows["journal"]:
            self._insert_event(
                e["scope_id"], e["cursor"], e["event_digest"], e["previous"], e["body"]
            )
        for s in rows["scope_state"]:
            _insert(
                self.w.scope_state,
                s["scope_id"],
                (s["head_cursor"], s["head_digest"], s["records_version"]),
            )
        for i in rows.get("idempotency", []):
            _insert(
                self.w.idempotency,
                (i["scope_id"], i["principal"], i["key"]),
                (i["tool"], i["intent_digest"], json.dumps(i["outcome"]), i.get("hashed", 0)),
            )
        for r in rows.get("revocations", []):
            _insert(self.w.revocations, (r["scope_id"], r["principal"]), r["revoked_ms"])
        for a in rows["audit"]:
            self.audit(
                AuditEntry(
                    a["audit_id"],
                    a["scope_id"],
                    a["at_ms"],
                    a["tool"],
                    a["outcome"],
                    a["identity"],
                    a["digests"],
                )
            )

    def clear_idempotency_keys(self) -> list[tuple[str, str, str]]:
        return sorted(key for key, row in self.t.idempotency.items() if row[3] == 0)

    def hash_idempotency_key(self, scope_id: str, principal: str, key: str, hashed: str) -> None:
        row = self.t.idempotency.get((scope_id, principal, key))
        if row is None or row[3] != 0:
            return
        del self.w.idempotency[(scope_id, principal, key)]
        _insert(self.w.idempotency, (scope_id, principal, hashed), (*row[:3], 1))

    def data_keys_not_under(self, kek_id: str, limit: int) -> list[tuple[str, str, bytes]]:
        found = sorted(
            (owner, kek, wrapped)
            for owner, (_, kek, wrapped) in self.t.data_keys.items()
            if kek != kek_id
        )
        return found[:limit]

    def set_data_key(self, owner: str, kek_id: str, wrapped: bytes) -> None:
        row = self.t.data_keys.get(owner)
        if row is not None:
            self.w.data_keys[owner] = (row[0], kek_id, bytes(wrapped))


class _Writable:
    """The tables of a transaction, for changing: a table is copied on its first change
    (until then it is the committed one, which no transaction changes)."""

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._copied: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        table = getattr(self._tables, name)
        if name not in self._copied:
            table = dict(table)
            setattr(self._tables, name, table)
            self._copied.add(name)
        return table


class _Nesting(threading.local):
    reading = False
    writing = False


class InMemoryStore(PurgeFinisher):
    """A governed-memory store in this process's memory (see the module)."""

    def __init__(self) -> None:
        self._tables = Tables()
        self._lock = threading.Lock()
        self._nesting = _Nesting()
        self._closed = False

    @contextmanager
    def read(self) -> Iterator[Reads]:
        self._refuse_nesting()
        self._nesting.reading = True
        try:
            yield Reads(self._tables)
        finally:
            self._nesting.reading = False

    @contextmanager
    def write(self, durable: bool = True) -> Iterator[_Transaction]:
        self._refuse_nesting()
        with self._lock:
            self._nesting.writing = True
            try:
                tx = _Transaction(copy.copy(self._tables))
                try:
                    yield tx
                except _Refused as refused:
                    raise StoreUnavailable("store write failed") from refused
                self._tables = tx.t
            finally:
                self._nesting.writing = False

    def _refuse_nesting(self) -> None:
        if self._closed:
            raise StoreUnavailable("store closed")
        if self._nesting.reading:
            raise StoreUnavailable("the store is in a read snapshot")
        if self._nesting.writing:
            raise StoreUnavailable("the store is in a write transaction")

    def checkpoint(self) -> bool:
        """Nothing to fold: no file keeps a deleted row."""
        self._refuse_nesting()
        return True

    def close(self) -> None:
        self._closed = True


def _insert(table: dict[Any, _Row], key: Any, row: _Row) -> None:
    if key in table:
        raise _Refused("key taken")
    table[key] = row


def _known(changes: dict[str, Any], fields: frozenset[str]) -> None:
    unknown = set(changes) - fields
    if unknown:
        raise _Refused(f"no such column: {sorted(unknown)}")
