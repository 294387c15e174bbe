"""The end of a mitigation run in-process: the verdict's models (a start and a ``final/`` whose folders hold other
decoding settings, prompt and weight type; a control arm's ``final/`` goes the same way, in
tests/mtkit/train/test_mitigation.py) decode with one set of settings, ``final/``'s, which the page states."""

import json
import shutil
from types import SimpleNamespace

from datasets import Dataset
from testing_utils import MTGENEVAL, REPO, WINOMT

from bias_eval.winomt.data import load_winomt, pair_translations, subset
from bias_eval.winomt.figures import figures
from bias_eval.winomt.score import score_translations
from mtkit.config import parse_config
from mtkit.evaluation.run_reports import winomt_report
from mtkit.pipeline import local_steps, write_final_card
from mtkit.train.mitigation_verdict import mitigation_verdict, verdict_translator, verdict_winomt
from mtkit.train.record import RunRecord

TEMPLATE = "translate English to {lang_name}: {source}"


def _pairs(n: int) -> list[dict]:
    """The first ``n`` German pairs of MT-GenEval dev, as a mitigation's verdict rows."""
    rows = []
    for gender in ("feminine", "masculine"):
        name = MTGENEVAL / "sentences" / "dev" / f"geneval-sentences-{gender}-dev.en_de"
        sources = name.with_suffix(".en_de.en").read_text(encoding="utf-8").splitlines()[:n]
        targets = name.with_suffix(".en_de.de").read_text(encoding="utf-8").splitlines()[:n]
        rows += [{"source": s, "target": t, "lang": "de", "gender": gender, "pair_id": str(i)}
                 for i, (s, t) in enumerate(zip(sources, targets))]  # fmt: skip
    return rows


def _settings(folder, **generation) -> None:
    """Decoding settings of the model folder's own: its generation config (and what else is given)."""
    path = folder / "generation_config.json"
    saved = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    path.write_text(json.dumps(saved | generation), encoding="utf-8")


def test_the_verdicts_models_decode_with_one_settings_object(tiny_t5, tmp_path) -> None:
    start, final, run = tmp_path / "start", tmp_path / "run" / "final", tmp_path / "run"
    for folder in (start, final):
        shutil.copytree(tiny_t5, folder)
    _settings(start, num_beams=3, max_new_tokens=30, max_len_a=2.0, max_len_b=30)
    _settings(final, num_beams=2, max_new_tokens=8, max_len_a=0.5, max_len_b=4)
    (final / "prompt.json").write_text(json.dumps({"template": TEMPLATE, "source_lang": "en"}), encoding="utf-8")
    config = json.loads((final / "config.json").read_text(encoding="utf-8"))
    (final / "config.json").write_text(json.dumps(config | {"dtype": "bfloat16"}), encoding="utf-8")
    start_scores = {"step": 0, "valid_general_bleu": 1.0, "valid_accuracy_feminine": 0.5,
                    "valid_accuracy_masculine": 0.6, "valid_strict_accuracy_feminine": 0.3,
                    "valid_strict_accuracy_masculine": 0.4, "valid_accuracy_pair": 0.4, "valid_loss": 3.0}  # fmt: skip
    (run / "metrics.jsonl").write_text(json.dumps(start_scores) + "\n", encoding="utf-8")
    cfg = parse_config(["--config", str(REPO / "recipes" / "demo_mitigate.yaml"), "--model_name_or_path", str(start),
                        "--gender_data", str(tmp_path), "--output_dir", str(run), "--num_beams", "2",
                        "--max_new_tokens", "8", "--max_len_a", "0.5", "--max_len_b", "4", "--eval_batch_size", "8",
                        "--force_coverage", "--winomt_dir", str(WINOMT), "--winomt_max_samples", "4"])  # fmt: skip
    trainer = SimpleNamespace(raw={"verdict": Dataset.from_list(_pairs(6)), "tuning": Dataset.from_list(_pairs(0))},
                              out=run)  # fmt: skip
    record = RunRecord({"best_step": 0})
    out = mitigation_verdict(cfg, trainer, None, run / "verdict", record)
    used = [json.loads((out / n / "metrics.json").read_text())["config"]["hypotheses"] for n in ("start", "mitigated")]
    assert used[0]["generation"] == used[1]["generation"] and used[0]["prompts"] == used[1]["prompts"]
    generation = used[0]["generation"]
    expected = {"num_beams": 2, "max_new_tokens": 8, "max_len_a": 0.5, "max_len_b": 4, "prompt": TEMPLATE}
    assert {key: generation[key] for key in expected} == expected and generation["dtype"] == "bf16"
    page = (out / "verdict.md").read_text(encoding="utf-8")
    assert "- start, mitigated alike: beam 2, length penalty 1.0, at most 8 new tokens and 0.5 x source + 4, " \
        f"prompt {TEMPLATE!r}, dtype bf16" in page  # fmt: skip
    assert record.verdict_page == page and record.comparison.names == ["start", "mitigated"]  # for the card
    assert json.loads((out / "verdict.json").read_text())["budget"]["worse_served"] == "feminine"
    assert json.loads((out / "verdict.json").read_text())["decoding"]["same"]
    winomt = json.loads((out / "verdict.json").read_text())["winomt"]  # out of domain, decoded alike
    assert list(winomt["models"]) == ["start", "mitigated"] and winomt["n"] == {"de": 4}
    assert winomt["mitigated_vs_control"] is None and "p_value" in winomt["mitigated_vs_start"]["de"]["accuracy_test"]
    scored = [json.loads((out / "winomt" / n / "de" / "metrics.json").read_text()) for n in ("start", "mitigated")]
    assert all(m["config"]["hypotheses"]["generation"] == generation for m in scored)
    assert "## WinoMT (out of domain" in page


