"""Memory bodies as HTML: CommonMark by markdown-it-py with raw HTML off.

A memory file may hold anything a person or an agent wrote; rendered here, its HTML is
shown as text, links keep only the schemes markdown-it-py deems safe (no
``javascript:``), an image is not drawn (its text is shown: an image of the console's
own pages would fetch them with the person's session), and characters that could make
the page show other text than the file holds (controls, bidi overrides) are escaped
first (:func:`engram.safety.display.shown`).
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt

from engram.safety.display import shown

__all__ = ["render_markdown"]


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return parser.disable("image")


def render_markdown(text: str) -> str:
    """The HTML of Markdown ``text``, safe to put in the page as it is."""
    html: str = _parser().render(shown(text))
    return html
