"""The geometry of the console's charts, drawn as SVG by the templates.

Two shapes cover every picture the console shows: stacked columns (activity per day,
one column a day, one band per kind of event) and horizontal bars (memory by type, by
age, by state; each channel's share of a search result). The functions here compute
numbers only; the templates turn them into ``<rect>`` elements, so no script runs and
the page's Content-Security-Policy needs no exception.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Band", "Bar", "Column", "Columns", "bars", "columns", "stacked"]

#: The drawing's size in SVG units (the style sheet scales it to the page).
WIDTH: Final = 720
HEIGHT: Final = 160


@dataclass(frozen=True)
class Band:
    """One kind's part of a column: where it starts (from the top) and how tall it is."""

    kind: str
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class Column:
    """One day's column: where it stands, how wide it is, its total and its bands."""

    label: str
    x: float
    width: float
    total: int
    bands: list[Band]


@dataclass(frozen=True)
class Columns:
    """A stacked column chart: its columns, the kinds in legend order, the largest total."""

    columns: list[Column]
    kinds: list[str]
    peak: int
    width: int = WIDTH
    height: int = HEIGHT


def columns(days: Sequence[tuple[str, Mapping[str, int]]], kinds: Sequence[str]) -> Columns:
    """Stacked columns, one per ``(label, counts by kind)``, scaled to the largest total."""
    peak = max((sum(counts.get(kind, 0) for kind in kinds) for _, counts in days), default=0)
    step = WIDTH / max(len(days), 1)
    drawn = []
    for number, (label, counts) in enumerate(days):
        bottom, bands = float(HEIGHT), []
        for kind in kinds:
            count = counts.get(kind, 0)
            height = HEIGHT * count / peak if peak else 0.0
            bottom -= height
            if count:
                bands.append(Band(kind, count, round(bottom, 2), round(height, 2)))
        total = sum(counts.get(kind, 0) for kind in kinds)
        drawn.append(Column(label, round(number * step, 2), round(step * 0.8, 2), total, bands))
    return Columns(drawn, list(kinds), peak)


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: its label, its value, and its length as a share of the widest
    (0 to 1), or its parts' shares when it is stacked."""

    label: str
    value: float
    share: float
    parts: list[tuple[str, float]]


def bars(values: Sequence[tuple[str, float]] | Mapping[str, float]) -> list[Bar]:
    """Bars for labelled values, the longest for the largest."""
    items = list(values.items()) if isinstance(values, Mapping) else list(values)
    peak = max((value for _, value in items), default=0.0)
    return [Bar(label, value, value / peak if peak else 0.0, []) for label, value in items]


def stacked(rows: Sequence[tuple[str, Mapping[str, float]]], kinds: Sequence[str]) -> list[Bar]:
    """Stacked bars: each row's parts in ``kinds`` order, scaled to the largest row."""
    totals = [sum(parts.get(kind, 0.0) for kind in kinds) for _, parts in rows]
    peak = max(totals, default=0.0)
    return [
        Bar(
            label,
            total,
            total / peak if peak else 0.0,
            [(kind, parts.get(kind, 0.0) / peak if peak else 0.0) for kind in kinds],
        )
        for (label, parts), total in zip(rows, totals, strict=True)
    ]
