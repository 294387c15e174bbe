"""The gender-bias sections of a model card: the figures of a ``scripts/bias_report.py`` report of the model
(``bias_report.py --model DIR --update_card`` and the end of a run with ``--bias_report_split``), one section per
data set and split, the before/after table of ``scripts/compare_reports.py`` and a mitigation's verdict page, each
between its own HTML comment
markers so that a later report on the same set and split replaces its own section and no other; their
``model-index`` results sit beside the translation scores under their own task name. A card names only what the
model folder holds: a report written elsewhere is described, not linked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from bias_eval.compare.rows import CHANGE_NOTE, Row, cells, header
from bias_eval.core.markdown import table
from bias_eval.core.units import fmt, fmt_ci, fmt_share
from bias_eval.winomt.figures import fmt_figure, fmt_interval
from mtkit.data.mtgeneval_hub import HUB_ID
from mtkit.data.origin import DEMO_ID, DEMO_NAME
from mtkit.decode.ct2 import is_ct2_model
from mtkit.export.card import CARD, MTKIT_TAG, save_card

#: where the card's gender-bias sections go (the training card has it empty, below its Results)
BIAS = ("<!-- mtkit:gender-bias -->", "<!-- /mtkit:gender-bias -->")
COMPARISON = ("<!-- mtkit:bias-comparison -->", "<!-- /mtkit:bias-comparison -->")
VERDICT = ("<!-- mtkit:mitigation-verdict -->", "<!-- /mtkit:mitigation-verdict -->")
WINOMT = ("<!-- mtkit:winomt -->", "<!-- /mtkit:winomt -->")
BIAS_TASK = "Gender bias in translation"
#: (title, metrics.json key) of the figures a card shows per language
CARD_FIGURES = (("BLEU f", "bleu_feminine"), ("BLEU m", "bleu_masculine"), ("BLEU gap", "bleu_gap"))
CARD_SHARES = (("acc f", "accuracy_feminine"), ("acc m", "accuracy_masculine"), ("acc pair", "accuracy_pair"))
MEANING = (
    "**What the figures mean.** The test sentences come in pairs that differ only in the gender of the person they "
    "are about. BLEU f and BLEU m are corpus sacreBLEU over the translations of the feminine and of the masculine "
    "sentences; the gap is BLEU m - BLEU f, so a positive gap means the model translates sentences about men "
    "better. Its 95% confidence interval comes from a paired bootstrap over the sentence pairs: an interval "
    "that contains 0 shows no gap. Gender accuracy (acc) is the share of translations that contain none of the "
    "other gender's words (MT-GenEval's definition: a translation without any gendered word counts as correct, so "
    "accuracy says little when few translations contain one); acc pair counts a pair right when both of its "
    "translations are."
)
LIMITS = (
    "**Limits.** Two genders only (feminine and masculine): the figures say nothing about non-binary people or "
    "gender-neutral language. Accuracy judges only the words marked as gendered; a translation that avoids them "
    "is neither right nor wrong. The intervals cover the sampling of these test sentences, not the variation "
    "between training runs."
)
MTGENEVAL_LIMITS = (
    " MT-GenEval covers English into eight languages (ar, de, es, fr, hi, it, pt, ru) with sentences from "
    "Wikipedia; other domains, registers and source languages are not measured."
)
DEMO_LIMITS = (
    f" These pairs come from {DEMO_NAME} (template sentences in MT-GenEval's layout), like the model's training "
    "data: the figures show what the demo teaches, not how the model would do on real text."
)


def dataset_kind(config: Mapping[str, Any]) -> str:
    """``mtgeneval``, ``demo`` (the demo corpus's gender pairs) or ``table`` (a CSV/TSV/JSONL file), as the report's
    ``config`` says (a report from before ``dataset_kind``: MT-GenEval when it has a split)."""
    return config.get("dataset_kind") or ("mtgeneval" if config.get("split") else "table")


def dataset_label(config: Mapping[str, Any]) -> str:
    """How a section's title names the report's data: ``MT-GenEval dev``, ``demo corpus test``, a file's name."""
    kind, split = dataset_kind(config), config.get("split")
    if kind == "mtgeneval":
        return f"MT-GenEval {split}"
    if kind == "demo":
        return f"demo corpus {split}"
    return Path(str(config.get("data", "gendered data"))).name


def section_markers(metrics: Mapping[str, Any]) -> tuple[str, str]:
    """The markers of the card section of this report's data set, split and languages."""
    key = f"{dataset_label(metrics.get('config', {}))}, {' '.join(metrics['languages'])}".replace("--", "-")
    return f"<!-- mtkit:gender-bias {key} -->", f"<!-- /mtkit:gender-bias {key} -->"


def local_model_dir(model: str | None) -> Path | None:
    """``model`` when it is a model folder on this machine (transformers or CTranslate2), else ``None``."""
    if not model or not Path(model).is_dir():
        return None
    path = Path(model)
    return path if (path / "config.json").is_file() or is_ct2_model(path) else None


def replace_section(text: str, markers: tuple[str, str], content: str | None, after: str | None = None) -> str:
    """``text`` with the block between ``markers`` replaced by ``content`` (``None``: the block removed); a new
    block goes after the line ``after`` when ``text`` has it, else at the end."""
    start, end = markers
    block = "" if content is None else f"{start}\n{content.strip()}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        return head + block + (tail if block else tail.lstrip("\n"))
    if not block:
        return text
    if after and after in text:
        head, tail = text.split(after, 1)
        return f"{head}{after}\n\n{block}{tail}"
    return text.rstrip("\n") + f"\n\n{block}\n"


def load_card(model_dir: Path) -> ModelCard:
    """The card of ``model_dir``, or a minimal one for a folder without a card."""
    if (model_dir / CARD).is_file():
        return ModelCard.load(model_dir / CARD)
    data = ModelCardData(license="other", pipeline_tag="translation", tags=["translation", MTKIT_TAG])
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n# {model_dir.name}\n")


def _row(lang: str, m: Mapping[str, Any]) -> list[str]:
    gap = f"{fmt(m.get('bleu_gap'), 2, signed=True)} {fmt_ci(m.get('bleu_gap_ci95'))}"
    shares = [fmt_share(m.get(key), m.get(f"{key}_ci95")) for _, key in CARD_SHARES]
    return [lang, fmt(m.get("bleu_feminine")), fmt(m.get("bleu_masculine")), gap, *shares]


#: Where the full report is: never inside the model folder (no script writes into one of its inputs), and a link to
#: it elsewhere would break once the folder is copied or uploaded.
FULL_REPORT = (
    "The full report (per-sentence details, plots, definitions) is not part of this folder: the command below "
    "rebuilds it."
)


def bias_markdown(metrics: Mapping[str, Any]) -> str:
    """The card's Gender bias section of one report (its data set, split and languages) from its ``metrics.json``."""
    config = metrics.get("config", {})
    where = config.get("data", "gendered data")
    out = [f"## Gender bias: {dataset_label(config)}, {', '.join(metrics['languages'])}", ""]
    if metrics.get("warning"):
        out += [f"> **Warning:** {metrics['warning']['message']}.", ""]
    how = config.get("hypotheses_description", "")
    out += [f"Measured by `scripts/bias_report.py` on {where}: {how}. {FULL_REPORT}", ""]
    rows = [_row(lang, m) for lang, m in metrics["languages"].items()]
    if len(metrics["languages"]) > 1:
        rows.append(_row("macro", metrics["macro"]))
    out += table(
        ["language", "BLEU f", "BLEU m", "gap m - f [95% CI]", *[f"{name} [95% CI]" for name, _ in CARD_SHARES]],
        rows,
        right_from=1,
    )
    samples = config.get("bootstrap_samples")
    limits = LIMITS + {"mtgeneval": MTGENEVAL_LIMITS, "demo": DEMO_LIMITS}.get(dataset_kind(config), "")
    out += ["", f"sacreBLEU `{config.get('bleu_signature', '')}`; {samples} bootstrap resamples, seed "
            f"{config.get('seed')}.", "", MEANING, "", limits, ""]  # fmt: skip
    if config.get("command"):
        out += ["Reproduce:", "", "```bash", config["command"], "```"]
    return "\n".join(out)


def bias_eval_results(metrics: Mapping[str, Any], source_lang: str = "en") -> list[EvalResult]:
    """``model-index`` entries of the report: BLEU per gender, the gap and pair accuracy per language."""
    config = metrics.get("config", {})
    split, kind = config.get("split"), dataset_kind(config)
    # the demo's gender pairs are not its test split: an id of their own (the hub groups results by dataset id)
    dataset = {"mtgeneval": HUB_ID, "demo": f"{DEMO_ID}-gender-pairs"}.get(kind)
    dataset = dataset or Path(str(config.get("data", "gendered data"))).name
    names = {"mtgeneval": f"MT-GenEval ({split})", "demo": f"mtkit demo corpus gender pairs ({split})"}
    name = names.get(kind, dataset)
    results = []
    for lang, m in metrics["languages"].items():
        for title, key in (*CARD_FIGURES, ("gender accuracy (pair)", "accuracy_pair")):
            if m.get(key) is not None:
                results.append(EvalResult(
                    task_type="translation", task_name=BIAS_TASK, dataset_type=dataset,
                    dataset_name=name, dataset_config=f"{source_lang}-{lang}",
                    dataset_split=split or "test", metric_type=key, metric_name=title, metric_value=round(m[key], 4),
                ))  # fmt: skip
    return results


def _updated(model_dir: Path, card: ModelCard, text: str, results: list[EvalResult] | None) -> ModelCard:
    """``card`` with the body ``text`` and, given ``results``, this report's ``model-index`` entries."""
    data = card.data
    if results is not None:  # this report's set, split and languages replaced; other sets' results kept
        mine = {(r.dataset_name, r.dataset_split, r.dataset_config) for r in results}
        old = data.eval_results or []
        kept = [
            r
            for r in old
            if r.task_name != BIAS_TASK or (r.dataset_name, r.dataset_split, r.dataset_config) not in mine
        ]
        data.eval_results = kept + results or None
        data.model_name = data.model_name or model_dir.resolve().name
        data.tags = list(dict.fromkeys([*(data.tags or []), "gender-bias"]))
    return _with_text(card, text)


def _with_text(card: ModelCard, text: str) -> ModelCard:
    """``card``'s metadata with the body ``text``."""
    return ModelCard(f"---\n{card.data.to_yaml()}\n---\n{text}")


def add_bias_report(model_dir: Path, metrics: Mapping[str, Any]) -> Path:
    """Put the report's figures into the card of ``model_dir`` (in place, atomically: :func:`with_bias_report`);
    return the card's path."""
    return save_card(model_dir, with_bias_report(model_dir, load_card(model_dir), metrics))


def with_bias_report(model_dir: Path, card: ModelCard, metrics: Mapping[str, Any]) -> ModelCard:
    """``card``, of the model in ``model_dir``, with the report's figures: its own section (data set, split and
    languages) replaced or added before the card's :data:`BIAS` place, the other sets' sections kept; the comparison
    goes (it compared an earlier report)."""
    source = metrics.get("config", {}).get("hypotheses", {}).get("generation", {}).get("source_lang", "en")
    markers, section = section_markers(metrics), bias_markdown(metrics)
    text = card.text
    if markers[0] not in text and BIAS[0] in text:  # a new set: before the empty place, after those there
        head, tail = text.split(BIAS[0], 1)
        text = f"{head}{markers[0]}\n{markers[1]}\n\n{BIAS[0]}{tail}"
    text = replace_section(text, markers, section, after="## Results")
    text = replace_section(text, COMPARISON, None)
    return _updated(model_dir, card, text, bias_eval_results(metrics, source))


def comparison_markdown(rows: Sequence[Row], names: Sequence[str], sources: Sequence[str]) -> str:
    """The card's before/after table: the gender figures of :func:`bias_eval.compare.rows.compare`'s rows."""
    keys = {key for _, key in (*CARD_FIGURES, *CARD_SHARES)}
    out = ["### Gender bias before and after", "", *[f"- {s}" for s in sources], ""]
    out += table(header(names), [cells(r) for r in rows if r.key in keys], right_from=2)
    out += ["", CHANGE_NOTE.format(before=names[0], after=names[1])]
    return "\n".join(out)


def add_comparison(model_dir: Path, rows: Sequence[Row], names: Sequence[str], sources: Sequence[str]) -> Path:
    """Put the before/after table into the card of ``model_dir``, after its Gender bias section."""
    return save_card(model_dir, with_comparison(load_card(model_dir), rows, names, sources))


def with_comparison(card: ModelCard, rows: Sequence[Row], names: Sequence[str], sources: Sequence[str]) -> ModelCard:
    """``card`` with the before/after table (:func:`comparison_markdown`) after its Gender bias section."""
    text = replace_section(card.text, COMPARISON, comparison_markdown(rows, names, sources), after=BIAS[1])
    return _with_text(card, text)


def with_verdict(card: ModelCard, page: str) -> ModelCard:
    """``card`` with a mitigation's verdict page (:mod:`mtkit.evaluation.verdict_page`) after its before/after table,
    its title one level down."""
    text = replace_section(
        card.text, VERDICT, page.replace("\n## ", "\n#### ").replace("# ", "### ", 1), after=COMPARISON[1]
    )
    return _with_text(card, text)


def winomt_markdown(figures: Mapping[str, Mapping[str, Any]]) -> str:
    """The card's WinoMT section: accuracy [95% CI], ΔG and ΔS per language (a run's ``--winomt_dir`` reports)."""
    rows = []
    for lang, m in figures.items():
        accuracy = fmt_figure(m["accuracy"]) + fmt_interval(m.get("accuracy_ci95"))
        rows.append([lang, f"{m['n']:,}", accuracy, fmt_figure(m["delta_g"], True), fmt_figure(m["delta_s"], True)])
    said = ("Stanovsky et al. (ACL 2019): the profession's gender in the translation, in percent; ΔG = F1 male - F1 "
            "female, ΔS = pro- minus anti-stereotypical accuracy, in points.")  # fmt: skip
    out = ["## Gender bias: WinoMT", "", said, ""]
    return "\n".join(out + table(["language", "sentences", "accuracy [95% CI]", "ΔG", "ΔS"], rows, right_from=1))


def with_winomt(card: ModelCard, figures: Mapping[str, Mapping[str, Any]]) -> ModelCard:
    """``card`` with its WinoMT section (:func:`winomt_markdown`) after its Gender bias section."""
    return _with_text(card, replace_section(card.text, WINOMT, winomt_markdown(figures), after=BIAS[1]))
