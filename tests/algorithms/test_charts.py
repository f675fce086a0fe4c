"""Chart geometry (charts/geometry.py, charts/figures.py) and the 2-D projection: pure, no database."""

from __future__ import annotations

import numpy as np
import pytest

from charts import figures, geometry
from embeddings.algorithms.projection import pca_2d


@pytest.mark.parametrize(
    ("domain", "range_", "value", "expected"),
    [
        ((0, 10), (0, 100), 5, 50),
        ((0, 1), (200, 0), 0.25, 150),  # y axes run downwards
        ((-1, 1), (0, 20), -1, 0),
        ((3, 3), (0, 100), 3, 50),  # one value: the middle, never a division by zero
    ],
)
def test_linear_scale_maps_domain_onto_range(domain, range_, value, expected) -> None:
    assert geometry.LinearScale(domain, range_)(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("lo", "hi", "count", "expected"),
    [
        (0, 1, 5, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0, 10, 5, [0, 2, 4, 6, 8, 10]),
        (-1, 1, 4, [-1.0, -0.5, 0.0, 0.5, 1.0]),
        (0, 0.033, 5, [0.0, 0.01, 0.02, 0.03]),
        (0, 0.033, 8, [0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03]),
        (0, 37, 4, [0, 10, 20, 30]),
        (0.1, 0.3, 5, [0.1, 0.15, 0.2, 0.25, 0.3]),
    ],
)
def test_nice_ticks_are_round_steps_inside_the_interval(lo, hi, count, expected) -> None:
    assert geometry.nice_ticks(lo, hi, count) == pytest.approx(expected)


def test_ticks_have_no_float_noise() -> None:
    assert geometry.nice_ticks(0, 0.7, 7) == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]


@pytest.mark.parametrize(
    ("lo", "hi", "kwargs", "expected"),
    [
        (0.013, 0.087, {}, (0.0, 0.1)),
        (0.013, 0.087, {"count": 8}, (0.01, 0.09)),
        (3, 97, {}, (0, 100)),
        (0.2, 0.2, {}, (0.1, 0.3)),  # a single value gets room around it
        (0.0, 0.0, {}, (-1.0, 1.0)),
        (5, 5, {"include_zero": True}, (0, 5)),
        (0.3, 0.9, {"include_zero": True}, (0.0, 1.0)),
    ],
)
def test_nice_domain_widens_to_whole_steps(lo, hi, kwargs, expected) -> None:
    assert geometry.nice_domain(lo, hi, **kwargs) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "step", "percent", "expected"),
    [
        (0.25, 0.25, False, "0.25"),
        (0.4, 0.2, False, "0.4"),
        (10, 5, False, "10"),
        (-0.5, 0.5, False, "\u22120.5"),
        (0.0, 0.5, False, "0.0"),
        (0.125, 0.025, True, "12.5%"),
        (0.3, 0.1, True, "30%"),
        (0.005, 0.005, True, "0.5%"),
    ],
)
def test_tick_labels_have_the_decimals_the_step_needs(value, step, percent, expected) -> None:
    assert geometry.format_tick(value, step, percent=percent) == expected


def test_band_positions_split_the_width_evenly() -> None:
    lefts, width = geometry.band_positions(4, 0, 100, padding=0.2)
    assert width == pytest.approx(20)
    assert lefts == pytest.approx([2.5, 27.5, 52.5, 77.5])
    assert geometry.band_positions(0, 0, 100) == ([], 0.0)


def test_line_path_and_extent() -> None:
    assert geometry.line_path([(0, 10), (5.25, 3)]) == "M0.0,10.0 L5.2,3.0"
    assert geometry.line_path([]) == ""
    assert geometry.extent([3, None, float("nan"), -1]) == (-1, 3)
    assert geometry.extent([]) is None


def _marks(chart: figures.Chart, kind: str, cls: str = "") -> list[figures.Mark]:
    return [m for m in chart.marks if m.kind == kind and (not cls or cls in m.cls.split())]


def test_a_line_chart_of_one_point_still_draws_a_marker() -> None:
    chart = figures.line_chart(
        [figures.Series("FN rate", [(7, 0.0917)], "s1")], title="t", desc="d", x_label="report", y_label="rate",
        percent=True, x_ticks=[(7, "#7")],
    )
    assert not chart.empty
    dots = _marks(chart, "circle")
    assert len(dots) == 1 and _marks(chart, "path") == []  # no line through one point, but a dot
    assert chart.left < dots[0].x < chart.right and chart.top <= dots[0].y <= chart.bottom
    assert [t.label for t in chart.x_ticks] == ["#7"]
    assert "9.2%" in dots[0].title
    assert chart.y_ticks[0].label == "0%"  # rates start at zero


