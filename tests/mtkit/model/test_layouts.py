"""Every layout built from recipe keys: the transformers class that has it, its parameter count against a count from
the shape alone, a reload by plain transformers with the same logits, and a CTranslate2 conversion that scores and
translates as transformers does; a layout no class has is one error line."""

from __future__ import annotations

import json

import pytest
import torch
from testing_utils import FAST_RUN, train_in_process
from transformers import AutoModelForSeq2SeqLM

from mtkit.config import parse_config
from mtkit.data.tokenizer import train_tokenizer
from mtkit.errors import UserError
from mtkit.export.ct2 import export_ct2
from mtkit.model.flops import Architecture
from mtkit.model.layouts import SHAPE_KEYS
from mtkit.model.presets import check_model_shape, preset_config
from mtkit.model.vocab import mask_extra_rows, save_unpadded, tokens_in_use

TEXT = ["a man rides a red bike .", "two dogs play in the snow .", "ein mann fährt ein rotes fahrrad ."] * 20
SHAPE = ["--model", "transformer-tiny", "--encoder_layers", "2", "--decoder_layers", "1", "--d_model", "32"]
SHAPE += ["--encoder_attention_heads", "4", "--decoder_attention_heads", "2", "--encoder_ffn_dim", "48"]
SHAPE += ["--decoder_ffn_dim", "40", "--activation_function", "gelu"]
MAX_POSITIONS = 64

#: (extra recipe keys, model_type): every (norm, positions) layout, and MarianMT's separate embeddings
LAYOUTS = [
    ([], "bart"),
    (["--positions", "sinusoidal", "--scale_embedding", "false"], "marian"),
    (["--positions", "sinusoidal", "--share_embeddings", "decoder"], "marian"),
    (["--positions", "sinusoidal", "--share_embeddings", "none"], "marian"),
    (["--normalize_before", "true"], "mbart"),
    (["--normalize_before", "true", "--positions", "sinusoidal"], "m2m_100"),
]


def expected_parameters(kind: str, share: str, vocab: int) -> int:
    """The trained weights of :data:`SHAPE` counted from the shape alone (sinusoidal tables are not trained)."""
    d = 32
    attention = 4 * (d * d + d)  # q, k, v, out projections with biases
    norm = 2 * d

    def ffn(inner: int) -> int:
        return d * inner + inner + inner * d + d

    encoder = 2 * (attention + norm + ffn(48) + norm)
    decoder = 1 * (2 * attention + 3 * norm + ffn(40))
    embeddings = vocab * d * {"all": 1, "decoder": 2, "none": 3}[share]
    positions = 2 * (MAX_POSITIONS + 2) * d if kind in ("bart", "mbart") else 0  # learned, offset 2
    embedding_norms = 2 * norm if kind in ("bart", "mbart") else 0
    final_norms = 2 * norm if kind in ("mbart", "m2m_100") else 0  # pre-norm: one after each stack
    return embeddings + positions + encoder + decoder + embedding_norms + final_norms


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(TEXT, vocab_size=60)


