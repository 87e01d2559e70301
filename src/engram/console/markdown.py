"""Memory bodies as HTML: CommonMark by markdown-it-py with raw HTML off.

A memory file may hold anything a person or an agent wrote; rendered here, its HTML is
shown as text, links keep only the schemes markdown-it-py deems safe (no
``javascript:``), and images can load nothing (the page's policy allows only its own
files).
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt

__all__ = ["render_markdown"]


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def render_markdown(text: str) -> str:
    """The HTML of Markdown ``text``, safe to put in the page as it is."""
    html: str = _parser().render(text)
    return html
