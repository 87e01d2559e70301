"""Project memory: the repository's own Markdown memories for a developer's agents.

Memory files (one memory = one Markdown file with frontmatter under
``.agents/.engram/``), routing and budgeted loading, BM25 search, proposals that only
a human can approve, working-tier notes. The files are the source of truth; the
SQLite index next to them is derived and rebuilt from them.
"""
