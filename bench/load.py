"""What ``engram load`` puts into an agent's context: precision of the loaded memories.

usage: .venv/bin/python bench/load.py [--faces project project-hybrid] [--record]

For every task of a set, ``engram load`` (:meth:`ProjectMemory.load`, the project's real
routing) selects memories; each task is scored against the memories it expects:

- ``precision``: of all the memories loaded for answerable tasks, the share that are
  expected (pooled over tasks: a task that loads eight memories counts eight times);
- ``found``: the share of answerable tasks whose expected memory is loaded (any of them,
  when a task expects several);
- ``silent``: the share of tasks about nothing stored (never stored, or forgotten) that
  load nothing;
- ``loaded_mean``: memories loaded per answerable task.

Sets: the coding-agent set (``bench/coding_set.py``), one project per language, and the set
of real-repository style (``bench/repo_set.py``), one project per project. Targets (issue
28): precision >= 0.5 with found >= 0.9, and silent >= 0.5, on both sets. ``--record``
writes the figures to bench/results.json (``load_precision``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record
from retrieval import LANGUAGES, Corpus, Document, ProjectSearch, Query, coding, project


def repo_corpora() -> Iterator[Corpus]:
    """The set of real-repository style, one corpus per project."""
    import repo_set

    built = repo_set.build()
    for name in (p.name for p in repo_set.PROJECTS):
        documents = [Document(m.key, m.text, m.title) for m in built.memories if m.project == name]
        queries = [
            Query(q.text, frozenset(q.expected), q.category)
            for q in built.questions
            if q.project == name
        ]
        yield Corpus(f"repo/{name}", documents, queries)


def coding_corpora() -> Iterator[Corpus]:
    for language in LANGUAGES:
        yield coding(language)


@dataclass
class Tally:
    loaded: int = 0
    loaded_expected: int = 0
    answerable: int = 0
    found: int = 0
    negatives: int = 0
    silent: int = 0
    per_task: list[dict[str, Any]] = field(default_factory=list)

    def add(self, query: Query, selected: list[str]) -> None:
        if query.relevant:
            self.answerable += 1
            self.loaded += len(selected)
            self.loaded_expected += sum(1 for key in selected if key in query.relevant)
            self.found += bool(query.relevant & set(selected))
        else:
            self.negatives += 1
            self.silent += not selected

    def figures(self) -> dict[str, Any]:
        return {
            "answerable": self.answerable,
            "negatives": self.negatives,
            "precision": round(self.loaded_expected / self.loaded, 4) if self.loaded else None,
            "found": round(self.found / self.answerable, 4) if self.answerable else None,
            "silent": round(self.silent / self.negatives, 4) if self.negatives else None,
            "loaded_mean": round(self.loaded / self.answerable, 3) if self.answerable else None,
        }


def measure(corpus: Corpus, semantic: bool, tally: Tally) -> None:
    with tempfile.TemporaryDirectory(prefix="engram-load-") as work:
        searcher = project(corpus, Path(work), semantic=semantic)
        assert isinstance(searcher, ProjectSearch)
        try:
            for query in corpus.queries:
                tally.add(query, searcher.load(query.text))
        finally:
            searcher.opened.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    faces = ["project", "project-hybrid"]
    parser.add_argument("--faces", nargs="+", default=faces, choices=faces)
    parser.add_argument("--record", action="store_true", help="write bench/results.json")
    options = parser.parse_args()
    figures: dict[str, Any] = {}
    sets = {"coding": coding_corpora, "repo": repo_corpora}
    for name, corpora in sets.items():
        for face in options.faces:
            whole = Tally()
            for corpus in corpora():
                tally = Tally()
                measure(corpus, face == "project-hybrid", tally)
                figures.setdefault(name, {}).setdefault(face, {})[corpus.name] = tally.figures()
                for attribute in ("loaded", "loaded_expected", "answerable", "found"):
                    setattr(whole, attribute, getattr(whole, attribute) + getattr(tally, attribute))
                whole.negatives += tally.negatives
                whole.silent += tally.silent
                print(f"{corpus.name:22} {face:15} {tally.figures()}", flush=True)
            figures[name][face]["all"] = whole.figures()
            print(f"{name:22} {face:15} {whole.figures()}", flush=True)
    if options.record:
        record("load_precision", figures)


if __name__ == "__main__":
    main()
