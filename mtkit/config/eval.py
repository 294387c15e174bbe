"""The ``eval`` section of a recipe: validation during training and the decoding settings, with their defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtkit.config.keys import key

#: Default output bound per batch: ``MAX_LEN_A * longest source + MAX_LEN_B`` tokens (fairseq's ``--max-len-a/b``).
#: Generous between European languages (targets run to about 1.3x the source in subwords); it stops a degenerate
#: hypothesis from keeping its whole batch decoding to ``max_new_tokens``.
MAX_LEN_A = 1.5
MAX_LEN_B = 10
#: Beam size and longest translation of a recipe, and of a script when neither a flag nor the model sets one
NUM_BEAMS = 4
MAX_NEW_TOKENS = 256
#: MBR decoding's candidates per sentence, and its sampling cutoffs where none is given: epsilon sampling's
#: (transformers; Freitag et al., 2023, "Epsilon Sampling Rocks") and the nucleus mass CTranslate2 samples from (it
#: has no epsilon sampling)
EPSILON = 0.02
MBR_SAMPLES = 16
CT2_TOP_P = 0.9
#: ``--metric_for_best_model``'s choices
BestMetric = Literal["bleu", "chrf", "loss", "paper_bleu", "fair_bleu", "accuracy_pair", "bleu_gap_abs"]


@dataclass
class EvalConfig:
    """Validation during training and decoding settings."""

    eval_steps: int = key(1000, "Evaluate (loss + BLEU) every N updates.")
    eval_max_samples: int | None = key(None, "Decode at most N validation sentences for BLEU.")
    eval_batch_size: int = key(64, "Sentences per generation batch.")
    num_beams: int = key(NUM_BEAMS, "Beam size.")
    length_penalty: float = key(0.6, "Beam-search length penalty.")
    max_new_tokens: int = key(MAX_NEW_TOKENS, "Longest generated translation.")
    max_len_a: float = key(
        MAX_LEN_A, "Each decoding batch stops after max_len_a x its longest source + max_len_b tokens (fairseq's)."
    )
    max_len_b: int = key(MAX_LEN_B, "See --max_len_a.")
    decoding: Literal["beam", "mbr"] = key(
        "beam", "beam: the beam's best translation; mbr: the minimum-Bayes-risk choice among --mbr_samples candidates."
    )
    mbr_samples: int = key(MBR_SAMPLES, "Candidates per sentence for --decoding mbr.")
    mbr_candidates: Literal["sample", "beam"] = key(
        "sample", "MBR's candidates: epsilon (or nucleus) samples, or the beam's n-best (beam raised to the count)."
    )
    epsilon: float | None = key(None, f"Epsilon sampling's cutoff for MBR candidates (default {EPSILON}; 0: none).")
    top_p: float | None = key(None, f"Nucleus mass for MBR samples (default 1; {CT2_TOP_P} with CTranslate2).")
    metric_for_best_model: BestMetric = key(
        "bleu",
        "What selects checkpoint_best: validation bleu/chrf/paper_bleu/fair_bleu/accuracy_pair (higher is better) or "
        "loss/bleu_gap_abs (lower); paper_bleu needs --paper_bleu, the gender metrics gendered validation data.",
    )
    paper_bleu: Literal["none", "moses-lc", "moses", "tokenized"] = key(
        "none",
        "Also score paper_bleu: multi-bleu on lowercased (moses-lc) or cased Moses-tokenized text (docs/scoring.md).",
    )
    bias_report_split: str | None = key(
        None, "At the end, write the bias_eval report of this MT-GenEval split (dev/test) to <output_dir>/bias_report."
    )
    winomt_dir: str | None = key(
        None,
        "At the end, also write a WinoMT report of final/ per target language it scores (de, es, fr, it, ru, uk, he, "
        "ar) into <output_dir>/winomt/<lang>, from this folder (en.txt, en_pro.txt, en_anti.txt); a mitigation's "
        "verdict scores its models on it too.",
    )
    winomt_max_samples: int | None = key(
        None, "Score N sentences of WinoMT (--winomt_dir), drawn in its pro, anti and neutral proportions."
    )
    export_ct2: str | None = key(
        None,
        "At the end, also convert final/ to CTranslate2 with this quantization (auto: int8 without CUDA, "
        "int8_bfloat16 with a GPU; int8, int8_float16, int8_bfloat16, int16, float16, bfloat16, float32; float16 types "
        "refused for T5) into <output_dir>/final_ct2, checked against transformers on the validation sources.",
    )
