"""Input checks a run makes before it writes anything: model and tokenizer sources, and the end-of-run steps asked
for (a CTranslate2 quantization it knows, an MT-GenEval split it can score)."""

from __future__ import annotations

from pathlib import Path

from mtkit.config import RunConfig
from mtkit.data.mtgeneval import available_splits, mtgeneval_root
from mtkit.decode.ct2 import QUANTIZATIONS
from mtkit.errors import UserError


def check_pretrained_source(value: str | None, flag: str, needs: tuple[str, ...] = ("config.json",)) -> None:
    """A local folder given to ``flag`` must exist and hold one of ``needs``; hub ids are left to the hub."""
    if not value:
        return
    path = Path(value).expanduser()
    local = value.startswith(("/", ".", "~")) or value.count("/") >= 2 or path.exists()
    if not local:
        return
    if not path.is_dir():
        raise UserError(f"{flag} {value}: no such folder (and not a hub id like google/flan-t5-base)")
    if not any((path / name).is_file() for name in needs):
        raise UserError(f"{flag} {value}: no {' or '.join(needs)} (not a folder written by save_pretrained)")


def bias_report_split(cfg: RunConfig) -> str | None:
    """``--bias_report_split``, with ``none`` (or empty) meaning no report."""
    split = cfg.eval.bias_report_split
    return None if not split or split.lower() == "none" else split


def check_ct2(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--export_ct2`` quantization CTranslate2 does not have."""
    if cfg.eval.export_ct2 and cfg.eval.export_ct2 not in QUANTIZATIONS:
        raise UserError(f"--export_ct2: {cfg.eval.export_ct2!r} is not one of {', '.join(QUANTIZATIONS)}")


def check_bias_report(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--bias_report_split`` the end of the run could not score."""
    split = bias_report_split(cfg)
    if not split:
        return
    if not cfg.data.mtgeneval_dir:
        raise UserError(f"--bias_report_split {split}: needs --mtgeneval_dir (MT-GenEval in its repository layout)")
    present = available_splits(mtgeneval_root(Path(cfg.data.mtgeneval_dir)))
    if split not in present:
        raise UserError(
            f"--bias_report_split: split {split!r} not in {cfg.data.mtgeneval_dir} (present: {', '.join(present)})"
        )
