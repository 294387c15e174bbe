"""One training run from its config to its report: train (:mod:`mtkit.train`), then, on the main process alone, the
end-of-run conversions ``final/`` asks for: CTranslate2 (``--export_ct2``) and the gender-bias report
(``--bias_report_split``)."""

from __future__ import annotations

import json
from pathlib import Path

from mtkit.cli.bias_report import main as report_main
from mtkit.config import RunConfig
from mtkit.export.ct2 import export_ct2
from mtkit.train.checks import bias_report_split
from mtkit.train.trainer import Trainer


def run(cfg: RunConfig) -> dict:
    """Train (or resume) the run described by ``cfg``, then convert and report; return the final metrics."""
    trainer = Trainer(cfg)
    results = trainer.fit()
    if not trainer.accelerator.is_main_process:
        return results
    out = Path(cfg.train.output_dir)
    final = out / "final"
    if cfg.eval.export_ct2:  # alone from here: no collective left to time out
        results["ct2_model"] = str(convert_ct2(cfg, final, out / "final_ct2"))
    if bias_report_split(cfg):
        results["bias_report"] = str(bias_report(cfg, final, out / "bias_report"))
    (out / "results.json").write_text(json.dumps(results, indent=2))
    return results


def convert_ct2(cfg: RunConfig, final: Path, out: Path) -> Path:
    """``final/`` converted to CTranslate2 with ``--export_ct2``'s quantization (replacing an earlier ``out``)."""
    export_ct2(final, out, cfg.eval.export_ct2, force=True)
    print(f"CTranslate2 model ({cfg.eval.export_ct2}) in {out}")
    return out


def bias_report(cfg: RunConfig, final: Path, out: Path) -> Path:
    """The full ``bias_eval`` report of the exported model on ``--bias_report_split`` of ``--mtgeneval_dir``,
    decoded with the model's saved prompt and generation settings."""
    args = ["--mtgeneval_dir", str(cfg.data.mtgeneval_dir), "--split", str(bias_report_split(cfg))]
    args += ["--target_langs", *cfg.data.languages(), "--model", str(final), "--out", str(out)]
    args += ["--batch_size", str(cfg.eval.eval_batch_size)]
    report_main(args)
    return out
