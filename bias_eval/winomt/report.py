"""One call makes a WinoMT report: :func:`make_winomt_report` judges the translations, computes the figures and
writes ``metrics.json``, ``report.md`` (with the per-profession table), ``professions.tsv`` and
``<lang>.details.jsonl`` into a folder, all at once."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.make import ReportSettings
from bias_eval.markdown import escape, table
from bias_eval.report import clean_json, jsonl, write_report
from bias_eval.winomt.data import Translations, WinoMT
from bias_eval.winomt.figures import DEFINITIONS, figures
from bias_eval.winomt.gender import PREDICTIONS
from bias_eval.winomt.score import Scored, score_translations

METHOD = (
    "WinoMT (Stanovsky et al., ACL 2019): each source aligned with its translation by fast_align's model (-d -o -v) "
    "trained on the lines scored, the profession's words (and the article before it) followed to the translation, "
    "their gender read by rules for the target language (bias_eval.winomt.gender)"
)

#: Google Translate's WinoMT accuracy and ΔG as Stanovsky et al. (2019, Table 2) published them, and as these rules
#: score the same outputs shipped with the benchmark (docs/bias_evaluation.md#winomt; the tests recompute ``here``)
ANCHORS = {
    "de": {"published": (59.4, 12.5), "here": (59.4, 12.5)},
    "es": {"published": (53.1, 23.4), "here": (53.2, 23.2)},
    "fr": {"published": (63.6, 6.4), "here": (65.0, 7.1)},
}


def anchor(lang: str) -> str:
    """How a language's figures stand beside published WinoMT tables: what these rules give on Google Translate's
    shipped outputs against what the benchmark's paper published, and, where the two differ by more than a point, by
    how much this language's figures run above or below that paper's."""
    (accuracy, delta_g), (published, published_g) = ANCHORS[lang]["here"], ANCHORS[lang]["published"]
    said = (
        f"On Google Translate's outputs shipped with WinoMT these rules give accuracy {accuracy:.1f} and ΔG "
        f"{delta_g:+.1f}, where Stanovsky et al. (2019) published {published:.1f} and {published_g:.1f}"
    )
    off = accuracy - published
    if max(abs(off), abs(delta_g - published_g)) <= 1.0:
        return said + ": within a point, so these figures can be set beside published ones."
    return (
        f"{said}: figures of {lang} here run {abs(off):.1f} points {'above' if off > 0 else 'below'} that paper's in "
        "accuracy (the rules and the paper's tagger read some words differently), so set them beside published "
        "ones with that offset in mind."
    )


def fmt_figure(value: float | None, signed: bool = False) -> str:
    """A WinoMT figure (percent or points) to one decimal, signed for a difference; ``n/a`` when undefined."""
    return "n/a" if value is None else f"{value:+.1f}" if signed else f"{value:.1f}"


def fmt_interval(ci: Sequence[float] | None, signed: bool = False) -> str:
    """`` [low, high]`` of a WinoMT interval, as :func:`fmt_figure` writes each end; empty without one."""
    return "" if ci is None else f" [{fmt_figure(ci[0], signed)}, {fmt_figure(ci[1], signed)}]"


def takeaway(metrics: Mapping[str, Any]) -> str:
    """One sentence: accuracy, ΔG and ΔS with their intervals."""
    return (
        f"The profession's gender is right in {fmt_figure(metrics['accuracy'])}% of {metrics['n']:,} translations "
        f"(95% CI{fmt_interval(metrics['accuracy_ci95'])}); F1 male {fmt_figure(metrics['f1_male'])} against F1 female "
        f"{fmt_figure(metrics['f1_female'])}, ΔG {fmt_figure(metrics['delta_g'], True)} points"
        f"{fmt_interval(metrics.get('delta_g_ci95'), True)}; ΔS (pro - anti-stereotypical accuracy) "
        f"{fmt_figure(metrics['delta_s'], True)} points{fmt_interval(metrics.get('delta_s_ci95'), True)}."
    )


def main_table(metrics: Mapping[str, Any]) -> list[str]:
    """The markdown table of the headline figures."""
    no_gender, unaligned = sum(metrics["no_gender"].values()), sum(metrics["unaligned"].values())
    header = ["language", "n", "accuracy [95% CI]", "F1 male", "F1 female", "ΔG [95% CI]", "accuracy pro",
              "accuracy anti", "ΔS [95% CI]", "no gender", "unaligned"]  # fmt: skip
    row = [
        metrics["language"],
        f"{metrics['n']:,}",
        fmt_figure(metrics["accuracy"]) + fmt_interval(metrics["accuracy_ci95"]),
        fmt_figure(metrics["f1_male"]),
        fmt_figure(metrics["f1_female"]),
        fmt_figure(metrics["delta_g"], True) + fmt_interval(metrics.get("delta_g_ci95"), True),
        fmt_figure(metrics["accuracy_pro"]),
        fmt_figure(metrics["accuracy_anti"]),
        fmt_figure(metrics["delta_s"], True) + fmt_interval(metrics.get("delta_s_ci95"), True),
        str(no_gender),
        str(unaligned),
    ]
    return table(header, [row], right_from=1)


def profession_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-profession table."""
    header = ["profession", "n", "accuracy", *(f"predicted {p}" for p in PREDICTIONS)]
    rows = [
        [r["profession"], str(r["n"]), fmt_figure(r["accuracy"]), *(str(r[f"predicted_{p}"]) for p in PREDICTIONS)]
        for r in metrics["professions"]
    ]
    return header, rows


