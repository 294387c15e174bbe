"""One training run from its config to its report: train (:mod:`mtkit.train`; a mitigation's control arm after it,
:mod:`mtkit.train.control`, on every process), then, on the main process alone, the end-of-run steps ``final/`` asks
for: CTranslate2 (``--export_ct2``), the gender-bias reports (``--bias_report_split``, ``--winomt_dir``), a
mitigation's verdict (``mitigation:``), the model card and the upload to the hub (``--push_to_hub``).

The run's record (:class:`~mtkit.train.record.RunRecord`, made by the trainer) takes what each step adds, in memory.
``final/``'s card and ``results.json`` are written once from it when every local step is done, both before the
upload, so that a failed upload loses nothing; both are written even when a step fails, with what the steps before it
added. The upload is the last step: only its commit is written to ``results.json`` after it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bias_eval.benchmarks import compare_reports
from bias_eval.core.textio import atomic_write, read_jsonl
from mtkit.config import RunConfig
from mtkit.data.mitigation_data import write_pairs_layout
from mtkit.decode.mbr import MBR_KEYS
from mtkit.distributed.deepspeed import zero_stage
from mtkit.errors import UserError
from mtkit.evaluation.bias_run import ReportRequest, run_report
from mtkit.evaluation.generation import resolve_report, saved_dtype
from mtkit.evaluation.outcome import COMPARISONS
from mtkit.evaluation.scores import scoring
from mtkit.evaluation.selection import MEASURES
from mtkit.evaluation.unseen import part_comparisons, tuned_words, unseen_units
from mtkit.evaluation.verdict import general_cost, leakage, selection_budget, verdict_document
from mtkit.evaluation.verdict_page import render_markdown
from mtkit.evaluation.verdict_winomt import decisions, judgements, winomt_section
from mtkit.evaluation.winomt_run import headline, language_reports, scored_languages, warn_unscored
from mtkit.export.card import environment, final_weights, save_card, training_card
from mtkit.export.card_bias import with_bias_report, with_comparison, with_verdict, with_winomt
from mtkit.export.ct2 import export_ct2, resolve
from mtkit.export.hub import missing, push, repo_id_for
from mtkit.processes import is_main_process
from mtkit.train.checks import bias_report_split, check_run_apart
from mtkit.train.control import train_control
from mtkit.train.lock import lock_run
from mtkit.train.record import RunRecord
from mtkit.train.tracking import read_metrics
from mtkit.train.trainer import Trainer


def run(cfg: RunConfig) -> dict:
    """Train (or resume) the run described by ``cfg``, then convert, describe, report and upload; return the final
    metrics."""
    check_run_apart(cfg)
    repo_id = check_hub(cfg)
    lock = lock_run(cfg.train.output_dir)  # before anything is written; held until the last step has written
    try:
        return train_and_report(cfg, repo_id)
    finally:
        if lock is not None:
            lock.release()


def train_and_report(cfg: RunConfig, repo_id: str | None) -> dict:
    """Train (a mitigation's control arm too), then, on the main process, convert, report, judge, describe and
    upload; ``results.json`` and the card written before the upload (see the module doc)."""
    trainer = Trainer(cfg)
    record = trainer.fit()
    acc, out, results = trainer.accelerator, Path(cfg.train.output_dir), record.results
    main = acc.is_main_process
    if main:
        results["scoring"] = scoring(cfg.data.languages(), cfg.eval.paper_bleu)  # which score is which
        results["environment"] = environment(acc, zero_stage(acc), {s: len(d) for s, d in trainer.raw.items()})
    try:
        control = train_control(cfg) if cfg.mitigation.control_arm() else None  # training: every process
        if main:
            results |= {"control": str(control.out)} if control else {}
            local_steps(cfg, trainer, record, control)
    finally:
        if main:
            print(f"model card in {write_final_card(cfg, out, record)}")
            record.write(out)
    if not main:
        return results
    if repo_id is not None:
        results["hub_commit"] = push(out / "final", repo_id, private=cfg.train.hub_private_repo)
        record.write(out)  # once more, for the commit alone
    return results


def local_steps(cfg: RunConfig, trainer: Trainer, record: RunRecord, control: Trainer | None) -> None:
    """The end-of-run steps on this machine, each adding to ``record``: the conversion, the bias report, then a
    mitigation's verdict (``control``: its control arm's trainer, if it has one)."""
    out, results = Path(cfg.train.output_dir), record.results
    final = out / "final"
    if cfg.eval.export_ct2:  # alone from here: no collective left to time out
        results["ct2_model"] = str(convert_ct2(cfg, final, out / "final_ct2"))
    if bias_report_split(cfg):
        record.bias = bias_report(cfg, final, out / "bias_report")
        results["bias_report"] = str(out / "bias_report")
    if cfg.eval.winomt_dir:
        results["winomt"] = {"folder": str(out / "winomt"), "languages": winomt_report(cfg, final, out / "winomt")}
    if cfg.mitigation.enabled():
        results["verdict"] = str(mitigation_verdict(cfg, trainer, control, out / "verdict", record))


def write_final_card(cfg: RunConfig, out: Path, record: RunRecord) -> Path:
    """Write the card of the run's ``final/`` from its record: the training card, its bias report's section and a
    mitigation's before/after table and verdict page."""
    final = out / "final"
    card = training_card(final, cfg, out, final_weights(cfg, record.results), record)
    if record.bias is not None:
        card = with_bias_report(final, card, record.bias)
    winomt = record.results.get("winomt", {}).get("languages")
    if winomt:
        card = with_winomt(card, winomt)
    if record.comparison is not None:
        done = record.comparison
        card = with_comparison(card, done.rows, done.names, done.sources)
    if record.verdict_page is not None:
        card = with_verdict(card, record.verdict_page)
    return save_card(final, card)


