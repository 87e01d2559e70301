"""A search stage scored over an FTS5 table with engram's BM25 (:mod:`engram.search.lexical`).

FTS5's rank is BM25 with FTS5's own IDF. :func:`stage_scores` runs one match per
:class:`~engram.search.lexical.Part` of the stage (the phrases that the same number of
documents hold, which FTS5 weighs alike), multiplies each rank by the part's factor and
sums by row: the score of :func:`engram.search.lexical.idf`, which the PostgreSQL store
computes from its postings.
"""

from __future__ import annotations

from engram.search.lexical import Stage, match_expression

__all__ = ["stage_scores"]


def stage_scores(
    table: str, rank: str, stage: Stage, counts: dict[str, int], documents: int
) -> tuple[str, list[object]] | None:
    """A ``WITH`` clause naming ``scores(rowid, score)`` (negative, as FTS5 ranks: the
    lowest first) and its parameters; ``None`` when no document holds any phrase.

    ``rank`` is the FTS5 rank expression of ``table`` (``rank``, or ``bm25(...)`` with
    column weights), ``counts`` how many of the ``documents`` hold each phrase, exactly.
    """
    parts = stage.parts(counts)
    if not parts:
        return None
    # MATERIALIZED: SQLite must not flatten a part into the query around it, where an
    # FTS5 auxiliary function cannot run.
    union = " UNION ALL ".join(
        f"SELECT rowid, {rank} * ? AS part FROM {table} WHERE {table} MATCH ?" for _ in parts
    )
    parameters: list[object] = [
        value for part in parts for value in (part.factor(documents), part.match())
    ]
    every = ""
    if stage.every:  # rows holding all the groups (not a phrase of any part's rank)
        every = f" WHERE rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)"
        parameters.append(match_expression(stage))
    clause = (
        f"WITH parts AS MATERIALIZED ({union}),"
        f" scores AS (SELECT rowid, sum(part) AS score FROM parts{every} GROUP BY rowid)"
    )
    return clause, parameters
