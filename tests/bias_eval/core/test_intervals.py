"""Wilson's score interval against the score test inverted by bisection (not Wilson's closed form), for every count;
its macro form; and the interval of a difference (MOVER) on numbers worked by hand."""

from __future__ import annotations

import math

import pytest
from geneval_helpers import score_test_interval
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.core.intervals import difference_interval, mean_interval, mean_wilson, paired_difference_interval, wilson


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 20_000))
    return draw(st.integers(0, n)), n


@given(counts())
def test_wilson_is_the_score_test_interval_holds_the_share_and_is_never_of_zero_width(count: tuple[int, int]) -> None:
    hits, n = count
    low, high = wilson(hits, n)
    assert [low, high] == pytest.approx(score_test_interval(hits, n), abs=1e-9)
    assert 0.0 <= low <= hits / n <= high <= 1.0
    assert high - low > 0  # at 0 and at 1 too


def test_wilson_at_the_edges_by_hand() -> None:
    """All right of n: [n / (n + z^2), 1]; none right: [0, z^2 / (n + z^2)]; nothing counted: no interval."""
    z2 = 1.959963984540054**2
    assert wilson(1200, 1200) == pytest.approx([1200 / (1200 + z2), 1.0])
    assert wilson(0, 1200) == pytest.approx([0.0, z2 / (1200 + z2)])
    assert wilson(0, 0) is None


def test_macro_interval_uses_the_effective_size() -> None:
    """Shares 1.0 of 100 and 0.5 of 300: the mean 0.75 with n = 2^2 / (1/100 + 1/300) = 300; one share: its own."""
    assert mean_wilson([1.0, 0.5], [100, 300]) == pytest.approx(score_test_interval(0.75 * 300, 300), abs=1e-9)
    assert mean_wilson([0.9], [50]) == pytest.approx(wilson(45, 50))
    assert mean_wilson([0.9, 1.0], [50, 0]) is None


def test_difference_interval_by_hand() -> None:
    """2.0 [1.8, 2.2] after 1.0 [0.5, 1.5]: 1 - sqrt(0.2^2 + 0.5^2) to 1 + sqrt(0.2^2 + 0.5^2)."""
    low, high = difference_interval(1.0, [0.5, 1.5], 2.0, [1.8, 2.2])
    assert (low, high) == pytest.approx((1 - math.sqrt(0.29), 1 + math.sqrt(0.29)))


def test_paired_difference_interval_equals_the_published_example() -> None:
    """Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), chapter 8: complete response
    before and after consolidation therapy (Cavo et al. 2012), the table (59, 6 / 16, 80): the Newcombe square-and-add
    interval of the difference is -0.0621 (-0.1186 to -0.0046)."""
    low, high = paired_difference_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


@given(table=st.tuples(*[st.integers(0, 40)] * 4))
def test_paired_difference_interval_holds_the_difference_and_is_never_of_zero_width(table) -> None:
    """Any 2x2 table of pairs (both, first only, second only, neither): the interval holds the difference, stays in
    [-1, 1], has a positive width (at 0% and 100% too), and without association between the two (phi 0) it is
    the MOVER interval of the two Wilson intervals."""
    both, first, second, neither = table
    n = sum(table)
    if n == 0:
        assert paired_difference_interval(*table) is None
        return
    p1, p2 = (both + first) / n, (both + second) / n
    low, high = paired_difference_interval(*table)
    assert -1 <= low <= p1 - p2 + 1e-12 and p1 - p2 - 1e-12 <= high <= 1 and high - low > 0
    cross = both * neither - first * second
    if cross == 0 or (0 < cross <= n / 2):
        expected = difference_interval(p2, wilson(both + second, n), p1, wilson(both + first, n))
        assert [low, high] == pytest.approx([max(-1, expected[0]), min(1, expected[1])])


@given(parts=st.lists(st.tuples(st.floats(-1, 1), st.floats(0, 0.5), st.floats(0, 0.5)), min_size=1, max_size=6))
def test_mean_interval_is_mover_of_a_sum(parts) -> None:
    """The interval of a mean of independent estimates: its half-widths are the root sum of squares of theirs over L,
    one estimate's own interval when alone."""
    estimates = [e for e, _, _ in parts]
    intervals = [[e - lo, e + hi] for e, lo, hi in parts]
    low, high = mean_interval(estimates, intervals)
    mean, size = sum(estimates) / len(parts), len(parts)
    assert low == pytest.approx(mean - math.sqrt(sum(lo * lo for _, lo, _ in parts)) / size)
    assert high == pytest.approx(mean + math.sqrt(sum(hi * hi for _, _, hi in parts)) / size)
    if size == 1:
        assert [low, high] == pytest.approx(intervals[0])
