"""Search shared by both faces: turning user text into safe lexical queries.

Ranking itself (BM25) is computed by SQLite FTS5 in the store adapters; this package
owns what a query means, so any user text is a safe query.
"""