@pytest.mark.parametrize("extra, kind", LAYOUTS, ids=[f"{k}-{'-'.join(e)}" for e, k in LAYOUTS])
def test_layout_builds_reloads_and_converts(extra, kind, tokenizer, tmp_path):
    cfg = parse_config([*SHAPE, *extra])
    check_model_shape(cfg.model)
    config = preset_config(
        cfg.model.model, vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, max_positions=MAX_POSITIONS,
        **{k: getattr(cfg.model, k) for k in SHAPE_KEYS},
    )  # fmt: skip
    assert config.model_type == kind
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config).eval()
    mask_extra_rows(model)  # as a run builds it
    share = cfg.model.share_embeddings or "all"
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    rows = 60 if kind == "m2m_100" else 64  # rounded up to 64 rows where an output bias can mask the extra ones
    assert config.vocab_size == rows and tokens_in_use(config) == len(tokenizer) == 60
    assert trained == expected_parameters(kind, share, config.vocab_size)
    assert (model.config.activation_function, model.config.d_model) == ("gelu", 32)
    arch = Architecture.from_config(config)  # FLOPs and MFU read every layout
    assert (arch.encoder_layers, arch.decoder_layers, arch.encoder_ffn, arch.decoder_ffn, arch.attn_dim) == (
        2,
        1,
        48,
        40,
        32,
    )

    save_unpadded(model, tmp_path / "model")  # as final/ is written: the tokenizer's size
    tokenizer.save_pretrained(tmp_path / "model")
    again = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "model").eval()
    assert again.config.vocab_size == 60 and not hasattr(again.config, "tokenizer_vocab_size")
    source = tokenizer(["a man rides a red bike .", "two dogs ."], return_tensors="pt", padding=True)
    target = tokenizer(["ein mann fährt ."], return_tensors="pt").input_ids
    with torch.no_grad():
        inputs = {**source, "decoder_input_ids": torch.cat([target, target])}
        assert torch.equal(model(**inputs).logits[..., :60], again(**inputs).logits)
        assert (model(**inputs).logits[..., 60:] < -6e4).all()  # the extra rows: never a token
        settings = dict(num_beams=3, do_sample=False, max_new_tokens=9, min_new_tokens=9, forced_eos_token_id=None)
        assert torch.equal(model.generate(source.input_ids, **settings), again.generate(source.input_ids, **settings))

    # CTranslate2: the same log-probabilities of a target, and the same greedy translation
    ctranslate2 = pytest.importorskip("ctranslate2")  # optional: not in every image (a GPU machine's)
    export_ct2(tmp_path / "model", tmp_path / "ct2", "float32", check_samples=0)
    translator = ctranslate2.Translator(str(tmp_path / "ct2"), device="cpu")
    src_tokens = [tokenizer.convert_ids_to_tokens(tokenizer("a man rides a red bike .").input_ids)]
    tgt_ids = tokenizer("ein rotes fahrrad .").input_ids  # ends in </s>, which CTranslate2 appends itself
    scored = translator.score_batch(src_tokens, [tokenizer.convert_ids_to_tokens(tgt_ids[:-1])])[0]
    start = torch.tensor([[model.config.decoder_start_token_id, *tgt_ids[:-1]]])
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([tokenizer("a man rides a red bike .").input_ids]),
                       decoder_input_ids=start).logits[0, :, :60]  # fmt: skip
    log_probs = torch.log_softmax(logits, -1)[torch.arange(len(tgt_ids)), torch.tensor(tgt_ids)]
    assert scored.log_probs == pytest.approx(log_probs.tolist(), abs=1e-4)
    ct2 = translator.translate_batch(src_tokens, beam_size=1, max_decoding_length=8, min_decoding_length=8)
    with torch.no_grad():
        hf = model.generate(torch.tensor([tokenizer("a man rides a red bike .").input_ids]), num_beams=1,
                            do_sample=False, max_new_tokens=9, min_new_tokens=9, forced_eos_token_id=None)  # fmt: skip
    assert tokenizer.convert_tokens_to_ids(ct2[0].hypotheses[0]) == hf[0, 1:9].tolist()


@pytest.mark.parametrize(
    "keys, message",
    [
        (["--normalize_before", "true", "--share_embeddings", "none"],
         "--share_embeddings none with --normalize_before True and --positions learned: no transformers class"),
        (["--share_embeddings", "decoder"], "--share_embeddings decoder with --normalize_before False and --positions"),
        (["--d_model", "30"], "--encoder_attention_heads 4: must divide --d_model 30"),
        (["--model", "flan-t5-small", "--positions", "sinusoidal"], "--positions: shapes a model trained from scratch"),
    ],
)  # fmt: skip
def test_a_shape_no_class_has_is_one_error_line(keys, message):
    with pytest.raises(UserError, match=message) as err:
        check_model_shape(parse_config(["--model", "transformer-tiny", *keys]).model)
    assert "\n" not in str(err.value)


def test_a_marian_layout_trains_and_exports(multi30k_small, tmp_path):
    """A few updates of the paper's layout (post-norm, sinusoidal positions) in-process, converted at the end, scored
    both ways, each score named in results.json and the model card."""
    out = tmp_path / "run"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--positions", "sinusoidal", "--encoder_layers", "1",
        "--decoder_layers", "1", "--d_model", "64", "--encoder_ffn_dim", "128", "--decoder_ffn_dim", "128",
        "--max_steps", "4", "--eval_steps", "4", "--save_steps", "4", "--export_ct2", "int8",
        "--max_train_samples", "500", "--paper_bleu", "moses-lc", "--output_dir", str(out),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert AutoModelForSeq2SeqLM.from_pretrained(out / "final").config.model_type == "marian"
    assert (out / "final_ct2" / "model.bin").is_file()
    results = json.loads((out / "results.json").read_text())
    assert {"test_bleu", "test_paper_bleu"} <= set(results) and results["test_paper_bleu_ref_len"] > 0
    assert results["scoring"]["bleu"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|")
    assert "lowercased, punctuation-normalised and Moses-tokenized" in results["scoring"]["paper_bleu"]
    card = (out / "final" / "README.md").read_text()
    assert "| BLEU | chrF | paper BLEU |" in card and "positions sinusoidal" in card
