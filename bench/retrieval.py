"""Retrieval quality through the real engine, with a plain FTS5 BM25 baseline in the same run.

usage: .venv/bin/python bench/retrieval.py [--locomo DIR] [--as-said] [--no-coding] [--record]

Sets:
- LoCoMo (``--locomo ../shared/datasets/locomo-dev``, read from there, never copied): every
  turn of a conversation is one memory (each conversation its own scope), captured as an
  agent keeping a conversation would: what was said, and a second component with the
  session's date and the turn it replies to (``--as-said``: what was said only); questions
  of categories 1-4 are scored at turn level against their evidence turns.
- The coding-agent set (``bench/coding_set.py``, generated): decisions, conventions and
  pitfalls with citations in English, French, German and Portuguese; paraphrased and
  identifier questions, questions about things never stored, superseded and forgotten
  memories that must not come back. Scored per language (``coding_<language>``) and across
  languages (``coding_across``: the memories of one language asked about in each of the
  three others, the twelve pairs pooled).

Faces:
- ``governed``: capture, admission and ``search`` through a :class:`MemoryEngine` on a real
  SQLite store (one scope per corpus); superseded records are moved to ``historical`` and
  forgotten ones forgotten, as a host would.
- ``project``: one memory file per memory in a fresh project, ``engram search`` through
  :class:`ProjectMemory`; a superseded memory carries ``lifecycle: superseded`` and
  ``superseded_by`` (as a SUPERSEDE commit leaves it), a forgotten one is deleted.
- ``bm25``: the baseline, a plain SQLite FTS5 table (``porter unicode61``) over the same
  texts, the question's words OR-ed, ranked by ``bm25()``.

Reported per set and face: Recall@5, Recall@10, MRR, nDCG@10 overall and per category, how
many questions about nothing stored returned anything, search latency p50/p95 and the bytes
returned. ``--record`` writes them to bench/results.json (``retrieval``, or
``retrieval_turns_as_said`` with ``--as-said``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary
from scoring import Judged, judge, summarize

from engram.crypto.keyfiles import create_keyring
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.project.workspace import ProjectMemory
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import DIGEST, PURPOSE, Clock, binding

#: The engine's clock during a run: after every dated memory of the sets.
NOW = int(dt.datetime(2027, 1, 15, tzinfo=dt.UTC).timestamp() * 1000)
DAY = 86_400_000
LIMIT = 10
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LANGUAGES = ("en", "fr", "de", "pt")


@dataclass(frozen=True)
class Document:
    """One memory: its text, when it was true, and what it was said in reply to."""

    key: str
    text: str
    title: str = ""
    at_ms: int = NOW - DAY
    context: str = ""
    state: str = "current"  # or "superseded" / "forgotten": stored, then retired
    replaced_by: str = ""  # a superseded document's replacement (its key)


@dataclass(frozen=True)
class Query:
    text: str
    relevant: frozenset[str]
    category: str


@dataclass
class Corpus:
    name: str
    documents: list[Document]
    queries: list[Query]


@dataclass
class Outcome:
    judged: list[Judged] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    returned_bytes: list[float] = field(default_factory=list)
    #: For each question about nothing stored, whether ``engram load`` selected anything.
    loads_about_nothing: list[bool] = field(default_factory=list)


Searcher = Callable[[str], tuple[list[str], int]]


# --- sets ------------------------------------------------------------------------------


def _locomo_time(text: str) -> int:
    """LoCoMo's "1:56 pm on 8 May, 2023"."""
    parsed = dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def locomo(directory: Path, context: bool = False) -> Iterator[Corpus]:
    """One corpus per conversation file; ``context`` adds each turn's session date and the
    turn it replies to (as a second component of the capture)."""
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text())
        documents: list[Document] = []
        sessions = sorted(
            (int(match.group(1)), value)
            for name, value in data.items()
            if (match := re.fullmatch(r"session_(\d+)", name)) and isinstance(value, list)
        )
        for number, turns in sessions:
            when = data[f"session_{number}_date_time"]
            at = _locomo_time(when)
            previous = ""
            for turn in turns:
                said = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    said += f" [shares a photo: {turn['blip_caption']}]"
                around = f"On {when}." + (f" In reply to {previous}" if previous else "")
                documents.append(
                    Document(turn["dia_id"], said, at_ms=at, context=around if context else "")
                )
                previous = said
        queries = [
            Query(str(qa["question"]), frozenset(qa["evidence"]), LOCOMO_CATEGORIES[qa["category"]])
            for qa in data["qa"]
            if qa["category"] in LOCOMO_CATEGORIES and qa.get("evidence")
        ]
        yield Corpus(f"locomo/{path.stem}", documents, queries)