def test_a_line_chart_maps_points_onto_the_plot() -> None:
    chart = figures.line_chart(
        [figures.Series("loss", [(1, 4.0), (2, 2.0), (3, 1.0)])], title="t", desc="d", x_label="epoch", y_label="loss",
    )
    (path,) = _marks(chart, "path")
    assert path.d.startswith(f"M{chart.left:.1f},")  # first epoch on the left edge
    first, last = _marks(chart, "circle")[0], _marks(chart, "circle")[-1]
    assert first.y < last.y  # higher loss is higher up
    assert last.x == pytest.approx(chart.right)


def test_a_line_chart_with_gaps_breaks_the_line() -> None:
    chart = figures.line_chart(
        [figures.Series("a", [(1, 1.0), (2, None), (3, 2.0), (4, 3.0)])], title="t", desc="d", x_label="x", y_label="y",
    )
    assert len(_marks(chart, "path")) == 1 and len(_marks(chart, "circle")) == 3


def test_empty_charts_say_so() -> None:
    assert figures.line_chart([], title="t", desc="d", x_label="x", y_label="y").empty
    assert figures.line_chart([figures.Series("a", [(1, None)])], title="t", desc="d", x_label="x", y_label="y").empty
    assert figures.scatter_chart([], title="t", desc="d", x_label="x", y_label="y").empty
    assert figures.histogram_chart([], [], [], [], [], title="t", desc="d", x_label="x").empty
    assert figures.interval_chart([], title="t", desc="d", x_label="x").empty
    assert figures.ranked_bar_chart([], title="t", desc="d", x_label="x", y_label="y").empty


def test_histogram_has_bars_wrong_parts_error_bars_and_axes() -> None:
    edges = [-1.0, -0.5, 0.0, 0.5, 1.0]
    chart = figures.histogram_chart(edges, [1, 0, 4, 2], [1, 0, 0, 0], [0.2, 0, 2.1, 0.9], [3.0, 0, 6.5, 4.0], title="t", desc="d", x_label="gap")
    bars = _marks(chart, "rect", "s0")
    assert len(bars) == 3  # the empty bin draws no bar
    assert len(_marks(chart, "rect", "wrong")) == 1
    assert len([m for m in _marks(chart, "line", "errorbar") if m.title]) == 3
    assert [t.label for t in chart.x_ticks] == ["\u22121.0", "\u22120.5", "0.0", "0.5", "1.0"]
    assert chart.y_ticks[0].label == "0"
    tallest = max(bars, key=lambda m: m.h)
    assert "4 triplets" in tallest.title
    assert _marks(chart, "line", "refline")  # the zero line


def test_histograms_share_a_top_when_asked() -> None:
    a = figures.histogram_chart([0, 1], [2], [0], [1], [3], title="t", desc="d", x_label="x", y_max=20)
    assert a.y_ticks[-1].label == "20"


def test_scatter_draws_the_selected_point_last_and_labelled() -> None:
    points = [
        figures.Point(0.0, 0.0, "a", href="?concept=a"),
        figures.Point(1.0, 1.0, "b", href="?concept=b", selected=True),
        figures.Point(0.5, 0.2, "c", href="?concept=c", show_label=True),
    ]
    chart = figures.scatter_chart(points, title="t", desc="d", x_label="x", y_label="y", axes=False)
    circles = _marks(chart, "circle")
    assert circles[-1].href == "?concept=b" and "selected" in circles[-1].cls
    assert {m.text for m in _marks(chart, "text")} == {"b", "c"}
    assert chart.interactive and chart.x_ticks == [] and chart.y_ticks == []


def test_scatter_of_one_point_sits_inside_the_plot() -> None:
    chart = figures.scatter_chart([figures.Point(0.1, 0.2, "only")], title="t", desc="d", x_label="x", y_label="y", percent=True)
    (dot,) = _marks(chart, "circle")
    assert chart.left < dot.x < chart.right and chart.top < dot.y < chart.bottom
    assert not chart.interactive


def test_interval_chart_draws_a_whisker_per_row() -> None:
    rows = [figures.Interval("prob2vec", 0.9, 0.85, 0.95), figures.Interval("tf-idf", 0.6, 0.5, 0.7)]
    chart = figures.interval_chart(rows, title="t", desc="d", x_label="accuracy")
    whiskers = _marks(chart, "line", "errorbar")
    assert len(whiskers) == 2 and whiskers[0].x < whiskers[0].x2
    assert chart.height > figures.MARGIN_TOP + figures.MARGIN_BOTTOM
    assert [m.text for m in _marks(chart, "text")] == ["prob2vec", "tf-idf"]


