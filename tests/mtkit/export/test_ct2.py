"""CTranslate2 conversion guardrails (mtkit/export/ct2.py, mtkit/export/ct2_check.py): float16 types refused for
T5-family models in one line (at conversion and before training), the ``auto`` default, and the self-check every
conversion makes, whose figures are checked against sacreBLEU run here on both engines' outputs, and which refuses a
broken conversion without leaving OUT. Translation through the converted folders is tested in
tests/mtkit/decode/test_ct2.py."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import sacrebleu
import torch

from mtkit.cli.export_ct2 import main as export_main
from mtkit.cli.train import main as train_main
from mtkit.config import parse_config
from mtkit.decode.ct2 import CT2Translator
from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings
from mtkit.demo.corpus import generate_corpus
from mtkit.errors import UserError, cli_entry
from mtkit.export.ct2 import export_ct2, resolve
from mtkit.export.ct2_check import BOUNDS, SAMPLE
from mtkit.train.checks import check_ct2, t5_family

ctranslate2 = pytest.importorskip("ctranslate2")  # optional: not in every image (a GPU machine's)

CUDA = ctranslate2.get_cuda_device_count() > 0


def cli(main, argv: list[str], capsys) -> tuple[int, str, str]:
    """A script's ``main`` run as the script runs it: exit status, standard output and error."""
    try:
        cli_entry(main)(argv)
        status = 0
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def error_line(err: str) -> str:
    """The one ``error:`` line of a refusal (progress bars of models loaded before it aside), with no traceback."""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0] and "Traceback" not in err, err
    return errors[0]


def nothing_written(out: Path) -> bool:
    return not out.exists() and not list(out.parent.glob(f".{out.name}*"))


def test_the_built_in_sample_is_the_demo_corpus():
    assert SAMPLE == tuple(en for en, _ in generate_corpus(seed=0, n_train=0, n_valid=0, n_test=32).test)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"model_type": "t5"}, True),
        ({"model_type": "umt5"}, True),
        ({"model_type": "longt5"}, True),
        ({"model_type": "my_t5", "architectures": ["MyT5ForConditionalGeneration"]}, True),
        ({"model_type": "custom", "feed_forward_proj": "gated-gelu"}, True),
        ({"model_type": "bart", "architectures": ["BartForConditionalGeneration"]}, False),
        ({"model_type": "marian"}, False),
    ],
)
def test_what_counts_as_t5_family(config, expected):
    assert t5_family(config) is expected


@pytest.mark.parametrize(("quantization", "instead"), [("float16", "bfloat16"), ("int8_float16", "int8_bfloat16")])
def test_float16_for_t5_is_refused_in_one_line_and_nothing_written(quantization, instead, tiny_t5, tmp_path, capsys):
    out = tmp_path / "ct2"
    status, _, err = cli(export_main, [str(tiny_t5), str(out), "--quantization", quantization], capsys)
    assert status == 2 and nothing_written(out)
    assert err.strip().splitlines() == [
        f"error: --quantization {quantization}: t5 models decode into padding or garbage in CTranslate2's float16 "
        f"(CTranslate2 issue #1074); use {instead} (or auto), or pass --force_fp16 to convert anyway"
    ]


def test_force_fp16_lets_float16_through(tiny_t5, tmp_path, capsys):
    out = tmp_path / "ct2"
    status, printed, err = cli(export_main, [str(tiny_t5), str(out), "--quantization", "float16", "--force_fp16",
                                             "--check_samples", "8"], capsys)  # fmt: skip
    assert status == 0, err
    info = json.loads((out / "mtkit_ct2.json").read_text())
    assert info["quantization"] == "float16" and info["check"]["passed"]  # a CPU computes float16 weights in float32
    assert f"CTranslate2 model (float16) in {out}" in printed


def test_a_t5_run_exporting_float16_is_refused_before_training(tiny_t5, multi30k_small, tmp_path, capsys):
    run = tmp_path / "run"
    args = ["--data_dir", str(multi30k_small), "--source_lang", "en", "--target_lang", "de", "--validation_split",
            "val", "--model_name_or_path", str(tiny_t5), "--output_dir", str(run), "--report_to", "none",
            "--export_ct2", "float16"]  # fmt: skip
    status, printed, err = cli(train_main, args, capsys)
    assert status == 2 and not run.exists() and "step" not in printed
    assert err.strip().splitlines() == [
        "error: --export_ct2 float16: t5 models decode into padding or garbage in CTranslate2's float16 (CTranslate2 "
        "issue #1074); use bfloat16 (or auto), or pass --force_fp16 to convert anyway"
    ]


