import math

import pytest
import sacrebleu
import torch
from transformers import get_scheduler

from mtkit.evaluation.scores import corpus_scores


def test_inverse_sqrt_schedule_is_noam():
    """Linear warm-up to the peak, then peak * sqrt(warmup / step): Vaswani et al.'s schedule."""
    peak, warmup = 7e-4, 4000
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
    sched = get_scheduler("inverse_sqrt", opt, num_warmup_steps=warmup)
    d_model = 512
    for step in range(1, 20001):
        opt.step()
        sched.step()
        if step in (1, 100, 3999, 4000, 4001, 10000, 20000):
            noam = d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
            assert sched.get_last_lr()[0] == pytest.approx(peak / (d_model**-0.5 * warmup**-0.5) * noam, rel=1e-9)
    assert math.isclose(sched.get_last_lr()[0], peak * math.sqrt(warmup / 20000))


def test_corpus_scores_are_sacrebleu():
    hyps = ["the cat sat on the mat .", "a dog runs", "hello world"]
    refs = ["the cat sat on a mat .", "a dog is running", "hello world"]
    scores = corpus_scores(hyps, refs)
    assert scores["bleu"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert scores["chrf"] == sacrebleu.corpus_chrf(hyps, [refs]).score
    assert corpus_scores(refs, refs)["bleu"] == pytest.approx(100.0)
