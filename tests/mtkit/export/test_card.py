"""The model card of every model folder: parsed by huggingface_hub's own ModelCard/ModelCardData, rendered from
Markdown to HTML with its tables, and holding what the run recorded (checked against the run's files read here and
against sacreBLEU and transformers called directly); the gender-bias sections of scripts/bias_report.py and
scripts/compare_reports.py."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import reference_hyps, write_hyps
from huggingface_hub import ModelCard
from markdown_it import MarkdownIt
from testing_utils import rows, script_in_process

from mtkit.cli.bias_report import main as report_main
from mtkit.cli.compare_reports import main as compare_main
from mtkit.config import parse_config
from mtkit.export.averaging import average_checkpoints
from mtkit.export.checkpoint import export_checkpoint
from mtkit.pipeline import write_final_card
from mtkit.train.record import RunRecord


class Tables(HTMLParser):
    """The tables of an HTML page as lists of rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data) -> None:
        if self.cell is not None:
            self.cell.append(data)


def rendered_tables(card: ModelCard) -> list[list[list[str]]]:
    """The card's body rendered to HTML (CommonMark with GitHub tables, as the hub renders cards), its tables."""
    parser = Tables()
    parser.feed(MarkdownIt("commonmark").enable("table").render(card.text))
    return parser.tables


def corpus(path: Path, hyp: str = "hypothesis", ref: str = "target") -> tuple[float, float]:
    """sacreBLEU's BLEU and chrF of a translations file, computed here."""
    records = rows(path)
    hyps, refs = [r[hyp] for r in records], [[r[ref] for r in records]]
    return sacrebleu.corpus_bleu(hyps, refs).score, sacrebleu.corpus_chrf(hyps, refs).score


def test_the_final_card_parses_renders_and_holds_what_the_run_recorded(tiny_run):
    from transformers import AutoModelForSeq2SeqLM

    final = tiny_run / "final"
    card = ModelCard.load(final / "README.md")
    data = card.data
    assert data.language == ["en", "de"] and data.pipeline_tag == "translation" and data.license == "other"
    assert {"translation", "mtkit", "bart"} <= set(data.tags) and data.library_name == "transformers"
    bleu, chrf = corpus(tiny_run / "translations" / "test.jsonl")
    found = {(r.task_type, r.dataset_split, r.dataset_config, r.metric_type): r.metric_value for r in data.eval_results}
    key = ("translation", "test_2016_flickr", "en-de")
    assert found == {(*key, "bleu"): round(bleu, 2), (*key, "chrf"): round(chrf, 2)}

    tables = rendered_tables(card)
    training = {row[0]: row[1] for row in tables[0][1:]}
    log = rows(tiny_run / "metrics.jsonl")
    tokens = round(sum(r["tgt_tok_s"] * r["elapsed_s"] for r in log if "elapsed_s" in r))
    assert training["tokens seen"] == f"{tokens:,} target tokens (non-padding)"
    assert f"{AutoModelForSeq2SeqLM.from_pretrained(final).num_parameters() / 1e6:.1f}M parameters" in training["model"]
    assert training["data"].endswith("train 3,000 pairs, validation 64 pairs, test 48 pairs")
    assert training["launcher"] == "no distribution, 1 process(es), precision no"
    results = json.loads((tiny_run / "results.json").read_text())
    best = results["best_step"]
    valid = next(r for r in log if r["step"] == best and "valid_bleu" in r)
    assert tables[1][1:] == [
        [f"validation (val, update {best})", "de", f"{valid['valid_bleu']:.2f}", f"{valid['valid_chrf']:.2f}"],
        ["test (test_2016_flickr)", "de", f"{bleu:.2f}", f"{chrf:.2f}"],
    ]

    generation = json.loads((final / "generation_config.json").read_text())
    assert f"Beam {generation['num_beams']}, length penalty {generation['length_penalty']}, at most 16 " in card.text
    command = re.search(r"```bash\n(python scripts/train.py [^\n]+)\n", card.text).group(1)
    again = parse_config(shlex.split(command)[2:]).to_dict()
    saved = parse_config(["--config", str(tiny_run / "config.yaml")]).to_dict()
    saved["train"]["mixed_precision"] = "no"  # the precision that ran, spelled out
    assert again == saved


