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
from pathlib import Path
from typing import Any

from bias_eval.textio import atomic_write, read_jsonl
from mtkit.cli.bias_report import main as report_main
from mtkit.cli.bias_report import parse_args as report_args
from mtkit.cli.bias_report import report
from mtkit.cli.compare_reports import main as compare_main
from mtkit.config import RunConfig
from mtkit.data.mitigation_data import write_pairs_layout
from mtkit.distributed.deepspeed import zero_stage
from mtkit.errors import UserError
from mtkit.evaluation.scores import scoring
from mtkit.evaluation.verdict import general_cost, leakage, render_markdown, selection_budget, verdict_document
from mtkit.export.card import environment, final_weights, save_card, training_card
from mtkit.export.card_bias import add_verdict, with_bias_report
from mtkit.export.ct2 import export_ct2, resolve
from mtkit.export.hub import missing, push, repo_id_for
from mtkit.processes import is_main_process
from mtkit.train.checks import bias_report_split, check_run_apart
from mtkit.train.lock import lock_run
from mtkit.train.record import RunRecord
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
    args = ["--mtgeneval_dir", str(cfg.data.mtgeneval_dir), "--split", str(bias_report_split(cfg))]
    args += ["--target_langs", *cfg.data.languages(), "--model", str(final), "--out", str(out)]
    args += ["--batch_size", str(cfg.eval.eval_batch_size), *decoding_args(cfg)]
    args += ["--force"] if cfg.train.force_coverage else []  # a run forced past the coverage check reports too
    return report(report_args(args))


def decoding_args(cfg: RunConfig) -> list[str]:
    """The run's MBR flags (``--decoding mbr`` and the candidates' settings) for a script; none for beam search."""
    if cfg.eval.decoding == "beam":
        return []
    keys = ("decoding", "mbr_samples", "mbr_candidates", "epsilon", "top_p")
    values = {key: getattr(cfg.eval, key) for key in keys}
    return [arg for key, value in values.items() if value is not None for arg in (f"--{key}", str(value))]


def _jsonl(path: Path) -> list[dict]:
    return [row for _, row in read_jsonl(path)]


def mitigation_verdict(cfg: RunConfig, trainer: Trainer, final: Path, out: Path, results: dict) -> Path:
    """The verdict of a mitigation (:mod:`mtkit.evaluation.verdict`) in ``out``: the verdict pairs in MT-GenEval's
    layout, the ``bias_eval`` reports of the start and of ``final/`` on them with the same decoding settings, their
    comparison (paired tests; the before/after table goes into ``final/``'s card), the general cost from the test
    translations of update 0 and of the export, the leakage check; ``verdict.json`` and ``verdict.md``."""
    langs = write_pairs_layout(trainer.raw["verdict"], out / "pairs")
    args = ["--mtgeneval_dir", str(out / "pairs"), "--split", "test", "--target_langs", *langs]
    args += ["--batch_size", str(cfg.eval.eval_batch_size), "--num_beams", str(cfg.eval.num_beams)]
    args += ["--max_new_tokens", str(cfg.eval.max_new_tokens), "--length_penalty", str(cfg.eval.length_penalty)]
    args += [*decoding_args(cfg), *(["--force"] if cfg.train.force_coverage else [])]
    names = ("start", "mitigated")
    for name, model in zip(names, (str(cfg.model.model_name_or_path), str(final))):
        report_main([*args, "--model", model, "--out", str(out / name)])
    compare_main(
        [str(out / names[0]), str(out / names[1]), "--out", str(out / "comparison"), "--names", "start,mitigated"]
    )
    translations = trainer.out / "translations"
    start, end = translations / "test-start.jsonl", translations / "test.jsonl"
    cost = general_cost(_jsonl(start), _jsonl(end)) if start.is_file() and end.is_file() else None
    leak = leakage(trainer.raw["tuning"].to_list(), trainer.raw["verdict"].to_list())
    budget = selection_budget(
        _jsonl(trainer.out / "metrics.jsonl"), results.get("best_step"), cfg.mitigation.max_bleu_drop
    )
    metrics = [json.loads((out / name / "metrics.json").read_text(encoding="utf-8")) for name in names]
    paired = json.loads((out / "comparison" / "comparison.json").read_text(encoding="utf-8"))["paired"]
    doc = verdict_document(*metrics, paired, cost, leak, budget)
    page = render_markdown(doc, names)
    atomic_write(out / "verdict.json", (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    atomic_write(out / "verdict.md", page.encode("utf-8"))
    add_verdict(final, page)
    print(f"mitigation verdict in {out}/verdict.md: {doc['summary']}")
    return out