def _cited(text: str, citation: str) -> str:
    """The memory as an agent writes it: with its citation, once."""
    return text if citation in text else f"{text} ({citation})"


def coding(language: str, asked_in: str | None = None) -> Corpus:
    """The coding-agent set in one language: its memories, and its questions in that
    language or, with ``asked_in``, in another one."""
    import coding_set

    asked_in = asked_in or language
    built = coding_set.build()
    documents = [
        Document(
            item.concept,
            _cited(item.text, item.citation),
            item.title,
            state=item.state,
            replaced_by=item.superseded_by or "",
        )
        for item in built.items
        if item.language == language
    ]
    queries = [
        Query(question.text, frozenset(question.relevant), question.category)
        for question in built.questions
        if question.language == asked_in
    ]
    name = language if asked_in == language else f"{language}, asked in {asked_in}"
    return Corpus(f"coding/{name}", documents, queries)


# --- faces -------------------------------------------------------------------------------


def governed(corpus: Corpus, work: Path, semantic: bool = False) -> Searcher:
    """Capture and admit every document into a fresh store; search through the engine
    (lexical only, or with the semantic projection built)."""
    from engram.search.embedding import load_embedder

    clock = Clock(NOW)
    store = SqliteMemoryStore(work / "memory.db", "normal")
    embedder = load_embedder() if semantic else None
    if semantic and embedder is None:
        raise SystemExit("the hybrid face needs the semantic extra: pip install '.[semantic]'")
    keyring = create_keyring(work / "memory.db.keys")
    engine = MemoryEngine(store, keyring, clock=clock, embedder=embedder)
    who = binding(tenant="bench", workspace=corpus.name)
    keys: dict[str, str] = {}
    for number, document in enumerate(corpus.documents):
        record_id = _admit(engine, who, document, number)
        keys[record_id] = document.key
        if document.state == "superseded":
            Maintenance(engine, who.scope).transition(record_id, "supersede")
        elif document.state == "forgotten":
            arguments = {
                "record_id": record_id,
                "idempotency_key": f"bench.{number:06d}.forget",
                "reason_ref": "reason:obsolete",
            }
            forgotten = engine.call("forget", arguments, who, lambda operation: True)
            assert forgotten["ok"], forgotten
    engine.refresh_semantic(who.scope)

    def search(query: str) -> tuple[list[str], int]:
        arguments = {"query": query, "purpose_ref": PURPOSE, "limit": LIMIT}
        envelope = engine.call("search", arguments, who)
        assert envelope["ok"], envelope
        records = envelope["output"]["value"]["records"]
        size = len(json.dumps(envelope, ensure_ascii=False).encode())
        return [keys[packet["record"]["record_id"]] for packet in records], size

    return search


