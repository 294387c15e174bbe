"""Bootstrap CI: reproducible under a seed, contains the point estimate, replicates are real corpus scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from geneval_helpers import geneval_file, read_plain

from bias_eval.core.bootstrap import check_resamples, gap_replicates, language_rng, percentile_interval, resample_counts
from bias_eval.mtgeneval.metrics import bleu_from_stats, bleu_stats


def _german(shared_geneval: Path, n: int = 200) -> tuple[list[str], list[str], list[str], list[str]]:
    ref_f = read_plain(geneval_file(shared_geneval, "de", "feminine", "de"))[:n]
    ref_m = read_plain(geneval_file(shared_geneval, "de", "masculine", "de"))[:n]
    # a biased system: masculine output for everyone, with some damage to avoid trivial scores
    hyp_m = [" ".join(s.split()[: max(1, len(s.split()) - (i % 4))]) for i, s in enumerate(ref_m)]
    hyp_f = list(hyp_m)
    return hyp_f, ref_f, hyp_m, ref_m


def test_counts_are_resamples() -> None:
    counts = resample_counts(np.random.default_rng(0), 50, 30)
    assert counts.shape == (30, 50)
    assert (counts.sum(axis=1) == 50).all()
    assert (counts >= 0).all()


def test_replicate_is_corpus_bleu_of_the_resampled_pairs(shared_geneval: Path) -> None:
    hyp_f, ref_f, hyp_m, ref_m = _german(shared_geneval, 120)
    sf, sm = bleu_stats(hyp_f, ref_f, "de"), bleu_stats(hyp_m, ref_m, "de")
    counts = resample_counts(language_rng(7, "de"), len(ref_f), 5)
    reps = gap_replicates(sf, sm, bleu_from_stats, counts, counts)
    for b in range(3):
        idx = [i for i in range(len(ref_f)) for _ in range(counts[b, i])]
        expected = (
            sacrebleu.corpus_bleu([hyp_m[i] for i in idx], [[ref_m[i] for i in idx]]).score
            - sacrebleu.corpus_bleu([hyp_f[i] for i in idx], [[ref_f[i] for i in idx]]).score
        )
        assert reps[b] == expected


def test_ci_reproducible_seeded_and_contains_point_estimate(shared_geneval: Path) -> None:
    hyp_f, ref_f, hyp_m, ref_m = _german(shared_geneval)
    sf, sm = bleu_stats(hyp_f, ref_f, "de"), bleu_stats(hyp_m, ref_m, "de")
    gap = bleu_from_stats(sm.sum(axis=0)) - bleu_from_stats(sf.sum(axis=0))

    def ci(seed: int) -> list[float]:
        counts = resample_counts(language_rng(seed, "de"), len(ref_f), 300)
        return percentile_interval(gap_replicates(sf, sm, bleu_from_stats, counts, counts))

    first, again, other = ci(1), ci(1), ci(2)
    assert first == again
    assert first != other
    assert first[0] <= gap <= first[1]
    assert first[0] < first[1]


def test_language_streams_are_independent() -> None:
    a = language_rng(5, "de").integers(0, 1000, 10)
    assert (a == language_rng(5, "de").integers(0, 1000, 10)).all()
    assert not (a == language_rng(5, "es").integers(0, 1000, 10)).all()


def test_resamples_whose_counts_exceed_the_memory_are_refused_before_any_is_drawn():
    """Three samples x n arrays of 8-byte integers (the draws and the counts): refused one byte past the memory,
    drawn when they fit, whatever the memory when it is unknown."""
    from bias_eval.core.errors import UserError

    need = 3 * 8 * 40 * 25
    check_resamples(40, 25, need)
    check_resamples(40, 25, None)
    with pytest.raises(UserError, match=r"^--bootstrap_samples 40: 40 resamples of 25 sentences .* more than"):
        check_resamples(40, 25, need - 1)
    assert resample_counts(np.random.default_rng(0), 25, 40).nbytes == need // 3  # the counts, as counted
