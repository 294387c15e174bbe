"""One training run from its config to its report: train (:mod:`mtkit.train`), then, on the main process alone, the
end-of-run steps ``final/`` asks for: CTranslate2 (``--export_ct2``), the model card, the gender-bias report
(``--bias_report_split``, into the card too), a mitigation's verdict (``mitigation:``) and the upload to the hub
(``--push_to_hub``).

The run's record (:class:`~mtkit.train.record.RunRecord`, made by the trainer) takes what each step adds, in memory.
``final/``'s card is written once from it when the conversion and the bias report are done (the verdict adds its
sections to that card), and ``results.json`` once when every local step is done, both before the upload, so that a
failed upload loses nothing; each is written even when a step before it fails, with what the steps before that
added. The upload is the last step: only its commit is written to ``results.json`` after it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bias_eval.comparison import compare_reports
from bias_eval.textio import atomic_write, read_jsonl
from mtkit.config import RunConfig
from mtkit.data.mitigation_data import write_pairs_layout
from mtkit.decode.mbr import MBR_KEYS
from mtkit.distributed.deepspeed import zero_stage
from mtkit.errors import UserError
from mtkit.evaluation.bias_run import ReportRequest, run_report
from mtkit.evaluation.generation import resolve_report, saved_dtype
from mtkit.evaluation.scores import scoring
from mtkit.evaluation.verdict import general_cost, leakage, render_markdown, selection_budget, verdict_document
from mtkit.export.card import environment, final_weights, save_card, training_card
from mtkit.export.card_bias import add_comparison, add_verdict, with_bias_report
from mtkit.export.ct2 import export_ct2, resolve
from mtkit.export.hub import missing, push, repo_id_for
from mtkit.processes import is_main_process
from mtkit.train.checks import bias_report_split, check_run_apart
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
    """Train, then (on the main process) convert, describe, report and upload; ``results.json`` and the card written
    before the upload (see the module doc)."""
    trainer = Trainer(cfg)
    record = trainer.fit()
    acc = trainer.accelerator
    if not acc.is_main_process:
        return record.results
    out = Path(cfg.train.output_dir)
    results = record.results
    results["scoring"] = scoring(cfg.data.languages(), cfg.eval.paper_bleu)  # which score is which
    results["environment"] = environment(acc, zero_stage(acc), {split: len(d) for split, d in trainer.raw.items()})
    try:
        local_steps(cfg, trainer, record)
    finally:
        record.write(out)
    if repo_id is not None:
        results["hub_commit"] = push(out / "final", repo_id, private=cfg.train.hub_private_repo)
        record.write(out)  # once more, for the commit alone
    return results


def local_steps(cfg: RunConfig, trainer: Trainer, record: RunRecord) -> None:
    """The end-of-run steps on this machine, each adding to ``record``: the conversion and the bias report, then
    ``final/``'s card (written from the record, whatever they did), then the verdict."""
    out, results = Path(cfg.train.output_dir), record.results
    final = out / "final"
    try:
        if cfg.eval.export_ct2:  # alone from here: no collective left to time out
            results["ct2_model"] = str(convert_ct2(cfg, final, out / "final_ct2"))
        if bias_report_split(cfg):
            record.bias = bias_report(cfg, final, out / "bias_report")
            results["bias_report"] = str(out / "bias_report")
    finally:
        print(f"model card in {write_final_card(cfg, out, record)}")
    if cfg.mitigation.enabled():
        results["verdict"] = str(mitigation_verdict(cfg, trainer, final, out / "verdict", results))


def write_final_card(cfg: RunConfig, out: Path, record: RunRecord) -> Path:
    """Write the card of the run's ``final/`` from its record: the training card and its bias report's section."""
    final = out / "final"
    card = training_card(final, cfg, out, final_weights(cfg, record.results), record)
    if record.bias is not None:
        card = with_bias_report(final, card, record.bias)
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


def verdict_reports(
    cfg: RunConfig, final: Path, langs: list[str], out: Path, names: tuple[str, str]
) -> list[dict[str, Any]]:
    """The ``bias_eval`` reports of the start and of ``final/`` on the verdict pairs (``out/pairs``) into
    ``out/<name>``, both decoded with one set of settings: the run's (beams, length penalty and bounds, its decoding
    settings) with ``final/``'s prompt and weight type, resolved once and given to both in full, so that neither reads
    anything of its own folder; returns their figures (``metrics.json``)."""
    e = cfg.eval
    common = ReportRequest(str(out), str(out / "pairs"), split="test", target_langs=langs, **report_decoding(cfg))
    run = replace(common, model=str(final), num_beams=e.num_beams, max_new_tokens=e.max_new_tokens,
                  length_penalty=e.length_penalty, max_len_a=e.max_len_a, max_len_b=e.max_len_b,
                  dtype=saved_dtype(final))  # fmt: skip
    both = resolve_report(run)[0].fields()
    models = (str(cfg.model.model_name_or_path), str(final))
    return [run_report(replace(common, out=str(out / n), model=m, **both)) for n, m in zip(names, models)]


def mitigation_verdict(cfg: RunConfig, trainer: Trainer, final: Path, out: Path, results: dict) -> Path:
    """The verdict of a mitigation (:mod:`mtkit.evaluation.verdict`) in ``out``: the verdict pairs in MT-GenEval's
    layout, the ``bias_eval`` reports of the start and of ``final/`` on them with the same decoding settings
    (:func:`verdict_reports`), their comparison (paired tests; the before/after table goes into ``final/``'s card),
    the general cost from the test translations of update 0 and of the export, the leakage check; ``verdict.json``
    and ``verdict.md``."""
    langs = write_pairs_layout(trainer.raw["verdict"], out / "pairs")
    names = ("start", "mitigated")
    metrics = verdict_reports(cfg, final, langs, out, names)
    done = compare_reports(*metrics, [out / n for n in names], names, out / "comparison")
    try:  # the before/after table in final/'s card
        print(f"model card updated: {add_comparison(final, done.rows, list(names), done.sources)}", file=sys.stderr)
    except (OSError, ValueError) as err:
        print(f"warning: {final}: model card not updated ({err})", file=sys.stderr)
    translations = trainer.out / "translations"
    start, end = translations / "test-start.jsonl", translations / "test.jsonl"
    cost = general_cost(_jsonl(start), _jsonl(end)) if start.is_file() and end.is_file() else None
    leak = leakage(trainer.raw["tuning"].to_list(), trainer.raw["verdict"].to_list())
    budget = selection_budget(read_metrics(trainer.out), results.get("best_step"), cfg.mitigation.max_bleu_drop)
    doc = verdict_document(*metrics, done.paired, cost, leak, budget)
    page = render_markdown(doc, names)
    atomic_write(out / "verdict.json", (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    atomic_write(out / "verdict.md", page.encode("utf-8"))
    add_verdict(final, page)
    print(f"mitigation verdict in {out}/verdict.md: {doc['summary']}")
    return out