def test_exported_and_averaged_checkpoints_say_which_weights_they_hold(tiny_run, tmp_path):
    log = {r["step"]: r for r in rows(tiny_run / "metrics.jsonl") if "valid_bleu" in r}
    out = export_checkpoint(tiny_run / "checkpoints" / "step-0000020", tmp_path / "ex", log=lambda _: None)
    card = ModelCard.load(out / "README.md")
    training = {row[0]: row[1] for row in rendered_tables(card)[0][1:]}
    assert training["weights"] == "step-0000020 (update 20)" and training["updates"] == "20 of --max_steps 40"
    assert rendered_tables(card)[1][1:] == [
        ["validation (val, update 20)", "de", f"{log[20]['valid_bleu']:.2f}", f"{log[20]['valid_chrf']:.2f}"]
    ]
    assert {r.dataset_split for r in card.data.eval_results} == {"val"}
    assert f"python scripts/export_model.py {tiny_run}/checkpoints/step-0000020 {out}" in card.text

    average_checkpoints(tiny_run, tmp_path / "avg", last=2, log=lambda _: None)
    card = ModelCard.load(tmp_path / "avg" / "README.md")
    training = {row[0]: row[1] for row in rendered_tables(card)[0][1:]}
    assert training["weights"] == "the mean of 2 checkpoints (--last 2: updates 20, 40)"
    assert rendered_tables(card)[1][1:] == [["not evaluated", "", "", ""]]
    assert card.data.eval_results is None and card.data.language == ["en", "de"]


def bias_figures(report: Path, lang: str) -> dict[str, float]:
    """BLEU of the feminine and masculine translations of a report, recomputed from its details with sacreBLEU."""
    details = rows(report / f"{lang}.details.jsonl")
    return {
        f"bleu_{g}": sacrebleu.corpus_bleu([d[f"hypothesis_{g}"] for d in details],
                                           [[d[f"reference_{g}"] for d in details]]).score
        for g in ("feminine", "masculine")
    }  # fmt: skip


@pytest.fixture
def model_copy(tiny_run, tmp_path) -> Path:
    """A copy of the run's final/ (the shared run stays as it is)."""
    return Path(shutil.copytree(tiny_run / "final", tmp_path / "model"))


def test_a_bias_report_and_a_comparison_go_into_the_card_in_place(tiny_run, model_copy, small_geneval, tmp_path):
    before_files = sorted(p.name for p in model_copy.iterdir())
    args = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "de"]
    args += ["--model", str(model_copy), "--num_beams", "1", "--bootstrap_samples", "50", "--out", str(tmp_path / "r")]
    args += ["--update_card", "--no_figures"]  # the card takes the figures of metrics.json, none of the drawn ones
    res = script_in_process(report_main, *args)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"model card updated: {model_copy / 'README.md'}" in res.stdout
    card = ModelCard.load(model_copy / "README.md")
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())["languages"]["de"]
    figures = bias_figures(tmp_path / "r", "de")
    table = next(t for t in rendered_tables(card) if t[0][:3] == ["language", "BLEU f", "BLEU m"])
    assert table[1][:3] == ["de", f"{figures['bleu_feminine']:.2f}", f"{figures['bleu_masculine']:.2f}"]
    low, high = metrics["bleu_gap_ci95"]
    assert table[1][3] == f"{metrics['bleu_gap']:+.2f} [{low:+.2f}, {high:+.2f}]"
    task = "Gender bias in translation"
    bias = {r.metric_type: r.metric_value for r in card.data.eval_results if r.task_name == task}
    assert bias["bleu_feminine"] == round(figures["bleu_feminine"], 4) and "accuracy_pair" in bias
    assert {r.metric_type for r in card.data.eval_results if r.task_name == "Translation"} == {"bleu", "chrf"}
    assert "gender-bias" in card.data.tags and "MT-GenEval covers English into eight languages" in card.text
    assert (
        len(re.findall(r"^## Gender bias: MT-GenEval test, de$", card.text, re.M)) == 1 and "## Training" in card.text
    )
    assert sorted(p.name for p in model_copy.iterdir()) == before_files  # nothing beside the card, no temp file
    # the end of a run writes the same card at once, from its record in memory (no card read back in between): here
    # into a copy of the run's final/, config and log, with the run's record and this report's figures
    final, again = tiny_run / "final", tmp_path / "again" / tiny_run.name
    shutil.copytree(final, again / "final")
    for name in ("config.yaml", "metrics.jsonl"):
        shutil.copy(tiny_run / name, again / name)
    record = RunRecord.read(tiny_run)
    record.bias = json.loads((tmp_path / "r" / "metrics.json").read_text())
    cfg = parse_config(["--config", str(tiny_run / "config.yaml")])
    fresh = write_final_card(cfg, again, record).read_text().replace(str(again / "final"), str(final))
    assert fresh == (model_copy / "README.md").read_text()

    # a system that always writes the masculine reference, before; this model, after
    hyps = write_hyps(tmp_path / "hyps", reference_hyps(small_geneval, ["de"], "test", lambda g: "masculine"))
    before = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "de", "--hyp_dir", str(hyps)]
    before += ["--out", str(tmp_path / "b"), "--bootstrap_samples", "50", "--no_figures"]
    assert script_in_process(report_main, *before).returncode == 0
    res = script_in_process(compare_main, str(tmp_path / "b"), str(tmp_path / "r"), "--names", "reference,tiny")
    assert res.returncode == 0, res.stderr[-2000:]
    card = ModelCard.load(model_copy / "README.md")
    assert "### Gender bias before and after" in card.text and card.text.index("## Gender bias") < card.text.index(
        "### Gender bias before and after"
    )
    compared = next(t for t in rendered_tables(card) if t[0][:3] == ["lang", "figure", "reference"])
    gap = next(row for row in compared if row[:2] == ["de", "BLEU gap"])
    earlier = json.loads((tmp_path / "b" / "metrics.json").read_text())["languages"]["de"]
    assert (gap[2], gap[4]) == (f"{earlier['bleu_gap']:+.2f}", f"{metrics['bleu_gap']:+.2f}")

    # a new report replaces the section and drops the comparison, which no longer matches it
    assert script_in_process(report_main, *args).returncode == 0
    text = (model_copy / "README.md").read_text()
    assert len(re.findall(r"^## Gender bias", text, re.M)) == 1 and "before and after" not in text