def test_the_end_of_a_run_scores_final_on_winomt(tiny_run, tmp_path) -> None:
    """``--winomt_dir``'s end-of-run step on a trained run's ``final/``: its report of 8 sentences (stratified), whose
    headline figures in the record and the card are those of ``bias_eval.winomt`` scoring the saved translations."""
    cfg = parse_config(["--config", str(tiny_run / "config.yaml"), "--output_dir", str(tmp_path),
                        "--winomt_dir", str(WINOMT), "--winomt_max_samples", "8", "--num_beams", "1",
                        "--max_new_tokens", "8", "--export_ct2", ""])  # fmt: skip
    shutil.copytree(tiny_run / "final", tmp_path / "final")
    shutil.copy(tiny_run / "metrics.jsonl", tmp_path)
    record = RunRecord.read(tiny_run)
    local_steps(cfg, SimpleNamespace(), record, None)  # no CTranslate2, bias report or mitigation asked for
    winomt = record.results["winomt"]  # results.json's one copy, which the card reads
    assert winomt["folder"] == str(tmp_path / "winomt") and list(winomt["languages"]) == ["de"]
    folder = tmp_path / "winomt" / "de"
    data = subset(load_winomt(WINOMT), 8, 12345)
    hyps = (folder / "hyps" / "de.winomt.txt").read_text(encoding="utf-8").splitlines()
    sources = [item.sentence for item in data.items]
    found = figures(score_translations(pair_translations(data, sources, hyps, "hyps"), "de"), data, "de", samples=0)
    assert {key: winomt["languages"]["de"][key] for key in ("accuracy", "delta_g", "delta_s", "n")} == {
        key: found[key] for key in ("accuracy", "delta_g", "delta_s", "n")
    }
    assert json.loads((folder / "metrics.json").read_text())["accuracy"] == found["accuracy"]
    card = write_final_card(cfg, tmp_path, record).read_text(encoding="utf-8")
    assert f"| de | 8 | {found['accuracy']:.1f} [" in card


def test_a_language_winomt_does_not_score_is_named_once_at_the_end_of_a_run(tiny_t5, tmp_path, capsys) -> None:
    """A mitigation run's end reaches WinoMT twice, ``final/``'s report then the verdict's models; a target language
    WinoMT does not score (nl) is named in one line (nothing is decoded: it is the run's only language)."""
    cfg = parse_config(["--config", str(REPO / "recipes" / "demo_mitigate.yaml"), "--model_name_or_path", str(tiny_t5),
                        "--target_lang", "nl", "--gender_data", str(tmp_path), "--output_dir", str(tmp_path / "run"),
                        "--winomt_dir", str(WINOMT)])  # fmt: skip
    assert winomt_report(cfg, tiny_t5, tmp_path / "run" / "winomt") == {}
    translator = verdict_translator(cfg, tiny_t5)
    section = verdict_winomt(cfg, {"start": tiny_t5, "mitigated": tiny_t5}, ["nl"], tmp_path / "verdict", translator)
    assert section["languages"] == []
    warning = "warning: WinoMT scores de, es, fr, it, ru, uk, he, ar only: nl skipped"
    assert capsys.readouterr().err.splitlines() == [warning]
