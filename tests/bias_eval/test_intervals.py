"""Wilson's score interval against the score test inverted by bisection (not Wilson's closed form), for every count;
its macro form; and the interval of a difference (MOVER) on numbers worked by hand."""

from __future__ import annotations

import math

import pytest
from geneval_helpers import score_test_interval
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.intervals import difference_interval, mean_wilson, wilson


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