def test_a_zero3_run_s_card_names_its_launcher_and_base_model(zero3_run, tiny_t5):
    card = ModelCard.load(zero3_run / "final" / "README.md")
    training = {row[0]: row[1] for row in rendered_tables(card)[0][1:]}
    assert training["launcher"] == "DeepSpeed ZeRO-3, 2 process(es), precision no"
    assert training["model"].startswith(f"fine-tuned from {tiny_t5}; ")
    assert card.data.base_model is None  # a local folder, nothing on the hub
    assert card.data.language == ["en", "de", "es", "fr", "it", "pt"] and "gsarti/mt_geneval" in card.data.datasets
    launcher = "accelerate launch --config_file accelerate_configs/deepspeed_zero3.yaml --num_processes 2 "
    command = re.search(rf"```bash\n{launcher}(scripts/train.py [^\n]+)\n", card.text).group(1)
    saved = parse_config(["--config", str(zero3_run / "config.yaml")]).to_dict()
    assert parse_config(shlex.split(command)[1:]).to_dict() == saved
    prompted = 'Translate the following sentence from English to German: "The doctor said that she was tired."'
    assert f"inputs = tokenizer({json.dumps(prompted)}, " in card.text  # the saved prompt, applied in the example


#: what marks a placeholder left in a card: a name in capitals standing for a path, or a template slot
PLACEHOLDER = re.compile(r"\b(OUTDIR|DIR|TODO|XXX|FIXME)\b|\{[a-z_]+\}")
#: a file name in backticks (`generation_config.json`): a claim that the model folder holds it
NAMED_FILE = re.compile(r"`([\w.\-]+\.(?:json|safetensors|bin|md|html|txt|model))`")


