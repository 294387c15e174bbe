"""fast_align's model (bias_eval.winomt.align): fast_align's own output on the benchmark's first 300 German lines, a
case worked by hand, and properties that hold for every corpus."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testing_utils import WINOMT

from bias_eval.winomt.align import AlignSettings, align

HERE = Path(__file__).parent
GOOGLE_DE = WINOMT / "translations" / "google" / "en-de.txt"


def test_equals_fast_align_on_the_benchmark() -> None:
    """``fast_align -d -o -v`` (clab/fast_align built from source, 2026-11-27) on the first 300 lines of Google's
    German translations wrote ``fast_align_de300.align.gz``: every link is the same."""
    if not GOOGLE_DE.is_file():
        pytest.skip(f"{GOOGLE_DE} is not there")
    lines = GOOGLE_DE.read_text(encoding="utf-8").splitlines()[:300]
    pairs = [(source.split(), target.split()) for source, target in (line.split(" ||| ") for line in lines)]
    expected = [
        [tuple(int(x) for x in link.split("-")) for link in row.split()]
        for row in gzip.decompress((HERE / "fast_align_de300.align.gz").read_bytes()).decode().splitlines()
    ]
    assert align(pairs) == expected


def test_learnt_words_beat_the_diagonal() -> None:
    """Worked by hand with two iterations (one EM step, then the links; the tension, 4, is not fitted in either).

    Step 1, every lexical probability equal: in ``a b ||| y x`` (m = n = 2) target 1 weighs source 1 by e^0 and
    source 2 by e^-2, so its posteriors are 0.92/(1 + e^-2) = 0.810 and 0.92 e^-2/(1 + e^-2) = 0.110 (null 0.08);
    target 2 the mirror image. Each of 20 ``b ||| y`` and 20 ``a ||| x`` gives its source word 0.92, null 0.08.
    Expected counts: c(y|b) = 20 (0.92) + 0.110 = 18.51, c(x|b) = 0.810; c(x|a) = 18.51, c(y|a) = 0.810; null
    1.68 each. Variational Bayes (alpha 0.01): t(y|b) = exp(psi(18.52) - psi(19.34)) = 0.956, t(y|a) =
    exp(psi(0.82) - psi(19.34)) = 0.0212, t(y|null) = exp(psi(1.69) - psi(3.38)) = 0.422.
    Step 2, target ``y`` of the first pair: source a scores 0.0212 x 0.810 = 0.017, source b 0.956 x 0.110 =
    0.105, null 0.422 x 0.08 = 0.034: b wins, and by symmetry x goes to a, so the links cross."""
    corpus = [("a b".split(), "y x".split())] + [(["b"], ["y"])] * 20 + [(["a"], ["x"])] * 20
    links = align(corpus, AlignSettings(iterations=2))
    assert links[0] == [(1, 0), (0, 1)]
    assert links[1:] == [[(0, 0)]] * 40
    assert align(corpus[:1], AlignSettings(iterations=2)) == [[(0, 0), (1, 1)]]  # alone, the diagonal wins


def test_identity_corpus_aligns_to_the_diagonal() -> None:
    """Sentences translated by themselves: every word to itself."""
    sentences = [f"w{i} w{i + 1} w{i + 2} w{i + 3} x y".split() for i in range(30)]
    assert align([(s, s) for s in sentences]) == [[(k, k) for k in range(6)] for _ in sentences]


def test_an_empty_side_has_no_links() -> None:
    assert align([(["a"], []), ([], ["x"]), (["a"], ["x"])]) == [[], [], [(0, 0)]]


words = st.lists(st.sampled_from("a b c d e f g".split()), min_size=0, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(words, words), min_size=1, max_size=6))
def test_every_link_is_in_range(corpus) -> None:
    """For any corpus: one list per pair, each target word linked at most once, in target order, to a source word
    of its own pair."""
    links = align(corpus)
    assert len(links) == len(corpus)
    for (source, target), found in zip(corpus, links):
        targets = [j for _, j in found]
        assert targets == sorted(set(targets))
        assert all(0 <= i < len(source) and 0 <= j < len(target) for i, j in found)