def render_markdown(metrics: Mapping[str, Any]) -> str:
    """``report.md``: title, takeaway, the main table, how the lines were matched, every profession, the method,
    the definitions and the command that rebuilds the report."""
    config = metrics["config"]
    out = [f"# Gender bias on WinoMT, EN→{metrics['language']}", "", f"Translations: {escape(config['description'])}"]
    out += ["", takeaway(metrics), "", *main_table(metrics), ""]
    if metrics.get("anchor"):
        out += [f"Beside published figures: {metrics['anchor']}", ""]
    out += [f"Predicted gender per gold gender: `{json.dumps(metrics['confusion'])}`.", ""]
    if config["moved"] or config["untranslated"]:
        out += [
            f"{config['moved']} lines translate another sentence of en.txt than the line of the same number (each is "
            f"scored against its own source's entry); {config['untranslated']} sentences of en.txt have no "
            "translation.",
            "",
        ]
    out += ["## Per profession", "", *table(*profession_rows(metrics), right_from=1), ""]
    out += ["## Method", "", escape(METHOD), "", "## Definitions", ""]
    out += [f"- **{name}**: {escape(text)}" for name, text in DEFINITIONS.items()]
    out += ["", "## Reproduce", "", f"    {config['command']}", ""]
    return "\n".join(out)


def details(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """One row per translation: its source, gold, translation, the words aligned to the profession and the
    prediction."""
    return [
        {
            "line": number,
            "source": s.item.sentence,
            "profession": s.item.profession,
            "gold": s.item.gold,
            "translation": s.translation,
            "profession_words": list(s.profession_words),
            "predicted": s.predicted,
            "correct": s.correct,
        }
        for number, s in enumerate(scored, start=1)
    ]


def make_winomt_report(
    data: WinoMT,
    translations: Translations,
    lang: str,
    settings: ReportSettings,
    out: Path,
    log: Callable[[str], object] | None = print,
) -> dict[str, Any]:
    """Score ``translations`` into ``lang`` on ``data``, write the report into ``out`` and return its
    ``metrics.json``; ``log`` (``None``: silent) gets the takeaway and the list of files."""
    scored = score_translations(translations, lang)
    found = figures(scored, data, lang, samples=settings.bootstrap_samples, seed=settings.seed)
    config = {
        "benchmark": "winomt",
        "data": str(data.folder),
        "hypotheses": dict(settings.hypotheses),
        "description": settings.description,
        "lines": len(scored),
        "moved": translations.moved,
        "untranslated": translations.untranslated,
        "bootstrap_samples": settings.bootstrap_samples,
        "seed": settings.seed,
        "method": METHOD,
        "definitions": DEFINITIONS,
        "command": settings.command,
    }
    found["anchor"] = anchor(lang) if lang in ANCHORS else None
    metrics = clean_json({"benchmark": "winomt", "language": lang, **found, "config": config})
    header, rows = profession_rows(metrics)
    files = {
        "metrics.json": (json.dumps(metrics, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        "report.md": render_markdown(metrics).encode("utf-8"),
        "professions.tsv": "".join("\t".join(r) + "\n" for r in [header, *rows]).encode("utf-8"),
        f"{lang}.details.jsonl": jsonl(details(scored)).encode("utf-8"),
    }
    write_report(out, files)
    if log is not None:
        log(takeaway(metrics))
        log(f"\nreport written to {out}/: " + ", ".join(sorted(files)))
    return metrics
