"""How much one call of project memory takes, on every face.

The MCP input schemas (:mod:`engram.project.schemas`) publish these limits and the
domain enforces them, so the command line refuses what a tool refuses.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_CANDIDATE_TEXT", "MAX_QUERY"]

#: The most characters one proposal's candidate lines (or one note) may hold.
MAX_CANDIDATE_TEXT: Final = 65_536
#: The most characters of a query (load, route, search).
MAX_QUERY: Final = 8192
