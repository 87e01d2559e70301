"""The console's chart geometry: exact numbers the templates draw."""

from __future__ import annotations

from engram.console.charts import HEIGHT, WIDTH, Band, Bar, bars, columns, stacked


def test_columns_stack_each_kind_from_the_bottom_scaled_to_the_busiest_day() -> None:
    chart = columns(
        [("2026-12-01", {"captures": 3, "accepted": 1}), ("2026-12-02", {"captures": 2})],
        ["captures", "accepted", "rejected"],
    )

    assert chart.peak == 4
    first, second = chart.columns
    assert (first.x, first.width, first.total) == (0.0, WIDTH / 2 * 0.8, 4)
    assert first.bands == [
        Band("captures", 3, HEIGHT - 120.0, 120.0),
        Band("accepted", 1, 0.0, 40.0),
    ]
    assert second.x == WIDTH / 2
    assert second.bands == [Band("captures", 2, HEIGHT - 80.0, 80.0)]


def test_a_chart_of_nothing_has_no_bands_and_no_division_by_zero() -> None:
    chart = columns([("2026-12-01", {}), ("2026-12-02", {"captures": 0})], ["captures"])

    assert chart.peak == 0
    assert [column.bands for column in chart.columns] == [[], []]
    assert bars({"rule": 0.0}) == [Bar("rule", 0.0, 0.0, [])]


def test_bars_are_shares_of_the_largest_value() -> None:
    assert bars([("rule", 2), ("skill", 8), ("knowledge", 4)]) == [
        Bar("rule", 2, 0.25, []),
        Bar("skill", 8, 1.0, []),
        Bar("knowledge", 4, 0.5, []),
    ]


def test_stacked_bars_split_each_row_by_kind_against_the_largest_row() -> None:
    rows = stacked(
        [("a", {"lexical": 0.1, "semantic": 0.1}), ("b", {"lexical": 0.1})],
        ["lexical", "semantic"],
    )

    assert rows == [
        Bar("a", 0.2, 1.0, [("lexical", 0.5), ("semantic", 0.5)]),
        Bar("b", 0.1, 0.5, [("lexical", 0.5), ("semantic", 0.0)]),
    ]
