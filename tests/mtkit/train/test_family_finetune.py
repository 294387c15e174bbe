"""Fine-tuning each Hub family (tiny stand-ins with their real architecture and tokenizer class, tests/families.py)
on two target languages, and what a run leaves: labels starting with each pair's own target code, evaluation forcing
each language, a one-target final/ that plain transformers decodes into its language, and bias_report.py on final/
and on the pretrained folder forcing the language it scores."""

import json

import pytest
import torch
from datasets import Dataset
from families import FAMILY_LANG_CODES, TGT_LANG_ARG
from testing_utils import MTGENEVAL, train_in_process
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
from transformers.generation.utils import GenerationMixin

FAMILIES = ("marian_multi", "m2m100", "nllb", "mbart50", "mt5", "flan_t5")
FORCED = ("m2m100", "nllb", "mbart50")


def pairs(path, n: int = 150) -> str:
    """The first ``n`` MT-GenEval dev pairs of German and of Spanish, as a JSONL file with a language_pair column."""
    rows = []
    for lang in ("de", "es"):
        stem = f"geneval-sentences-feminine-dev.en_{lang}"
        sources, targets = (
            (MTGENEVAL / "sentences" / "dev" / f"{stem}.{side}").read_text(encoding="utf-8").splitlines()[:n]
            for side in ("en", lang)
        )
        rows += [{"source": s, "target": t, "language_pair": f"en-{lang}"} for s, t in zip(sources, targets)]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def args(model, out, langs: str, *extra: str) -> list[str]:
    return [
        "--train_file", pairs(out.parent / f"{out.name}.jsonl"),
        "--target_langs", langs, "--model_name_or_path", str(model),
        "--output_dir", str(out), "--max_tokens", "1024", "--max_source_length", "128", "--max_target_length", "128",
        "--max_steps", "1", "--eval_steps", "1", "--eval_max_samples", "8", "--max_new_tokens", "4",
        "--num_beams", "1", "--eval_batch_size", "8", "--report_to", "none", "--disable_tqdm", "--logging_steps", "1",
        "--test_split", "none", "--mixed_precision", "no", "--learning_rate", "1e-3", *extra,
    ]  # fmt: skip


class GenerateCalls(list):
    """Each ``generate`` call's forced token and the second token of its outputs (the first after the decoder
    start); transformers' own ``generate`` runs."""

    def __init__(self, monkeypatch) -> None:
        super().__init__()
        real = GenerationMixin.generate

        def generate(model, *a, **kwargs):
            ids = real(model, *a, **kwargs)
            self.append((kwargs.get("forced_bos_token_id"), set(ids[:, 1].tolist())))
            return ids

        monkeypatch.setattr(GenerationMixin, "generate", generate)


@pytest.fixture(scope="module")
def two_target_runs(family_dir, tmp_path_factory):
    """A two-target (de, es) fine-tune of each family, and the generate calls of its evaluation."""
    runs = {}
    for family in FAMILIES:
        out = tmp_path_factory.mktemp(f"ft-{family}")
        extra = ("--prompt", "t5") if family == "flan_t5" else ()
        with pytest.MonkeyPatch.context() as patch:
            calls = GenerateCalls(patch)
            res = train_in_process(*args(family_dir(family), out, "de,es", *extra))
        runs[family] = (out, res, list(calls))
    return runs


@pytest.fixture(scope="module")
def one_target_runs(family_dir, tmp_path_factory):
    runs = {}
    for family in FORCED:
        out = tmp_path_factory.mktemp(f"ft1-{family}")
        res = train_in_process(*args(family_dir(family), out, "es"))
        runs[family] = (out, res)
    return runs


