"""The fine-tuning path end to end on CPU: a tiny T5 (standing in for flan-t5) on MT-GenEval's five languages with
prompts, per-language and per-gender validation, precision rules, LoRA, ZeRO-3 with two processes, resume."""

import json

import pytest
import sacrebleu
import torch
from geneval_helpers import make_subset
from safetensors.torch import load_file
from testing_utils import (
    LANGS,
    MTGENEVAL,
    REPO,
    finetune_args,
    greedy,
    launch,
    rows,
    script_in_process,
    train_in_process,
)
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.cli.translate import main as translate_main
from mtkit.data.prompts import PRESETS
from mtkit.errors import cli_entry


def last_eval(out) -> dict:
    return [r for r in rows(out / "metrics.jsonl") if "valid_loss" in r][-1]


def test_five_languages_with_prompts_and_gender_metrics(tiny_t5, tmp_path):
    out = tmp_path / "ft"
    res = train_in_process(*finetune_args(tiny_t5, out, "--max_steps", "2", "--eval_steps", "2"))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "computing in fp32 on cpu" in res.stdout and "precision no" in res.stdout  # auto: bf16 on GPUs only
    held_out = rows(out / "validation_split.jsonl")
    assert {r["lang"] for r in held_out} == set(LANGS) and {r["gender"] for r in held_out} == {"feminine", "masculine"}

    # Every figure logged at evaluation, recomputed from the saved translations with sacrebleu directly.
    logged = last_eval(out)
    translated = rows(out / "translations" / "valid-step2.jsonl")
    assert {r["lang"] for r in translated} == set(LANGS)
    for lang in LANGS:
        mine = [r for r in translated if r["lang"] == lang]
        bleu = sacrebleu.corpus_bleu([r["hypothesis"] for r in mine], [[r["target"] for r in mine]]).score
        assert logged[f"valid_{lang}_bleu"] == pytest.approx(bleu)
        by_gender = {
            g: sacrebleu.corpus_bleu(
                [r["hypothesis"] for r in mine if r["gender"] == g], [[r["target"] for r in mine if r["gender"] == g]]
            ).score
            for g in ("feminine", "masculine")
        }
        assert logged[f"valid_{lang}_bleu_feminine"] == pytest.approx(by_gender["feminine"])
        assert logged[f"valid_{lang}_bleu_gap"] == pytest.approx(by_gender["masculine"] - by_gender["feminine"])
        assert 0 <= logged[f"valid_{lang}_accuracy_pair"] <= 1
    gaps = [logged[f"valid_{lang}_bleu_gap"] for lang in LANGS]
    assert logged["valid_bleu_gap"] == pytest.approx(sum(gaps) / len(gaps))  # macro average

    # final/ carries the prompt; translate.py uses it (and needs the language, the model knows five).
    saved = json.loads((out / "final" / "prompt.json").read_text())
    assert saved["template"] == PRESETS["instruction"] and saved["languages"] == LANGS
    text = "The doctor said that she was tired."
    translate = cli_entry(translate_main)  # as scripts/translate.py wraps it (its own process: test_translate_script)
    res = script_in_process(translate, "--model", str(out / "final"), "--text", text, "--target_lang", "es")
    assert res.returncode == 0, res.stderr[-2000:]
    expected = greedy(out / "final", [f'Translate the following sentence from English to Spanish: "{text}"'])
    assert res.stdout.splitlines() == expected
    res = script_in_process(translate, "--model", str(out / "final"), "--text", text)
    assert res.returncode == 2 and "--target_lang" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_fp16_is_refused_for_t5(tiny_t5, tmp_path):
    out = tmp_path / "fp16"
    res = train_in_process(*finetune_args(tiny_t5, out, "--max_steps", "2", "--mixed_precision", "fp16"))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: --mixed_precision fp16: t5 models overflow in fp16 (inf/NaN activations); use bf16, "
        "or pass --force_fp16 to try anyway"
    ]
    assert not out.exists()