def _admit(engine: MemoryEngine, who: Binding, document: Document, number: int) -> str:
    components = [
        {"component_id": "c1", "kind": "evidence", "text": document.text, "citation_ids": ["s"]}
    ]
    if document.context:
        context = {"component_id": "c2", "kind": "context", "text": document.context}
        components.append({**context, "citation_ids": ["s"]})
    payload = {
        "schema_version": 2,
        "purpose_ref": PURPOSE,
        "valid_time": {"t": document.at_ms},
        "components": components,
        "primary_component_id": "c1",
        "primary_event": {"at": document.at_ms, "type_ref": "said", "citation_id": "s"},
        "citations": [
            {
                "citation_id": "s",
                "source_ref": "bench:" + document.key,
                "locator": {"scheme": "uri", "value": "bench:" + document.key},
                "content_digest": DIGEST,
            }
        ],
    }
    arguments = {
        "idempotency_key": f"bench.{number:06d}.capture",
        "payload": payload,
        "evidence": {"evidence_ref": "ev:bench", "evidence_digest": DIGEST, "citation_ids": ["s"]},
    }
    captured = engine.call("capture", arguments, who)
    assert captured["ok"], captured
    admission = {
        "candidate_id": captured["output"]["value"]["candidate_id"],
        "idempotency_key": f"bench.{number:06d}.admission",
    }
    admitted = engine.call("request_admission", admission, who)
    outcome = admitted["output"]["value"]["outcome"]
    assert outcome["status"] == "accepted", outcome
    return str(outcome["record_id"])


def project(corpus: Corpus, work: Path, semantic: bool = False) -> Searcher:
    """One memory file per document in a fresh project; ``engram search`` (lexical only,
    or with the project's vectors built)."""
    from engram.compose import open_project
    from engram.project.layout import init_layout
    from engram.project.memory_file import FOLDERS, Memory, render_memory

    layout = init_layout(work / "repo")[0]
    ids: dict[str, str] = {}
    current = {d.key: f"m{n:05d}" for n, d in enumerate(corpus.documents) if d.state == "current"}
    for number, document in enumerate(corpus.documents):
        if document.state == "forgotten":
            continue  # deleted by the person who wrote it
        memory_id = f"m{number:05d}"
        ids[memory_id] = document.key
        title = document.title or document.text[:60]
        body = f"# {title}\n\n## Content\n- {document.text}\n"
        if document.context:
            body += f"- Context: {document.context}\n"
        fields: dict[str, str | int | list[str]] = {
            "created": "2026-01-01",
            "updated": "2026-01-01",
        }
        if document.state == "superseded":  # as a SUPERSEDE commit leaves it
            fields["lifecycle"] = "superseded"
            if document.replaced_by in current:
                fields["superseded_by"] = current[document.replaced_by]
        written = Memory(memory_id, "knowledge", "workspace", title, body, fields)
        path = layout.folder(FOLDERS["knowledge"]) / f"{memory_id}.md"
        path.write_text(render_memory(written), encoding="utf-8")
    opened = open_project(layout.root, global_dir=work / "global", semantic=semantic)
    if semantic:
        from engram.search.embedding import load_embedder

        embedder = load_embedder()
        if embedder is None or opened.vectors is None:
            raise SystemExit("the hybrid faces need the semantic extra: pip install '.[semantic]'")
        opened.refresh()
        opened.vectors.build(embedder)

    return ProjectSearch(opened, ids)


class ProjectSearch:
    """``engram search`` over a project, and ``engram load`` for the same question."""

    def __init__(self, opened: ProjectMemory, ids: dict[str, str]) -> None:
        self.opened, self.ids = opened, ids

    def __call__(self, query: str) -> tuple[list[str], int]:
        entries = self.opened.search(query, LIMIT).entries
        size = len(json.dumps(entries, ensure_ascii=False).encode())
        return [self.ids[entry["id"]] for entry in entries], size

    def load(self, query: str) -> list[str]:
        """The memories ``engram load`` selects for the question."""
        return [self.ids[key] for key in self.opened.load(query).selected_keys]


