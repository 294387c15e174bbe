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
    scores = corpus_scores(hyps, refs, "en")
    assert scores["bleu"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert scores["chrf"] == sacrebleu.corpus_chrf(hyps, [refs]).score
    assert corpus_scores(refs, refs, "en")["bleu"] == pytest.approx(100.0)


def test_evaluation_decodes_under_the_runs_autocast():
    """generate runs the encoder outside the model's forward, which alone accelerate wraps in autocast: the encoder
    must compute in the run's precision all the same (seen from inside it, by a hook on its first layer)."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, GradientState
    from transformers import AutoModelForSeq2SeqLM

    from mtkit.config import EvalConfig
    from mtkit.data.tokenizer import train_tokenizer
    from mtkit.evaluation.validation import translate_corpus
    from mtkit.model.presets import preset_config

    text = ["a cat sat on the mat", "the dog", "a long sentence about cats and dogs in the park", "hi"]
    tok = train_tokenizer(text * 5, vocab_size=80)
    config = preset_config("transformer-tiny", vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2)
    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()
    try:
        acc = Accelerator(cpu=True, mixed_precision="bf16")
        model = acc.prepare(AutoModelForSeq2SeqLM.from_config(config))
        seen = []
        fc1 = acc.unwrap_model(model).get_encoder().layers[0].fc1
        fc1.register_forward_hook(lambda m, i, out: seen.append(out.dtype))
        cfg = EvalConfig(num_beams=2, max_new_tokens=4, eval_batch_size=2)
        hyps = translate_corpus(acc, model, tok, text, cfg)
        assert len(hyps) == len(text) and seen and set(seen) == {torch.bfloat16}
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()