def links(text: str) -> list[str]:
    """The targets of the card's markdown links and images, as the hub's renderer finds them."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    found = []
    for token in tokens:
        for child in token.children or []:
            if child.type in ("link_open", "image"):
                found.append(child.attrGet("href") or child.attrGet("src"))
    return found


def check_truth(model_dir: Path) -> ModelCard:
    """What every card must be, whatever its data: no placeholder, every file it names and every link it holds inside
    the folder and there, an intended-use section. Returns the card."""
    card = ModelCard.load(model_dir / "README.md")
    assert not PLACEHOLDER.search(card.text), PLACEHOLDER.search(card.text).group(0)
    named = set(NAMED_FILE.findall(card.text)) - {"README.md"}
    assert named and all((model_dir / name).is_file() for name in named), sorted(named)
    for target in links(card.text):
        if "://" not in target:
            resolved = (model_dir / target.split("#")[0]).resolve()
            assert resolved.is_relative_to(model_dir.resolve()) and resolved.exists(), target
    assert "../" not in card.text
    assert "## Intended use and limitations" in card.text
    return card


def test_the_demo_s_card_states_only_what_is_true(demo_run):
    """The demo's card (its run and its bias report on the corpus's gender pairs): the data is the synthetic demo
    corpus, named as such, never MT-GenEval or Wikipedia; no placeholder, no file final/ lacks, no link out of it."""
    final = demo_run / "final"
    card = check_truth(final)
    assert not (final / "prompt.json").exists() and "prompt.json" not in card.text
    training = {row[0]: row[1] for row in rendered_tables(card)[0][1:]}
    assert training["data"].startswith(f"the toolkit's synthetic demo corpus in {demo_run.name}_corpus/ (generated by ")
    assert training["data"].endswith("train 4,000 pairs, validation 40 pairs, test 40 pairs")  # DEMO_SMALL's sizes
    assert not card.data.datasets  # nothing on the hub
    assert "mt_geneval" not in str(card.data.to_dict()) and "MT-GenEval covers" not in card.text
    assert "Wikipedia" not in card.text and "synthetic" in card.text.split("## Intended use and limitations")[1]
    assert {r.dataset_type for r in card.data.eval_results} == {"mtkit-demo-corpus", "mtkit-demo-corpus-gender-pairs"}
    tasks = {(r.task_name, r.dataset_name) for r in card.data.eval_results}
    assert tasks == {("Translation", "mtkit demo corpus (test)"),
                     ("Gender bias in translation", "mtkit demo corpus gender pairs (test)")}  # fmt: skip
    assert re.findall(r"^## Gender bias.*$", card.text, re.M) == ["## Gender bias: demo corpus test, es"]
    assert "not part of this folder: the command below rebuilds it" in card.text
    report = (demo_run / "bias_report" / "report.md").read_text()
    assert "OUTDIR" not in report and f"cached in {demo_run / 'bias_report' / 'hyps'}" in report


def test_a_run_on_local_files_names_them_as_local_files(tiny_run):
    card = check_truth(tiny_run / "final")
    training = {row[0]: row[1] for row in rendered_tables(card)[0][1:]}
    assert training["data"].startswith("local parallel files in multi30k_small/ (--data_dir): train 3,000 pairs")
    assert "prompt.json" not in card.text and "demo corpus" not in card.text and not card.data.datasets


def test_a_bias_report_changes_the_card_only_when_asked_and_keeps_each_set_s_section(demo_run, small_geneval, tmp_path):
    """The demo model reported on real MT-GenEval (es): without --update_card the card stays as it is; with it, the
    card gains that set's section (with the warning: garbage output) beside the demo corpus's, which stays word for
    word; the same report again replaces its own section only."""
    model = Path(shutil.copytree(demo_run / "final", tmp_path / "model"))
    before = (model / "README.md").read_bytes()
    demo_section = re.search(r"## Gender bias: demo corpus test, es.*?(?=<!-- /mtkit)", before.decode(), re.S).group(0)
    args = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "es", "--model", str(model)]
    args += ["--num_beams", "1", "--max_new_tokens", "16", "--bootstrap_samples", "20", "--force", "--no_figures"]
    out = str(tmp_path / "reports" / "real_es")  # one folder: the reports below reuse this one's translations
    res = script_in_process(report_main, *args, "--out", out)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (model / "README.md").read_bytes() == before and "--update_card adds" in res.stdout

    for _ in range(2):
        res = script_in_process(report_main, *args, "--out", out, "--update_card")
        assert res.returncode == 0, res.stderr[-2000:]
        card = check_truth(model)
        titles = re.findall(r"^## Gender bias.*$", card.text, re.M)
        assert titles == ["## Gender bias: demo corpus test, es", "## Gender bias: MT-GenEval test, es"]
        assert demo_section in card.text
        metrics = json.loads((tmp_path / "reports" / "real_es" / "metrics.json").read_text())
        section = card.text.split("## Gender bias: MT-GenEval test, es")[1]
        assert metrics["warning"] and section.lstrip().startswith(f"> **Warning:** {metrics['warning']['message']}")
        assert "MT-GenEval covers" in section and "MT-GenEval covers" not in demo_section
        found = {(r.dataset_type, r.dataset_name) for r in card.data.eval_results if r.task_name != "Translation"}
        demo_pairs, real = (
            ("mtkit-demo-corpus-gender-pairs", "mtkit demo corpus gender pairs (test)"),
            ("gsarti/mt_geneval", "MT-GenEval (test)"),
        )
        assert found == {demo_pairs, real}
        assert len(card.data.eval_results) == len({(r.dataset_name, r.metric_type) for r in card.data.eval_results})

    res = script_in_process(report_main, *args[:6], "--model", "google/flan-t5-small", "--out", str(tmp_path / "x"),
                     "--update_card")  # fmt: skip
    assert res.returncode == 2 and res.stderr.startswith("error: --update_card: only used with --model a local")
