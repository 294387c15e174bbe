"""One training run from its config to its report: train (:mod:`mtkit.train`; a mitigation's control arm after it,
:mod:`mtkit.train.control`, on every process), then, on the main process alone, the end-of-run steps ``final/`` asks
for: CTranslate2 (``--export_ct2``), the gender-bias reports (``--bias_report_split``, ``--winomt_dir``), a
mitigation's verdict (``mitigation:``), the model card and the upload to the hub (``--push_to_hub``).

The run's record (:class:`~mtkit.train.record.RunRecord`, made by the trainer) takes what each step adds, in memory.
``final/``'s card and ``results.json`` are written once from it when every local step is done, both before the
upload, so that a failed upload loses nothing; both are written even when a step fails, with what the steps before it
added. The upload is the last step: only its commit is written to ``results.json`` after it."""

from __future__ import annotations

import sys
from pathlib import Path

from mtkit.config import RunConfig
from mtkit.distributed.deepspeed import zero_stage
from mtkit.errors import UserError
from mtkit.evaluation.run_reports import bias_report, winomt_report
from mtkit.evaluation.scores import scoring
from mtkit.export.card import environment, final_weights, save_card, training_card
from mtkit.export.card_bias import with_bias_report, with_comparison, with_verdict, with_winomt
from mtkit.export.ct2 import export_ct2, resolve
from mtkit.export.hub import missing, push, repo_id_for
from mtkit.processes import is_main_process
from mtkit.train.checks import bias_report_split, check_run_apart
from mtkit.train.control import train_control
from mtkit.train.lock import lock_run
from mtkit.train.mitigation_verdict import mitigation_verdict
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
    if split := bias_report_split(cfg):
        record.bias = bias_report(cfg, split, final, out / "bias_report")
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
