"""The verdict of a gender-bias mitigation: the gender figures of three models on pairs never trained on nor used to
choose a checkpoint, the start, the control (the same start trained as many updates on the replay alone,
``--control replay``) and the mitigated model, from their ``bias_eval`` reports, with the paired tests of mitigated
against control (the mitigation's own share, the headline) and against the start (:mod:`mtkit.evaluation.outcome`);
the general BLEU/chrF cost on the general test split (paired bootstrap), over-correction, how the checkpoint was
chosen, and the leakage of the mitigation data into the verdict's pairs (shared sentences, shared gendered words); as
``verdict.json``, whose summary and page are :mod:`mtkit.evaluation.verdict_page`'s."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.core.bleu import TOKENIZER_RULE, bleu_signatures
from bias_eval.core.bootstrap import SAMPLES, SEED, language_rng, resample_counts
from bias_eval.core.decision import Rule, decide, resample_note
from bias_eval.core.paired import bootstrap_refusal, compare_figure, corpus_figure, ones
from bias_eval.mtgeneval.headline import over_correction_lines
from bias_eval.mtgeneval.metrics import bleu_from_stats, bleu_stats, chrf_from_stats, chrf_stats
from mtkit.data.pairs import gendered_words
from mtkit.evaluation.outcome import COMPARISONS, FIGURES, MODELS, attribution, compare_models, headline_outcome
from mtkit.evaluation.selection import keep_checkpoint, keep_rule
from mtkit.evaluation.unseen import tuned_words
from mtkit.evaluation.verdict_page import summary


def general_cost(
    before: Sequence[Mapping], after: Sequence[Mapping], samples: int = SAMPLES, seed: int = SEED, rule: Rule = Rule()
) -> dict:
    """BLEU and chrF of two systems' translations of the same rows (``target``, ``lang``, ``hypothesis``), their
    change, its paired-bootstrap 95% CI and p-value, the p-value adjusted over the two tests and whether the change is
    a finding by ``rule`` (:func:`bias_eval.core.decision.decide`; ``refused`` says why when the bootstrap cannot run:
    too few sentences or resamples); BLEU with each row's target language's tokenizer."""
    refs = [r["target"] for r in before]
    if refs != [r["target"] for r in after]:
        raise ValueError("the general cost needs both systems' translations of the same sentences")
    if any(not r.get("lang") for r in before):
        raise ValueError("the general cost needs each row's target language (lang), which its BLEU is tokenized for")
    langs = [r["lang"] for r in before]
    refused = bootstrap_refusal(len(refs), samples, paired=False)
    out: dict[str, Any] = {"n": len(refs), "samples": samples, "seed": seed, "bleu_tokenizer": TOKENIZER_RULE}
    out |= {"bleu_signature": bleu_signatures(sorted(set(langs))), "refused": refused}
    extract = {"bleu": lambda hyps: bleu_stats(hyps, refs, langs), "chrf": lambda hyps: chrf_stats(hyps, refs)}
    for name, scorer in (("bleu", bleu_from_stats), ("chrf", chrf_from_stats)):
        figs = [corpus_figure({"all": extract[name]([r["hypothesis"] for r in x])}, scorer) for x in (before, after)]
        if refused:
            b, a = (float(f(ones({"all": len(refs)}))[0]) for f in figs)
            out[name] = {"before": b, "after": a, "change": a - b}
            continue
        counts = {"all": resample_counts(language_rng(seed, "general"), len(refs), samples)}
        change = compare_figure(*figs, {"all": len(refs)}, counts)
        out[name] = {"figure": name, "before": change.before, "after": change.after, "change": change.change}
        out[name] |= {"ci95": change.ci95, "p_value": change.p_value, "p_floor": change.p_floor}
    if not refused:
        decide([out["bleu"], out["chrf"]], rule)  # one family of two tests: Holm's adjustment over both
    return out


def leakage(tuning: Sequence[Mapping[str, Any]], verdict: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the verdict's rows share with the mitigation data: the same source sentences (or references), and
    gendered words (:func:`~mtkit.data.pairs.gendered_words`) all seen in the mitigation data's references (a
    profession tuned on is easier to get right) or not (a word the tuning pairs lack: unseen)."""
    sources, references = {r["source"] for r in tuning}, {r["target"] for r in tuning}
    shared = [r["source"] for r in verdict if r["source"] in sources or r["target"] in references]
    seen = tuned_words(tuning)
    with_words = [w for w in (gendered_words(r) for r in verdict) if w]
    covered = [w for w in with_words if not seen.lacks(w)]
    common = Counter(x for w in covered for x in w).most_common(10)
    return {
        "verdict_sentences": len(verdict),
        "shared_sentences": len(shared),
        "shared_examples": shared[:5],
        "sentences_with_gendered_words": len(with_words),
        "gendered_words_all_tuned": len(covered),
        "gendered_words_unseen": len(with_words) - len(covered),
        "gendered_words_all_tuned_share": len(covered) / len(with_words) if with_words else None,
        "most_common_tuned_gendered_words": [word for word, _ in common],
        "found": bool(shared),
    }


