"""The credential detector both faces share: find, test for, and redact secrets in text.

The governed admission policy rejects a candidate when :func:`contains_secret` is true;
project memory refuses such text before any preview or write, and for notes replaces
each secret with :func:`redact`. The API::

    find_secrets(text)                -> list[Finding]   sorted, non-overlapping
    contains_secret(text)             -> bool            == bool(find_secrets(text))
    redact(text, placeholder_for=...) -> str             every finding replaced
    strip_invisible(text)             -> str             what the rules actually scan

How it decides
    Every rule of :mod:`engram.safety.rules` scans ``strip_invisible(text)``, so a token
    split by a zero-width space is still found. Spans of different rules that overlap
    are merged into their union, named after the highest-ranked rule among them (a
    self-identifying token format over a context rule over the entropy fallback), so
    a redaction always covers everything any rule saw. Then every further occurrence of
    a found value is a finding too (an *echo*: a password assigned on one line and
    quoted again in prose on the next), for values of at least four characters, the
    first 64 distinct values of a text and at most 250,000 occurrences.
    ``docs/secrets.md`` tables the rules and their guards against false positives;
    engram's own ``sha256:`` digests and ``mem_`` record ids never match.

Offsets
    ``Finding.start`` and ``Finding.end`` index ``strip_invisible(text)``, which is
    ``text`` itself when it holds no invisible character (always, for ASCII).
    :func:`redact` maps them back and edits ``text`` itself: characters outside the
    findings, invisible ones included, are kept as they were.

What it deliberately does not do
    A :class:`Finding` never holds the secret, only its kind and offsets, so findings
    can be logged and returned in errors. The module does not raise, log, normalize
    Unicode (homoglyphs and full-width letters are not folded), decode base64, or know
    about memories, tools or the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engram.safety.invisible import original_spans, strip_invisible
from engram.safety.rules import ANY_RULE, RULES, SHORTEST

__all__ = [
    "KINDS",
    "Finding",
    "contains_secret",
    "find_secrets",
    "placeholder",
    "redact",
    "strip_invisible",
]

#: Every kind a finding can have, in rule order.
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))

_MAX_ECHOED_VALUES = 64
_MIN_ECHO_LENGTH = 4
#: A bound on echo occurrences per text, so that a crafted megabyte of repeated values
#: costs a fraction of a second; ordinary text is orders of magnitude below it.
_MAX_ECHOES = 250_000


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind (one of :data:`KINDS`) and its ``[start, end)`` offsets in
    ``strip_invisible(text)``. It never carries the secret text."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    priority: tuple[int, int]  # (-rank, rule order): the smaller names a merged span
    kind: str


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, sorted by offset and non-overlapping; never raises."""
    visible = strip_invisible(text)
    hits = _merge(_scan(visible))
    if hits:
        hits = _merge([*hits, *_echoes(visible, hits)])
    return [Finding(hit.kind, hit.start, hit.end) for hit in hits]


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds a secret: ``bool(find_secrets(text))``, stopping at the first.

    Most text matches no rule's pattern at all, which one search of the rules' union
    tells; only text it matches goes through each rule and its guard.
    """
    visible = strip_invisible(text)
    if len(visible) < SHORTEST or ANY_RULE.search(visible) is None:
        return False
    return any(next(rule.spans(visible), None) is not None for rule in RULES)


def placeholder(kind: str) -> str:
    """The default replacement of a secret of ``kind``: ``[REDACTED:kind]``."""
    return f"[REDACTED:{kind}]"


def redact(text: str, placeholder_for: Callable[[str], str] = placeholder) -> str:
    """``text`` with each finding replaced by ``placeholder_for(finding.kind)``.

    Characters outside the findings are kept, invisible ones included; an invisible
    character inside a secret goes with it. Text without secrets comes back unchanged.
    """
    findings = find_secrets(text)
    if not findings:
        return text
    spans = original_spans(text, ((finding.start, finding.end) for finding in findings))
    parts: list[str] = []
    kept_from = 0
    for finding, (start, end) in zip(findings, spans, strict=True):
        parts += [text[kept_from:start], placeholder_for(finding.kind)]
        kept_from = end
    parts.append(text[kept_from:])
    return "".join(parts)


def _scan(text: str) -> list[_Hit]:
    return [
        _Hit(start, end, (-rule.rank, order), rule.kind)
        for order, rule in enumerate(RULES)
        for start, end in rule.spans(text)
    ]


def _merge(hits: Iterable[_Hit]) -> list[_Hit]:
    """Sorted, with overlapping hits replaced by their union under the best name."""
    merged: list[_Hit] = []
    for hit in sorted(hits, key=lambda hit: (hit.start, hit.priority)):
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            best = last if last.priority <= hit.priority else hit
            merged[-1] = _Hit(last.start, max(last.end, hit.end), best.priority, best.kind)
        else:
            merged.append(hit)
    return merged


def _echoes(text: str, hits: list[_Hit]) -> list[_Hit]:
    """Every other occurrence of a found value, under the kind it was found as."""
    first: dict[str, _Hit] = {}
    for hit in hits:
        value = text[hit.start : hit.end]
        if len(value) >= _MIN_ECHO_LENGTH:
            first.setdefault(value, hit)
        if len(first) == _MAX_ECHOED_VALUES:
            break
    echoes: list[_Hit] = []
    for value, hit in first.items():
        # Occurrences overlapping a previous one need no hit of their own: they share
        # characters with a redacted span, so they cannot survive redaction whole.
        position = text.find(value)
        while position != -1 and len(echoes) < _MAX_ECHOES:
            echoes.append(_Hit(position, position + len(value), hit.priority, hit.kind))
            position = text.find(value, position + len(value))
    return echoes
