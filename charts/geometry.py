"""Chart geometry with no Django: linear and band scales, "nice" ticks, tick labels and SVG paths.

Pure code (see CONVENTIONS §2): plain numbers in, plain numbers and strings out, so the figures in
`charts/figures.py` can be unit-tested without a database or a browser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

# Steps a tick interval may take, times a power of ten (the d3 / R `pretty` choice).
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True)
class LinearScale:
    """Maps the data interval `domain` onto the pixel interval `range` (either may be reversed).

    A degenerate domain (lo == hi) maps every value to the middle of the range, so one point or a
    constant series still draws.
    """

    domain: tuple[float, float]
    range: tuple[float, float]

    def __call__(self, value: float) -> float:
        d0, d1 = self.domain
        r0, r1 = self.range
        if d1 == d0:
            return (r0 + r1) / 2
        return r0 + (value - d0) / (d1 - d0) * (r1 - r0)


def tick_step(lo: float, hi: float, count: int = 5, *, integer: bool = False) -> float:
    """The 1/2/2.5/5 × 10^k step giving about `count` intervals over [lo, hi] (1 when lo == hi == 0).
    integer=True (counts): never below 1, and never 2.5."""
    span = abs(hi - lo)
    if span == 0 or not math.isfinite(span):
        span = abs(hi) or 1.0
    raw = span / max(count, 1)
    if integer and raw <= 1:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for step in _NICE_STEPS:
        if integer and step == 2.5 and power == 1:
            continue
        if raw <= step * power * (1 + 1e-9):
            return step * power
    return 10 * power


def nice_domain(lo: float, hi: float, count: int = 5, *, include_zero: bool = False, integer: bool = False) -> tuple[float, float]:
    """[lo, hi] widened outwards to whole tick steps; a single value gets a unit-wide interval around it."""
    if include_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if lo > hi:
        lo, hi = hi, lo
    if lo == hi:
        pad = abs(lo) * 0.5 or 1.0
        lo, hi = lo - pad, hi + pad
        if include_zero and lo < 0 <= lo + pad:
            lo = 0.0
    step = tick_step(lo, hi, count, integer=integer)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step


def nice_ticks(lo: float, hi: float, count: int = 5, *, integer: bool = False) -> list[float]:
    """Tick values that are whole multiples of a nice step, inside [lo, hi] (both ends included when on a step)."""
    if lo > hi:
        lo, hi = hi, lo
    step = tick_step(lo, hi, count, integer=integer)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    # Rounding to the step's decimals keeps 0.30000000000000004 out of the labels.
    decimals = max(0, -math.floor(math.log10(step)) + 2)
    return [round(i * step, decimals) + 0.0 for i in range(first, last + 1)]


def format_tick(value: float, step: float, *, percent: bool = False) -> str:
    """A tick label with as many decimals as the step needs ("0.25", "10", "12.5%"); minus is U+2212."""
    if percent:
        value, step = value * 100, step * 100
    decimals = 0 if step >= 1 and float(step).is_integer() else max(0, -math.floor(math.log10(step)) + (0 if _is_power_digit(step) else 1))
    text = f"{value:.{decimals}f}"
    if text.startswith("-"):
        text = "\u2212" + text[1:] if float(text[1:] or 0) != 0 else text[1:]
    return text + ("%" if percent else "")


def _is_power_digit(step: float) -> bool:
    """True when the step is d × 10^k with one significant digit (0.2, 0.05), False for 0.25 or 2.5."""
    mantissa = step / 10 ** math.floor(math.log10(step))
    return abs(mantissa - round(mantissa)) < 1e-9


def ticks_with_labels(lo: float, hi: float, count: int = 5, *, percent: bool = False, integer: bool = False) -> list[tuple[float, str]]:
    """(value, label) pairs of `nice_ticks`."""
    values = nice_ticks(lo, hi, count, integer=integer)
    step = tick_step(lo, hi, count, integer=integer)
    return [(v, format_tick(v, step, percent=percent)) for v in values]


def band_positions(n: int, start: float, end: float, *, padding: float = 0.2) -> tuple[list[float], float]:
    """Left edges and width of `n` equal bands across [start, end] with `padding` (a share of each band) between them."""
    if n <= 0:
        return [], 0.0
    band = (end - start) / n
    width = band * (1 - padding)
    return [start + i * band + (band - width) / 2 for i in range(n)], width


def line_path(points: Iterable[tuple[float, float]]) -> str:
    """An SVG path `d` through the points ("M x,y L x,y ..."); empty for no points."""
    parts = [f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(points)]
    return " ".join(parts)


def extent(values: Sequence[float]) -> tuple[float, float] | None:
    """(min, max) of the finite values, None when there are none."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return None
    return min(finite), max(finite)


def binomial_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a share k/n, returned as counts (low, high) out of n: the error bar of a
    histogram bin holding k of n items (95% for z = 1.96). (0, 0) when n is 0."""
    if n <= 0:
        return 0.0, 0.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # The interval always holds k; the clamps only absorb rounding at k = 0 and k = n.
    return min(max(0.0, centre - half) * n, float(k)), max(min(1.0, centre + half) * n, float(k))