def model_figures(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """One model's verdict figures (:data:`~mtkit.evaluation.outcome.FIGURES`) and their CIs, from its report's
    ``metrics.json``: per language, and the macro average over several."""
    keys = [key for key, _ in FIGURES if not key.endswith("_size")]

    def pick(figures: Mapping[str, Any]) -> dict[str, Any]:
        counts = {k: figures.get(k) for k in ("predicted_masculine", "predicted_feminine")}
        return {k: figures.get(k) for key in keys for k in (key, f"{key}_ci95")} | counts

    langs = {lang: pick(figures) for lang, figures in metrics["languages"].items()}
    return {"languages": langs, "overall": pick(metrics["macro"]) if len(langs) > 1 else next(iter(langs.values()))}


def verdict_document(
    reports: Mapping[str, Mapping[str, Any]],
    paired: Mapping[str, Mapping[str, Any]],
    costs: Mapping[str, Mapping[str, Any] | None],
    leak: Mapping[str, Any],
    budget: Mapping[str, Any],
    words: Mapping[str, Any] | None = None,
    winomt: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``verdict.json``: ``reports`` are the models' ``metrics.json`` by name (:data:`MODELS`; ``control`` absent with
    ``--control none``; the over-correction flag is the mitigated model's, :func:`over_correction`), ``paired``
    their comparisons' paired tests by comparison name (:data:`COMPARISONS`), ``costs`` :func:`general_cost` of
    ``mitigated_vs_start`` and ``mitigated_vs_control`` (``None``: no test split), ``leak`` :func:`leakage`,
    ``budget`` :func:`selection_budget` (its ``measure``, the accuracy whose gap is judged), ``words`` the
    comparisons of the pairs with seen and unseen gendered words (:func:`mtkit.evaluation.unseen.part_comparisons`),
    ``winomt`` the models on WinoMT, out of domain
    (:func:`mtkit.evaluation.verdict_winomt.winomt_section`; ``None``: not scored)."""
    measure = budget["measure"]
    doc: dict[str, Any] = {"models": [name for name in MODELS if name in reports], "measure": measure}
    doc |= {name: model_figures(reports[name]) if name in reports else None for name in MODELS}
    for name, (before, after) in COMPARISONS.items():
        both = before in reports and after in reports
        doc[name] = compare_models(reports[before], reports[after], paired[name], measure) if both else None
    own, total = doc["mitigated_vs_control"], doc["mitigated_vs_start"]
    doc["headline"] = "mitigated_vs_control" if own else "mitigated_vs_start"
    control = doc["control_vs_start"]
    doc["attribution"] = attribution(own["overall"], total["overall"], control["overall"]) if own else None
    if own:
        said = headline_outcome(own["overall"], total["overall"], control["overall"] if control else None)
    doc["headline_outcome"] = said if own else total["overall"]["gap_outcome"]
    doc["rule"] = next((p["rule"] for p in paired.values() if p and p.get("rule")), None)
    head = paired.get(doc["headline"]) or {}
    tested = sum(1 for r in head.get("rows") or () if not r.get("missing"))
    rule = Rule(doc["rule"]["p_adjust"], doc["rule"]["min_effect_points"]) if doc["rule"] else None
    doc["resample_note"] = resample_note(head.get("samples") or 0, tested, rule) if rule else None
    doc["general_cost"] = costs.get("mitigated_vs_start")
    doc["general_cost_vs_control"] = costs.get("mitigated_vs_control")
    doc |= {"budget": dict(budget), "leakage": dict(leak)}
    doc["over_correction"] = over_correction(reports, budget.get("chosen_step"))
    doc["decoding"] = decoding(reports)
    doc["words"] = dict(words) if words else None
    doc["winomt"] = dict(winomt) if winomt else None
    doc["summary"] = summary(doc)
    return doc


def over_correction(reports: Mapping[str, Mapping[str, Any]], chosen_step: int | None) -> dict[str, Any] | None:
    """The mitigated model's over-correction flag (its report's), said of the start when the start is to blame: when
    the checkpoint rule kept the start (update 0), or when the start's report flags every gap the mitigated model's
    does (``of``: ``start`` or ``mitigated``)."""
    flag = reports["mitigated"].get("over_correction")
    if not flag:
        return None
    start = (reports.get("start") or {}).get("over_correction") or {"scopes": {}}
    own = {(x, gap) for x, gaps in flag["scopes"].items() for gap in gaps}
    before = {(x, gap) for x, gaps in start["scopes"].items() for gap in gaps}
    if chosen_step != 0 and not own <= before:
        return {**flag, "of": "mitigated"}
    said = "; ".join(over_correction_lines({"over_correction": flag}))
    kept = "the checkpoint rule kept the start itself" if chosen_step == 0 else "the start's gaps are flagged alike"
    message = (
        f"the start already gets feminine sentences' gender right more often than masculine ones beyond noise "
        f"({said}; {kept}): a bias of the start, which the mitigation did not cause"
    )
    return {**flag, "message": message, "of": "start"}


def decoding(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """How the reports decoded (their ``metrics.json``'s generation settings): ``same`` and the settings, or each
    report's by name when they differ (the verdict then says so)."""
    found = {name: ((m.get("config") or {}).get("hypotheses") or {}).get("generation") for name, m in reports.items()}
    settings = list(found.values())
    if all(s == settings[0] for s in settings):
        return {"same": True, "settings": settings[0]}
    return {"same": False, **found}


def selection_budget(
    records: Sequence[Mapping[str, Any]],
    best_step: int | None,
    max_drop: float,
    max_accuracy_drop: float,
    metric: str,
    measure: str,
) -> dict[str, Any]:
    """How the checkpoint was chosen, from ``metrics.jsonl``'s records: the accuracy judged (``measure``) and the
    rule (:func:`keep_rule`), its budgets, the gender the start served worse, the evaluations that kept both budgets
    and the update kept."""
    general = {r["step"]: r["valid_general_bleu"] for r in records if "valid_general_bleu" in r}
    start = general.get(0)
    out: dict[str, Any] = {"measure": measure, "rule": keep_rule(measure), "start_valid_general_bleu": start}
    out["max_bleu_drop"] = max_drop
    out |= {"max_accuracy_drop": max_accuracy_drop, "chosen_step": best_step, "evaluations": len(general)}
    out |= {"chosen_valid_general_bleu": general.get(best_step), "within_budget_steps": []}
    if start is not None:
        kept = keep_checkpoint(records, metric, max_drop, max_accuracy_drop, measure)
        first = next(r for r in records if r.get("step") == 0 and "valid_general_bleu" in r)
        out |= {"worse_served": kept.worse_served, "within_budget_steps": kept.eligible}
        out["start_accuracy"] = {g: first[f"valid_{measure}_{g}"] for g in (kept.worse_served, kept.better_served)}
    out["valid_general_bleu_by_step"] = {str(k): v for k, v in sorted(general.items())}
    return out