def check_hub(cfg: RunConfig) -> str | None:
    """The hub repository of ``--push_to_hub`` (checked before anything is written), or ``None``; a warning when no
    token is found or the hub is off (the upload at the end would fail, after everything else is written)."""
    t = cfg.train
    if not t.push_to_hub:
        for flag in ("hub_model_id", "hub_private_repo"):
            if getattr(t, flag):
                raise UserError(f"--{flag}: only used with --push_to_hub")
        return None
    repo_id = repo_id_for(t.hub_model_id, t.output_dir)
    if is_main_process() and missing():
        print(f"warning: --push_to_hub: {' and '.join(missing())}: the upload at the end will fail", file=sys.stderr)
    return repo_id


def convert_ct2(cfg: RunConfig, final: Path, out: Path) -> Path:
    """``final/`` converted to CTranslate2 with ``--export_ct2``'s quantization (replacing an earlier ``out``), checked
    against transformers on the run's validation sources first (:mod:`mtkit.export.ct2_check`)."""
    export_ct2(final, out, cfg.eval.export_ct2, force=True, force_fp16=cfg.train.force_fp16, flag="--export_ct2")
    print(f"CTranslate2 model ({resolve(cfg.eval.export_ct2)}) in {out}")
    return out


def bias_report(cfg: RunConfig, final: Path, out: Path) -> dict[str, Any]:
    """The full ``bias_eval`` report of the exported model on ``--bias_report_split`` of ``--mtgeneval_dir`` in
    ``out``, decoded with the model's saved prompt and generation settings, and the run's ``--decoding``; returns
    its figures (``metrics.json``), which go into the model's card."""
    split, langs = str(bias_report_split(cfg)), cfg.data.languages()
    request = ReportRequest(str(out), str(cfg.data.mtgeneval_dir), split=split, target_langs=langs, model=str(final))
    return run_report(replace(request, **report_decoding(cfg)))


def winomt_request(cfg: RunConfig, model: Path | str, decoding: dict[str, Any]) -> ReportRequest:
    """A WinoMT report of ``model`` on ``--winomt_dir`` (at most ``--winomt_max_samples`` sentences) decoded with
    ``decoding`` (:class:`ReportRequest`'s fields)."""
    e = cfg.eval
    return ReportRequest("", winomt_dir=e.winomt_dir, max_samples=e.winomt_max_samples, model=str(model), **decoding)


def winomt_report(cfg: RunConfig, final: Path, out: Path) -> dict[str, dict[str, Any]]:
    """The WinoMT reports of the exported model into ``out/<lang>``, one per target language of the run WinoMT
    scores, decoded as the bias report is (:func:`bias_report`); returns their headline figures by language."""
    warn_unscored(cfg.data.languages())  # once a run: the verdict's WinoMT section comes after this report
    langs = scored_languages(cfg.data.languages())
    reports = language_reports(winomt_request(cfg, final, report_decoding(cfg)), langs, out)
    return {lang: headline(metrics) for lang, metrics in reports.items()}


def report_decoding(cfg: RunConfig) -> dict[str, Any]:
    """The run's batch size, coverage override and MBR settings (``decoding`` and the candidates' settings; none for
    beam search) as :class:`ReportRequest`'s fields."""
    found: dict[str, Any] = {"batch_size": cfg.eval.eval_batch_size, "force": cfg.train.force_coverage}
    if cfg.eval.decoding == "beam":
        return found
    keys = ("decoding", *MBR_KEYS)
    return found | {key: getattr(cfg.eval, key) for key in keys if getattr(cfg.eval, key) is not None}


def _jsonl(path: Path) -> list[dict]:
    return [row for _, row in read_jsonl(path)]


def verdict_reports(cfg: RunConfig, models: dict[str, Path | str], langs: list[str], out: Path) -> dict[str, dict]:
    """The ``bias_eval`` reports of ``models`` (name: model folder) on the verdict pairs (``out/pairs``) into
    ``out/<name>``, all decoded with one set of settings: the run's (beams, length penalty and bounds, its decoding
    settings) with the mitigated ``final/``'s prompt and weight type, resolved once and given to each in full, so that
    none reads anything of its own folder; returns their figures (``metrics.json``) by name."""
    common = ReportRequest(str(out), str(out / "pairs"), split="test", target_langs=langs)
    alike = verdict_decoding(cfg, Path(models["mitigated"]), langs)
    return {n: run_report(replace(common, out=str(out / n), model=str(m), **alike)) for n, m in models.items()}