def bm25(corpus: Corpus, work: Path) -> Searcher:
    """The baseline: SQLite FTS5 (porter unicode61) over the same texts (with their context,
    when captured with it), question words OR-ed."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(key UNINDEXED, text, tokenize='porter unicode61')"
    )
    db.executemany(
        "INSERT INTO t VALUES (?, ?)",
        [
            (d.key, f"{d.text} {d.context}" if d.context else d.text)
            for d in corpus.documents
            if d.state == "current"
        ],
    )

    def search(query: str) -> tuple[list[str], int]:
        words = re.findall(r"\w+", query.lower())
        if not words:
            return [], 0
        expression = " OR ".join(f'"{word}"' for word in words)
        rows = db.execute(
            "SELECT key FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expression, LIMIT)
        ).fetchall()
        return [row[0] for row in rows], len(json.dumps(rows).encode())

    return search


def hybrid(corpus: Corpus, work: Path) -> Searcher:
    """Governed memory with its semantic projection: both channels, fused."""
    return governed(corpus, work, semantic=True)


def project_hybrid(corpus: Corpus, work: Path) -> Searcher:
    """Project memory with its vectors: ``engram search`` with both channels, fused."""
    return project(corpus, work, semantic=True)


FACES: dict[str, Callable[[Corpus, Path], Searcher]] = {
    "bm25": bm25,
    "governed": governed,
    "hybrid": hybrid,
    "project": project,
    "project-hybrid": project_hybrid,
}


# --- the run -------------------------------------------------------------------------------


def run(corpus: Corpus, face: str, outcome: Outcome) -> None:
    with tempfile.TemporaryDirectory(prefix="engram-retrieval-") as work:
        search = FACES[face](corpus, Path(work))
        for query in corpus.queries:
            started = time.perf_counter()
            ranked, size = search(query.text)
            outcome.latency_ms.append((time.perf_counter() - started) * 1000)
            outcome.returned_bytes.append(size)
            outcome.judged.append(judge(query.relevant, ranked, query.category))
            load = getattr(search, "load", None)
            if load is not None and not query.relevant:
                outcome.loads_about_nothing.append(bool(load(query.text)))


def report(outcome: Outcome) -> dict[str, Any]:
    latency = summary(outcome.latency_ms)
    size = summary(outcome.returned_bytes)
    loads = {"load_negatives_answered": sum(outcome.loads_about_nothing)}
    return {
        **summarize(outcome.judged),
        **(loads if outcome.loads_about_nothing else {}),
        "latency_p50_ms": latency["p50_ms"],
        "latency_p95_ms": latency["p95_ms"],
        "returned_bytes_p50": size["p50_ms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path, help="the LoCoMo conversations (a folder)")
    parser.add_argument("--no-coding", action="store_true", help="skip the coding-agent set")
    parser.add_argument("--faces", nargs="+", default=list(FACES), choices=list(FACES))
    parser.add_argument(
        "--as-said",
        action="store_true",
        help="capture each LoCoMo turn as said, without its session date and the turn it answers",
    )
    parser.add_argument("--record", action="store_true", help="write bench/results.json")
    options = parser.parse_args()
    sets: dict[str, list[Corpus]] = {}
    if options.locomo:
        sets["locomo"] = list(locomo(options.locomo, context=not options.as_said))
    if not options.no_coding:
        for language in LANGUAGES:
            sets[f"coding_{language}"] = [coding(language)]
        # Memories in one language, questions in each of the others: the 12 pairs pooled.
        sets["coding_across"] = [
            coding(stored, asked) for stored in LANGUAGES for asked in LANGUAGES if asked != stored
        ]
    figures: dict[str, Any] = {}
    for name, corpora in sets.items():
        for face in options.faces:
            if name == "locomo" and face.startswith("project"):
                continue  # conversations are governed memory's kind of material
            outcome = Outcome()
            for corpus in corpora:
                run(corpus, face, outcome)
            figures.setdefault(name, {})[face] = report(outcome)
            shown = figures[name][face]
            print(
                f"{name:10} {face:14} R@5 {shown.get('recall_5', '-')!s:6} "
                f"R@10 {shown.get('recall_10', '-')!s:6} MRR {shown.get('mrr', '-')!s:6} "
                f"neg {shown.get('negatives_answered', '-')}/{shown.get('negatives', '-')} "
                f"load neg {shown.get('load_negatives_answered', '-')} "
                f"p50 {shown['latency_p50_ms']} ms",
                flush=True,
            )
    if options.record:
        record("retrieval_turns_as_said" if options.as_said else "retrieval", figures)


if __name__ == "__main__":
    main()
