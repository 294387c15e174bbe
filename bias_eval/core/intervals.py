"""Confidence intervals that need no resampling: Wilson's score interval of a share (an accuracy, a coverage), the
same interval for an unweighted mean of shares (a macro figure), and the interval of a difference of two estimates
made from their own intervals (MOVER), which the report comparison screens its changes with.

A share's percentile bootstrap interval is ``[1, 1]`` when every hypothesis is right: resampling right answers gives
right answers. Wilson's interval is the set of true shares that a score test at the 95% level would not reject,
so it has a positive width whenever anything was counted, and it stays inside ``[0, 1]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

#: the standard normal quantile of a two-sided 95% interval
Z95 = NormalDist().inv_cdf(0.975)

WILSON_DEFINITION = (
    "95% Wilson score interval of k hits in n counted items (Wilson 1927; the true shares a two-sided score test at "
    "the 5% level would not reject): centre (p + z^2/2n) / (1 + z^2/n), half-width z sqrt(p(1 - p)/n + z^2/4n^2) / "
    "(1 + z^2/n), z = 1.95996, p = k/n; never of zero width at 0 or 1. The n hypotheses are taken as independent. "
    "macro: the same interval around the unweighted mean over the languages with n = L^2 / sum(1/n_i), the n for "
    "which one share would have the mean's variance when the L languages share one value"
)
CHANGE_DEFINITION = (
    "changed: 'yes' when the 95% interval of the change (after - before) excludes 0, that interval being made from "
    "the two reports' own intervals by the method of variance estimates recovery (MOVER; Newcombe 1998, Zou & "
    "Donner 2008): change - sqrt((after - after_low)^2 + (before_high - before)^2) to change + sqrt((after_high - "
    "after)^2 + (before - before_low)^2). It treats the two reports as independent, which on the same sentences "
    "makes it conservative; the paired tests are the tests to judge a change by"
)


def wilson(hits: float, n: float, z: float = Z95) -> list[float] | None:
    """Wilson's score interval ``[low, high]`` of ``hits`` out of ``n`` (``None`` when nothing was counted)."""
    if n <= 0:
        return None
    p = hits / n
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / scale
    return [min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))]  # p inside despite rounding


def mean_wilson(shares: Sequence[float], counted: Sequence[float]) -> list[float] | None:
    """Wilson's interval around the unweighted mean of ``shares`` (each of ``counted`` items), with the effective
    size ``L^2 / sum(1/n_i)`` (see :data:`WILSON_DEFINITION`); ``None`` when a share counted nothing."""
    if not shares or any(n <= 0 for n in counted):
        return None
    size = len(counted) ** 2 / sum(1 / n for n in counted)
    return wilson(size * sum(shares) / len(shares), size)


def difference_interval(
    before: float, before_ci: Sequence[float], after: float, after_ci: Sequence[float]
) -> list[float]:
    """The 95% interval of ``after - before`` from the two estimates' own 95% intervals (MOVER, see
    :data:`CHANGE_DEFINITION`)."""
    change = after - before
    low = change - math.hypot(after - after_ci[0], before_ci[1] - before)
    high = change + math.hypot(after_ci[1] - after, before - before_ci[0])
    return [low, high]


PAIRED_DIFFERENCE_DEFINITION = (
    "95% interval of a difference of two shares on the same items (an accuracy gap, masculine - feminine, over the "
    "pairs): Newcombe's hybrid score interval for paired data (Newcombe 1998, method 10), the two shares' Wilson "
    "intervals combined as MOVER does with the correlation phi of the pairs' 2x2 table, (ad - bc) / sqrt(product of "
    "the margins), a positive ad - bc lowered by n/2 (not below 0), 0 when a margin is empty; unpaired shares: the "
    "same with phi = 0. It holds at every n and at 0% and 100%, where a percentile bootstrap interval collapses to a "
    "point. macro: the unweighted mean of the languages' differences with the MOVER interval of a mean of independent "
    "estimates, mean - sqrt(sum (d_i - low_i)^2) / L to mean + sqrt(sum (high_i - d_i)^2) / L"
)


def paired_difference_interval(both: int, first_only: int, second_only: int, neither: int) -> list[float] | None:
    """Newcombe's 95% interval of ``share(first) - share(second)`` on the same items, from the 2x2 table of the items
    (right in both, in the first only, in the second only, in neither; see :data:`PAIRED_DIFFERENCE_DEFINITION`);
    ``None`` when there is no item."""
    n = both + first_only + second_only + neither
    if n <= 0:
        return None
    p1, p2 = (both + first_only) / n, (both + second_only) / n
    (l1, u1), (l2, u2) = wilson(both + first_only, n), wilson(both + second_only, n)  # type: ignore[misc]
    margins = (both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    cross = both * neither - first_only * second_only
    cross = max(cross - n / 2, 0.0) if cross > 0 else cross  # Newcombe's correction of a positive association
    phi = cross / math.sqrt(margins) if margins else 0.0
    low = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    high = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    d = p1 - p2
    return [max(-1.0, d - math.sqrt(max(low, 0.0))), min(1.0, d + math.sqrt(max(high, 0.0)))]


def mean_interval(estimates: Sequence[float], intervals: Sequence[Sequence[float]]) -> list[float]:
    """The 95% interval of the unweighted mean of independent estimates from their own intervals (MOVER)."""
    size = len(estimates)
    mean = sum(estimates) / size
    low = mean - math.sqrt(sum((e - i[0]) ** 2 for e, i in zip(estimates, intervals))) / size
    high = mean + math.sqrt(sum((i[1] - e) ** 2 for e, i in zip(estimates, intervals))) / size
    return [low, high]