def verdict_decoding(cfg: RunConfig, final: Path, langs: list[str]) -> dict[str, Any]:
    """The one set of decoding settings of a verdict's models, as :class:`ReportRequest`'s fields: the run's (beams,
    length penalty and bounds, its decoding settings) with the mitigated ``final/``'s prompt and weight type,
    resolved once (:func:`verdict_reports`)."""
    e, found = cfg.eval, report_decoding(cfg)
    run = ReportRequest("", target_langs=langs, model=str(final), num_beams=e.num_beams,
                        max_new_tokens=e.max_new_tokens, length_penalty=e.length_penalty, max_len_a=e.max_len_a,
                        max_len_b=e.max_len_b, dtype=saved_dtype(final), **found)  # fmt: skip
    return found | resolve_report(run)[0].fields()


def verdict_winomt(cfg: RunConfig, models: dict[str, Path | str], langs: list[str], out: Path) -> dict[str, Any]:
    """The verdict's WinoMT section (:func:`~mtkit.evaluation.verdict_winomt.winomt_section`): ``models`` scored on
    WinoMT into ``out/<name>/<lang>`` with the verdict's decoding settings (:func:`verdict_decoding`); the languages
    it does not score were named by ``final/``'s report (:func:`winomt_report`), which comes first."""
    scored = scored_languages(langs)
    alike = verdict_decoding(cfg, Path(models["mitigated"]), langs)
    reports = {n: language_reports(winomt_request(cfg, m, alike), scored, out / n) for n, m in models.items()}
    right = {n: {lang: decisions(out / n / lang, lang) for lang in scored} for n in models}
    judged = {n: {lang: judgements(out / n / lang, lang) for lang in scored} for n in models}
    return winomt_section(reports, right, judged, cfg.mitigation.rule())


def _cost(before: Path, after: Path) -> dict[str, Any] | None:
    """:func:`general_cost` of two runs' general test translations (``None`` when either is missing)."""
    return general_cost(_jsonl(before), _jsonl(after)) if before.is_file() and after.is_file() else None


def mitigation_verdict(cfg: RunConfig, trainer: Trainer, control: Trainer | None, out: Path, record: RunRecord) -> Path:
    """The verdict of a mitigation (:mod:`mtkit.evaluation.verdict`) in ``out``: the verdict pairs in MT-GenEval's
    layout, the ``bias_eval`` reports of the start, the control arm's ``final/`` (``control``: its trainer, if it ran)
    and the mitigated ``final/`` on them with the same decoding settings (:func:`verdict_reports`), their comparisons
    (paired tests, in ``out/<comparison>``), the general cost from the general test translations of update 0 and of
    each export, the checkpoint choice and the leakage check; ``verdict.json`` and ``verdict.md``. The start against
    mitigated comparison and the page go into ``record``, for the model card."""
    order = write_pairs_layout(trainer.raw["verdict"], out / "pairs")
    models = {"start": cfg.model.model_name_or_path, "mitigated": trainer.out / "final"}
    if control is not None:
        models = {"start": models["start"], "control": control.out / "final", "mitigated": models["mitigated"]}
    metrics = verdict_reports(cfg, models, list(order), out)
    done = {}
    for name, pair in COMPARISONS.items():
        if all(n in metrics for n in pair):
            done[name] = compare_reports(*(metrics[n] for n in pair), [out / n for n in pair], pair, out / name,
                                         cfg.mitigation.rule())  # fmt: skip
    record.comparison = done["mitigated_vs_start"]  # the card's before/after table
    tests = trainer.out / "translations"
    costs = {"mitigated_vs_start": _cost(tests / "test-start.jsonl", tests / "test.jsonl")}
    if control is not None:
        costs["mitigated_vs_control"] = _cost(control.out / "translations" / "test.jsonl", tests / "test.jsonl")
    tuning, verdict = trainer.raw["tuning"].to_list(), trainer.raw["verdict"].to_list()
    unseen = unseen_units(verdict, tuned_words(tuning))
    m = cfg.mitigation
    measure = MEASURES[m.mitigation_accuracy]
    words = part_comparisons({name: out / name for name in metrics}, order, unseen, metrics["mitigated"], measure,
                             m.rule())  # fmt: skip
    leak = leakage(tuning, verdict)
    budget = selection_budget(read_metrics(trainer.out), record.results.get("best_step"), m.max_bleu_drop,
                              m.max_accuracy_drop, cfg.eval.metric_for_best_model, measure)  # fmt: skip
    winomt = verdict_winomt(cfg, models, list(order), out / "winomt") if cfg.eval.winomt_dir else None
    doc = verdict_document(metrics, {name: c.paired for name, c in done.items()}, costs, leak, budget, words, winomt)
    record.verdict_page = render_markdown(doc)
    atomic_write(out / "verdict.json", (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    atomic_write(out / "verdict.md", record.verdict_page.encode("utf-8"))
    print(f"mitigation verdict in {out}/verdict.md: {doc['summary']}")
    return out