def test_the_pre_training_check_knows_presets_and_force_fp16():
    with pytest.raises(UserError, match=r"^--export_ct2 int8_float16: t5 models .* use int8_bfloat16"):
        check_ct2(parse_config(["--model", "flan-t5-small", "--export_ct2", "int8_float16"]))
    check_ct2(parse_config(["--model", "flan-t5-small", "--export_ct2", "int8_float16", "--force_fp16"]))
    check_ct2(parse_config(["--model", "transformer-tiny", "--export_ct2", "float16"]))  # BART decodes in float16
    check_ct2(parse_config(["--model", "flan-t5-small", "--export_ct2", "auto"]))
    with pytest.raises(UserError, match=r"^--export_ct2: 'int4' is not one of auto, int8, "):
        check_ct2(parse_config(["--export_ct2", "int4"]))


def test_auto_is_int8_without_cuda_and_int8_bfloat16_with_it(monkeypatch):
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)
    assert resolve("auto") == "int8"
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    assert resolve("auto") == "int8_bfloat16"
    assert resolve("float32") == "float32"


def t5_run(tiny_t5: Path, root: Path) -> tuple[Path, list[str], list[str]]:
    """The tiny T5 as a multilingual run's ``final/``: a prompt naming the target language and the run's held-out
    ``validation_split.jsonl`` beside it; returns the model and the check's inputs and references, made here."""
    final = root / "run" / "final"
    shutil.copytree(tiny_t5, final)
    generation = json.loads((final / "generation_config.json").read_text())
    (final / "generation_config.json").write_text(json.dumps(generation | {"num_beams": 3, "max_new_tokens": 12}))
    template = "translate English to {lang_name}: {source}"
    (final / "prompt.json").write_text(json.dumps({"template": template, "languages": ["de", "fr"]}))
    rows = [{"source": f"The doctor number {i} is here.", "target": f"Ziel {i}.", "lang": "de" if i % 2 else "fr"}
            for i in range(12)]  # fmt: skip
    (root / "run" / "validation_split.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    names = {"de": "German", "fr": "French"}
    texts = [template.format(lang_name=names[r["lang"]], source=r["source"]) for r in rows]
    return final, texts, [r["target"] for r in rows]


@pytest.mark.parametrize(
    ("case", "quantization"),
    [("bart run", "float32"), ("bart files", "auto"), ("t5", "int8"), ("t5 run", "float32")],
)
def test_the_self_check_figures_are_sacrebleu_on_both_engines(
    case, quantization, tiny_run, tiny_t5, multi30k_small, tmp_path, capsys
):
    """Each case takes its sample from another place: the run's validation files (the model is tiny_run's final/),
    --check_source/--check_reference, the built-in sample, a held-out validation_split.jsonl with a prompt."""
    n, references, extra = 12, None, []
    val_en = (multi30k_small / "val.en").read_text().splitlines()[:n]
    val_de = (multi30k_small / "val.de").read_text().splitlines()[:n]
    if case.startswith("bart"):
        model, texts, references = tiny_run / "final", val_en, val_de
    if case == "bart files":
        (tmp_path / "src.txt").write_text("\n".join(val_en) + "\n")
        (tmp_path / "ref.txt").write_text("\n".join(val_de) + "\n")
        extra = ["--check_source", str(tmp_path / "src.txt"), "--check_reference", str(tmp_path / "ref.txt")]
    if case == "t5":
        model, texts = tiny_t5, [en for en, _ in generate_corpus(seed=0, n_train=0, n_valid=0, n_test=n).test]
    if case == "t5 run":
        model, texts, references = t5_run(tiny_t5, tmp_path)
    out = tmp_path / "ct2"
    argv = [str(model), str(out), "--check_samples", str(n), *extra]
    status, printed, err = cli(export_main, argv + ([] if quantization == "auto" else ["--quantization", quantization]),
                               capsys)  # fmt: skip
    assert status == 0, err
    info = json.loads((out / "mtkit_ct2.json").read_text())
    check = info["check"]
    if quantization == "auto":
        assert info["quantization"] == ("int8_bfloat16" if CUDA else "int8")
    gen = json.loads((model / "generation_config.json").read_text())
    options = {"beam_size": gen.get("num_beams", 4), "length_penalty": gen.get("length_penalty", 1.0),
               "max_new_tokens": gen.get("max_new_tokens", 256), "max_len_a": gen.get("max_len_a", 1.5),
               "max_len_b": gen.get("max_len_b", 10)}  # fmt: skip
    assert check["decoding"] == options and check["sentences"] == n and check["passed"]
    hf, ct2 = Translator(model, dtype="fp32"), CT2Translator(out, device=str(Translator(model).device))
    for key, beam in (("greedy", 1), ("beam", options["beam_size"])):
        settings = DecodingSettings(**{key: value for key, value in options.items() if key != "beam_size"})
        expected = hf.translate(texts, replace(settings, num_beams=beam))
        got = ct2.translate(texts, replace(settings, num_beams=beam))
        same = sum(a == b for a, b in zip(expected, got))
        assert (check[key]["identical"], check[key]["agreement"]) == (same, same / n), key
        assert check[key]["bleu"] == pytest.approx(sacrebleu.corpus_bleu(got, [expected]).score), key
    if references is not None:
        assert check["beam"]["reference_bleu"] == pytest.approx({
            "transformers": sacrebleu.corpus_bleu(expected, [references]).score,
            "ctranslate2": sacrebleu.corpus_bleu(got, [references]).score,
            "difference": sacrebleu.corpus_bleu(got, [references]).score
            - sacrebleu.corpus_bleu(expected, [references]).score,
        })  # fmt: skip
    least_agreement, least_bleu = BOUNDS[info["quantization"]]
    assert check["greedy"]["agreement"] >= least_agreement or check["greedy"]["bleu"] >= least_bleu
    lines = [line for line in err.splitlines() if line.startswith("CTranslate2 self-check")]
    assert len(lines) == 1 and f"greedy {check['greedy']['identical']}/{n} identical" in lines[0]


def test_the_end_of_run_conversion_is_checked_on_the_run_validation_data(tiny_run):
    check = json.loads((tiny_run / "final_ct2" / "mtkit_ct2.json").read_text())["check"]
    assert check["passed"] and check["sentences"] == 32 and "the run's validation data" in check["sample"]
    assert check["greedy"]["agreement"] == 1.0  # float32: what transformers computes
    assert set(check["beam"]["reference_bleu"]) == {"transformers", "ctranslate2", "difference"}


@pytest.mark.parametrize(("quantization", "broken"), [("float32", "another seed"), ("int8", "shuffled rows")])
def test_a_broken_conversion_fails_the_check_in_one_line_and_leaves_no_out(
    quantization, broken, tiny_run, tmp_path, monkeypatch, capsys
):
    load = ctranslate2.converters.TransformersConverter.load_model

    def wrong_weights(self, model_class, path, **kwargs):
        model = load(self, model_class, path, **kwargs)
        with torch.no_grad():
            if broken == "another seed":
                torch.manual_seed(1)
                model.load_state_dict(type(model)(model.config).state_dict())
            for name, weight in model.named_parameters():
                if broken == "shuffled rows" and weight.dim() == 2 and "embed" not in name and "shared" not in name:
                    weight.copy_(weight[torch.randperm(weight.shape[0], generator=torch.Generator().manual_seed(0))])
        return model

    monkeypatch.setattr(ctranslate2.converters.TransformersConverter, "load_model", wrong_weights)
    out = tmp_path / "ct2"
    argv = [str(tiny_run / "final"), str(out), "--quantization", quantization, "--check_samples", "12"]
    status, printed, err = cli(export_main, argv, capsys)
    assert status == 2 and nothing_written(out)
    line = error_line(err)
    assert line.startswith(f"error: --quantization {quantization}: the converted model fails its self-check")
    assert "CTranslate2 self-check (" in line and "--check_samples 0" in line
    assert "CTranslate2 model (" not in printed


def test_check_samples_0_skips_the_check_and_says_so(tiny_t5, tmp_path, capsys):
    out = export_ct2(tiny_t5, tmp_path / "ct2", "float32", check_samples=0)
    assert "CTranslate2 self-check skipped (--check_samples 0)" in capsys.readouterr().err
    assert json.loads((out / "mtkit_ct2.json").read_text())["check"] is None


def test_check_files_that_do_not_fit_are_one_line(tiny_t5, tmp_path, capsys):
    (tmp_path / "src.txt").write_text("One.\nTwo.\nThree.\n")
    (tmp_path / "ref.txt").write_text("Eins.\nZwei.\n")
    out = tmp_path / "ct2"
    for extra, expected in [
        (["--check_source", str(tmp_path / "src.txt"), "--check_reference", str(tmp_path / "ref.txt")],
         f"error: --check_reference {tmp_path / 'ref.txt'}: 2 lines for 3 sources"),
        (["--check_source", str(tmp_path / "no.txt")], f"error: --check_source {tmp_path / 'no.txt'}: no such file"),
        (["--check_reference", str(tmp_path / "ref.txt")], "error: --check_reference: only used with --check_source"),
        (["--check_samples", "-1"], "error: --check_samples: must be >= 0, got -1"),
    ]:  # fmt: skip
        status, _, err = cli(export_main, [str(tiny_t5), str(out), *extra], capsys)
        assert (status, err.strip().splitlines()) == (2, [expected]) and nothing_written(out)