def logits(model, tok) -> torch.Tensor:
    enc = tok(["The doctor said that she was tired."], return_tensors="pt")
    labels = tok(text_target=["Der Arzt sagte, dass sie müde war."], return_tensors="pt").input_ids
    with torch.no_grad():
        return model(**enc, labels=labels).logits


def assert_merged_equals_base_plus_adapter(tiny_t5, final) -> None:
    from peft import PeftModel

    tok = AutoTokenizer.from_pretrained(tiny_t5)
    base = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5, dtype=torch.float32).eval()
    before = logits(base, tok)
    adapted = PeftModel.from_pretrained(base, final / "adapter").eval()
    merged = AutoModelForSeq2SeqLM.from_pretrained(final, dtype=torch.float32).eval()
    assert torch.allclose(logits(merged, tok), logits(adapted, tok), atol=1e-4)
    assert not torch.allclose(logits(merged, tok), before, atol=1e-3)  # the adapter learned something


def test_lora_saves_adapter_and_merged_model_and_writes_the_bias_report(tiny_t5, tmp_path):
    out = tmp_path / "lora"
    # the first 150 sentences of each gender in German, so that the full report decodes 300, not 2,400
    geneval = make_subset(MTGENEVAL, tmp_path / "geneval", ["de"], 150, split="dev", annotated=True, context=True)
    args = finetune_args(
        tiny_t5, out, "--target_langs", "de", "--max_steps", "6", "--eval_steps", "6", "--lora_r", "4",
        "--learning_rate", "2e-2", "--mixed_precision", "no", "--bias_report_split", "dev",
        "--mtgeneval_dir", str(geneval),
    )  # fmt: skip
    res = train_in_process(*args)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "trained (LoRA r=4)" in res.stdout
    weights = load_file(out / "final" / "adapter" / "adapter_model.safetensors")
    assert weights and all("lora_" in k for k in weights)
    assert_merged_equals_base_plus_adapter(tiny_t5, out / "final")
    # The end-of-run report scored the exported model with its saved prompt and decoding settings.
    report = json.loads((out / "bias_report" / "metrics.json").read_text())
    assert set(report["languages"]) == {"de"}
    assert json.loads((out / "results.json").read_text())["bias_report"] == str(out / "bias_report")
    card = (out / "final" / "README.md").read_text()  # written once, after the report, with its section
    assert (
        "\n## Gender bias: MT-GenEval dev, de\n" in card
        and f"model card in {out / 'final' / 'README.md'}" in res.stdout
    )
    assert "model card updated" not in res.stdout and "left as it is" not in res.stdout


# slow: LoRA on two processes repeats the one-process LoRA test above with DDP's or ZeRO-2's gradient reduction
@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["multi_gpu", "deepspeed_zero2"])
def test_lora_with_two_processes(tiny_t5, tmp_path, strategy):
    out = tmp_path / strategy
    res = launch(
        strategy,
        *finetune_args(tiny_t5, out, "--max_steps", "4", "--eval_steps", "4", "--lora_r", "4",
                       "--learning_rate", "2e-2", "--eval_max_samples", "10", "--mixed_precision", "no"),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "2 process(es)" in res.stdout
    assert_merged_equals_base_plus_adapter(tiny_t5, out / "final")


def test_lora_under_zero3_is_refused(tiny_t5, tmp_path):
    """Refused with the launch's other checks, before the Accelerator, DeepSpeed or the model is built: the settings
    a ZeRO-3 launcher hands each worker (the slow tier launches a refusal of this kind: test_deepspeed.py)."""
    zero3 = {
        "ACCELERATE_USE_DEEPSPEED": "true",
        "ACCELERATE_DEEPSPEED_CONFIG_FILE": str(REPO / "ds_configs/zero3.json"),
    }
    res = train_in_process(*finetune_args(tiny_t5, tmp_path / "z3", "--max_steps", "2", "--lora_r", "4"), env=zero3)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: --lora_r: LoRA is not supported under ZeRO-3 (use ZeRO-2 or DDP: the adapters are small)"
    ]
    assert not (tmp_path / "z3").exists()