@pytest.mark.parametrize("family", FAMILIES)
def test_two_target_fine_tune_labels_each_pair_with_its_language(family, two_target_runs, family_dir):
    out, res, calls = two_target_runs[family]
    assert res.returncode == 0, res.stderr[-3000:]
    rows = Dataset.from_file(str(next((out / "cache").glob("train-*.arrow"))))
    assert set(rows["lang"]) == {"de", "es"}
    tok = AutoTokenizer.from_pretrained(family_dir(family))  # the tokenizer called directly, language set
    kept = [i for i, cut in enumerate(rows["truncated"]) if not cut]
    assert len(kept) >= 40
    for row in rows.select(kept[:: max(1, len(kept) // 40)]):
        if family in FORCED:
            tok.src_lang, tok.tgt_lang = TGT_LANG_ARG[family]["en"], TGT_LANG_ARG[family][row["lang"]]
            assert tok.convert_ids_to_tokens(row["labels"][0]) == FAMILY_LANG_CODES[family][row["lang"]]
        source = row["source"]
        if family in ("marian_multi", "mt5"):
            source = f"{FAMILY_LANG_CODES[family][row['lang']]} {source}"
        elif family == "flan_t5":
            source = f"translate English to {dict(de='German', es='Spanish')[row['lang']]}: {source}"
        assert row["labels"] == tok(text_target=row["target"])["input_ids"]
        assert row["input_ids"] == tok(source)["input_ids"]
    card = (out / "final" / "README.md").read_text(encoding="utf-8")
    if family in FAMILY_LANG_CODES and FAMILY_LANG_CODES[family]:  # the card says how to choose the language
        assert f"es `{FAMILY_LANG_CODES[family]['es']}`" in card and ("forced_bos_token_id" in card) == (
            family in FORCED
        )
    if family in FORCED:  # evaluation forced each language, and the model wrote it
        ids = {tok.convert_tokens_to_ids(FAMILY_LANG_CODES[family][lang]) for lang in ("de", "es")}
        assert {forced for forced, _ in calls} == ids
        assert all(seconds == {forced} for forced, seconds in calls)
    else:
        assert calls and all(forced is None for forced, _ in calls)


@pytest.mark.parametrize("family", FORCED)
def test_one_target_final_decodes_into_its_language_with_plain_transformers(family, one_target_runs):
    out, res = one_target_runs[family]
    assert res.returncode == 0, res.stderr[-3000:]
    final = out / "final"
    tok, model = AutoTokenizer.from_pretrained(final), AutoModelForSeq2SeqLM.from_pretrained(final)
    es = tok.convert_tokens_to_ids(FAMILY_LANG_CODES[family]["es"])
    with torch.no_grad():
        ids = model.generate(**tok(["The doctor said she was tired."], return_tensors="pt"), max_new_tokens=4)
    assert ids[0, 1].item() == es
    saved = json.loads((final / "generation_config.json").read_text())
    assert saved["forced_bos_token_id"] == es and saved["num_beams"] == 1 and saved["max_new_tokens"] == 4
    assert tok.convert_ids_to_tokens(tok("A man.")["input_ids"])[0] == FAMILY_LANG_CODES[family]["en"]


def test_final_keeps_the_pretrained_generation_config(two_target_runs, family_dir):
    """Marian's bad_words_ids and M2M100's max_length survive; the run's own settings (beam 1: no beam settings)
    replace the rest."""
    for family, key in (
        ("marian_multi", "bad_words_ids"),
        ("marian_multi", "renormalize_logits"),
        ("m2m100", "max_length"),
    ):
        out, res, _ = two_target_runs[family]
        saved = json.loads((out / "final" / "generation_config.json").read_text())
        pretrained = json.loads((family_dir(family) / "generation_config.json").read_text())
        assert saved[key] == pretrained[key] and saved["max_new_tokens"] == 4 and saved["num_beams"] == 1
        assert pretrained.get("num_beams", 1) > 1 and "early_stopping" not in saved


def gendered_table(path, langs) -> None:
    rows = [
        {"source": src, "reference": ref, "gender": gender, "language": lang}
        for lang in langs
        for gender, src, ref in (
            ("feminine", "The doctor said she was tired.", "x"),
            ("masculine", "The doctor said he was tired.", "y"),
        )
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("where", ["final", "pretrained"])
def test_bias_report_forces_the_language_it_scores(where, one_target_runs, family_dir, tmp_path, monkeypatch):
    from mtkit.cli.bias_report import main

    out, res = one_target_runs["nllb"]
    model, langs = (out / "final", ["es"]) if where == "final" else (family_dir("nllb"), ["de", "es"])
    gendered_table(tmp_path / "data.jsonl", langs)
    calls = GenerateCalls(monkeypatch)
    report = tmp_path / "report"
    code = main(["--data", str(tmp_path / "data.jsonl"), "--model", str(model), "--out", str(report),
                 "--bootstrap_samples", "0", "--max_new_tokens", "4", "--num_beams", "1"])  # fmt: skip
    assert code == 0 and (report / "metrics.json").is_file()
    tok = AutoTokenizer.from_pretrained(model)
    expected = {tok.convert_tokens_to_ids(FAMILY_LANG_CODES["nllb"][lang]) for lang in langs}
    assert {forced for forced, _ in calls} == expected
    assert all(seconds == {forced} for forced, seconds in calls)


def test_one_target_final_in_ctranslate2_writes_its_language(one_target_runs, tmp_path):
    """The converted one-target NLLB final/ decodes into Spanish without being told (its generation config's forced
    token becomes CTranslate2's target prefix), as transformers does."""
    import ctranslate2

    from mtkit.decode.ct2 import CT2Translator
    from mtkit.decode.settings import DecodingSettings
    from mtkit.export.ct2 import export_ct2

    out, _ = one_target_runs["nllb"]
    converted = export_ct2(out / "final", tmp_path / "ct2", "float32", check_samples=4)
    tok = AutoTokenizer.from_pretrained(converted)
    source = tok.convert_ids_to_tokens(tok("The doctor is tired.")["input_ids"])
    prefix = CT2Translator(converted, device="cpu").languages.target_prefix("es")
    assert prefix == [FAMILY_LANG_CODES["nllb"]["es"]]
    hyp = ctranslate2.Translator(str(converted)).translate_batch(
        [source], target_prefix=[prefix], max_decoding_length=4
    )
    engine = CT2Translator(converted, device="cpu")
    assert engine.default_lang == "es"
    greedy = DecodingSettings(num_beams=1, max_new_tokens=4)
    assert engine.translate(["The doctor is tired."], greedy) == [
        tok.decode(tok.convert_tokens_to_ids(hyp[0].hypotheses[0][1:]), skip_special_tokens=True).strip()
    ]
