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
    column weights), ``counts`` how many documents hold each phrase, exactly, and
    ``documents`` how many the table holds (the scores are exact when it is FTS5's own
    count).
    """
    parts = stage.parts(counts)
    if not parts:
        return None
    every, only = "", ""
    parameters: list[object] = []
    if stage.every:
        # The rows holding every group; a part ranks only those (the unary + keeps SQLite
        # from handing the rowids to FTS5, which would match once per row). SQLite 3.35 and
        # later compute a table used more than once only once; older ones once per part.
        every = f"every AS (SELECT rowid FROM {table} WHERE {table} MATCH ?), "
        only = " AND +rowid IN every"
        parameters.append(match_expression(stage))
    # LIMIT -1 OFFSET 0: SQLite never merges such a subquery into the query around it,
    # where an FTS5 auxiliary function cannot run.
    union = " UNION ALL ".join(
        f"SELECT * FROM (SELECT rowid, {rank} * ? AS part FROM {table}"
        f" WHERE {table} MATCH ?{only} LIMIT -1 OFFSET 0)"
        for _ in parts
    )
    parameters += [value for part in parts for value in (part.factor(documents), part.match())]
    clause = (
        f"WITH {every}scores AS (SELECT rowid, sum(part) AS score FROM ({union}) GROUP BY rowid)"
    )
    return clause, parameters
