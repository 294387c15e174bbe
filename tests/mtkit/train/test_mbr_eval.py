"""Evaluation during training with ``--decoding mbr``: the test translations a run saves are the MBR choices of
its final model (checked against mean sentence chrF from sacreBLEU, computed here), and sampling them leaves the
training itself untouched (the same weights as a run that evaluates with beam search)."""

from __future__ import annotations

import numpy as np
import sacrebleu
import torch
from safetensors.torch import load_file
from testing_utils import FAST_RUN, rows, train_in_process

from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings
from mtkit.model.vocab import MASKED_BIAS, rounded


def test_mbr_evaluation_chooses_by_expected_chrf_and_leaves_training_alone(multi30k_small, tmp_path):
    common = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--max_steps", "6", "--eval_steps", "3", "--save_steps", "3",
        "--no_load_best_model_at_end", "--dropout", "0.1", "--seed", "4",
    ]  # fmt: skip
    beam, mbr = tmp_path / "beam", tmp_path / "mbr"
    assert train_in_process(*common, "--output_dir", str(beam)).returncode == 0
    res = train_in_process(*common, "--output_dir", str(mbr), "--decoding", "mbr", "--mbr_samples", "4",
                           "--epsilon", "0")  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]

    # dropout draws from the same random stream whether or not evaluation sampled in between
    weights = [load_file(str(run / "final" / "model.safetensors")) for run in (beam, mbr)]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])

    saved = rows(mbr / "translations" / "test.jsonl")
    sources = [row["source"] for row in saved]
    translator = Translator(mbr / "final", device="cpu")
    # the run sampled from its model with the vocabulary rounded up to 64 rows (the extra ones masked): sampling
    # draws one number per row, so the same candidates come from final/ given as many rows again
    rows_used = translator.model.config.vocab_size
    translator.model.resize_token_embeddings(rounded(rows_used))
    with torch.no_grad():
        translator.model.final_logits_bias[..., rows_used:] = MASKED_BIAS
    options = {"num_beams": 2, "max_new_tokens": 16, "batch_size": 64, "length_penalty": 0.6}
    mbr = {"decoding": "mbr", "mbr_samples": 4, "epsilon": 0.0, "seed": 4}
    groups = translator.candidates(sources, DecodingSettings(**options, **mbr))
    means = [[np.mean([sacrebleu.sentence_chrf(h, [r]).score for r in g]) for h in g] for g in groups]
    assert [row["hypothesis"] for row in saved] == [g[int(np.argmax(m))] for g, m in zip(groups, means)]
    assert sum(len(set(g)) > 1 for g in groups) > len(groups) // 2  # the candidates differ: the choice matters
    beam_saved = [row["hypothesis"] for row in rows(beam / "translations" / "test.jsonl")]
    assert beam_saved != [row["hypothesis"] for row in saved]