def test_ranked_bars_colour_by_threshold_and_handle_negative_values() -> None:
    chart = figures.ranked_bar_chart(
        [("x", -0.2), ("y", 0.5), ("z", 0.9)], title="t", desc="d", x_label="c", y_label="alpha",
        references=[(0.8, "0.8")], good_at=0.8, y_range=(0, 1),
    )
    bars = _marks(chart, "rect")
    assert [b.cls for b in bars] == ["bar bad", "bar bad", "bar good"]
    assert all(b.h > 0 for b in bars)
    zero = _marks(chart, "line", "axisline")[0].y
    assert bars[0].y == pytest.approx(zero)  # a negative bar hangs below the zero line
    assert chart.y_ticks[0].label.startswith("\u2212")


def test_palette_gives_distinct_hex_colours() -> None:
    colours = figures.palette(26)
    assert len(set(colours)) == 26 and all(len(c) == 7 and c.startswith("#") for c in colours)


def test_pca_2d_finds_the_directions_of_largest_variance() -> None:
    rng = np.random.default_rng(0)
    x = np.zeros((50, 5))
    x[:, 2] = rng.normal(size=50) * 10  # the widest direction
    x[:, 4] = rng.normal(size=50) * 2
    out = pca_2d(x)
    assert out.shape == (50, 2)
    assert np.corrcoef(out[:, 0], x[:, 2])[0, 1] == pytest.approx(1.0, abs=1e-3)
    assert abs(np.corrcoef(out[:, 1], x[:, 4])[0, 1]) == pytest.approx(1.0, abs=1e-2)
    np.testing.assert_allclose(pca_2d(x), out)  # deterministic signs


@pytest.mark.parametrize("n", [0, 1])
def test_pca_2d_of_too_few_rows_is_zeros(n: int) -> None:
    assert pca_2d(np.ones((n, 3))).shape == (n, 2)
    assert not pca_2d(np.ones((n, 3))).any()


def test_pca_2d_of_collinear_rows_has_a_flat_second_axis() -> None:
    out = pca_2d(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    assert not out[:, 1].any() and out[:, 0].std() > 0


def test_pca_2d_rejects_a_flat_array() -> None:
    with pytest.raises(ValueError, match="2-D"):
        pca_2d(np.ones(3))


def test_count_axes_have_whole_number_ticks() -> None:
    assert geometry.nice_ticks(0, 3, 5, integer=True) == [0, 1, 2, 3]
    assert geometry.tick_step(0, 12, 5, integer=True) == 5  # never 2.5 triplets
    chart = figures.grouped_hbar_chart(
        [figures.BarGroup("a", [3, 1]), figures.BarGroup("b", [0, 2])], [("FN", "s1"), ("FP", "s0")], title="t", desc="d", x_label="problems"
    )
    assert [t.label for t in chart.x_ticks] == ["0", "1", "2", "3"]
    assert len(_marks(chart, "rect")) == 4 and [m.w for m in _marks(chart, "rect")][2] == 0  # a zero draws nothing


def test_scatter_labels_never_overlap_and_explicit_colours_win() -> None:
    points = [figures.Point(0.0, 0.0, f"label-{i}", show_label=True, fill="#123456", cls="") for i in range(4)]
    chart = figures.scatter_chart(points, title="t", desc="d", x_label="x", y_label="y")
    ys = sorted(m.y for m in _marks(chart, "text"))
    assert all(b - a >= 12 for a, b in zip(ys, ys[1:]))  # stacked, not on top of each other
    assert all(m.fill == "#123456" and m.cls == "dot" for m in _marks(chart, "circle"))


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 0, 0.0, 0.0),  # no triplets: no interval
        (0, 81, 0.0, 81 * 1.96**2 / (81 + 1.96**2)),  # an empty bin still has an upper bound (closed form)
        (31, 81, 23.04, 39.82),  # worked by hand from the Wilson formula
        (81, 81, 81 * 81 / (81 + 1.96**2), 81.0),
    ],
)
def test_binomial_interval_is_the_wilson_interval_in_counts(k: int, n: int, low: float, high: float) -> None:
    lo, hi = geometry.binomial_interval(k, n)
    assert lo == pytest.approx(low, abs=0.05) and hi == pytest.approx(high, abs=0.05)
    assert lo <= k <= hi