def zero3(tiny_t5, out, steps: int, *extra: str):
    return launch(
        "deepspeed_zero3",
        *finetune_args(tiny_t5, out, "--max_steps", str(steps), "--eval_steps", "4", "--save_steps", "4",
                       "--no_load_best_model_at_end", "--eval_max_samples", "10", "--mixed_precision", "no", *extra),
    )  # fmt: skip


def test_zero3_two_processes_sharded_creation_and_export(tiny_t5, zero3_run):
    """ZeRO-3 creates the pretrained weights already sharded and exports one consolidated model whose greedy
    translations on a fresh CPU process equal the ones made during training."""
    out = zero3_run
    stdout = zero3_run.with_suffix(".stdout").read_text()
    assert "2 process(es)" in stdout and "created sharded across processes (ZeRO-3 zero.Init)" in stdout
    n = sum(p.numel() for p in AutoModelForSeq2SeqLM.from_pretrained(tiny_t5).parameters())
    assert f"{n / 1e6:.1f}M parameters" in stdout
    translated = rows(out / "translations" / "valid-step4.jsonl")
    name = {"de": "German", "es": "Spanish", "fr": "French", "it": "Italian", "pt": "Portuguese"}
    inputs = [
        f'Translate the following sentence from English to {name[r["lang"]]}: "{r["source"]}"' for r in translated
    ]
    assert greedy(out / "final", inputs) == [r["hypothesis"] for r in translated]


@pytest.mark.slow
def test_zero3_two_processes_resume_exactly(tiny_t5, tmp_path):
    resumed, straight = tmp_path / "resumed", tmp_path / "straight"
    assert zero3(tiny_t5, resumed, 4).returncode == 0
    res = zero3(tiny_t5, resumed, 8)  # continues from the checkpoint of update 4
    assert res.returncode == 0, res.stderr[-3000:]
    assert "resuming from" in res.stdout
    res = zero3(tiny_t5, straight, 8)
    assert res.returncode == 0, res.stderr[-3000:]
    a, b = load_file(resumed / "final" / "model.safetensors"), load_file(straight / "final" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_bias_report_split_that_is_not_there_is_refused_before_training(tiny_t5, tmp_path):
    out = tmp_path / "nosplit"
    res = train_in_process(*finetune_args(tiny_t5, out, "--bias_report_split", "test"))
    assert res.returncode == 2 and not out.exists()
    assert res.stderr.strip().splitlines() == [
        f"error: --bias_report_split: split 'test' not in {MTGENEVAL} (present: dev)"
    ]


@pytest.mark.slow
def test_gradient_checkpointing_changes_memory_not_results(tiny_t5, tmp_path):
    """Recomputing activations in the backward pass gives the same loss and gradient (tiny_t5 has no dropout)."""
    first = {}
    for name, extra in (("plain", []), ("checkpointed", ["--gradient_checkpointing"])):
        out = tmp_path / name
        args = finetune_args(
            tiny_t5, out, "--max_steps", "2", "--eval_steps", "2", "--eval_max_samples", "2",
            "--mixed_precision", "no", "--target_langs", "de", "--logging_steps", "1", *extra,
        )  # fmt: skip
        res = train_in_process(*args)
        assert res.returncode == 0, res.stderr[-3000:]
        first[name] = next(r for r in rows(out / "metrics.jsonl") if "grad_norm" in r)
    assert "gradient checkpointing" in res.stdout
    plain, checkpointed = first["plain"], first["checkpointed"]
    assert plain["step"] == checkpointed["step"] == 1 and plain["grad_norm"] > 0
    assert checkpointed["loss"] == pytest.approx(plain["loss"], rel=1e-6)
    assert checkpointed["grad_norm"] == pytest.approx(plain["grad_norm"], rel=1e-5)
