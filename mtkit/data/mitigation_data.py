"""The splits of a gender-bias mitigation run (``--gender_data``): the counterfactual pairs cut into tuning,
selection and verdict pairs (every row of an ID in one part; the pairs that hold a gendered word held out,
``--unseen_fraction``, in the verdict or left out; a table, a selection or a verdict without a complete pair refused
before training), the tuning pairs mixed with a seeded sample of the model's general training pairs
(``--replay_ratio``; the control arm, ``--tuning_pairs false``, trains on that sample alone), and the general
validation and test splits kept for the quality budget and the cost.

Split names: ``train`` (tuning pairs + replay), ``validation`` (selection pairs: the gender figures that choose the
checkpoint), ``general`` (the general validation split: the BLEU budget), ``test`` (the general test split: the
cost, in the verdict), ``verdict`` (pairs never trained on nor used to choose), ``tuning`` (the tuning pairs alone,
for the leakage check).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from datasets import Dataset, DatasetDict, concatenate_datasets

from bias_eval.core.textio import atomic_write
from bias_eval.mtgeneval.gendered import GENDERS
from mtkit.config import RunConfig
from mtkit.data.corpus import Splits, load_table, mtgeneval_rows, table_rows
from mtkit.data.heldout import heldout_split, word_holdout
from mtkit.data.mtgeneval import available_splits, layout_name, load_mtgeneval, mtgeneval_root
from mtkit.data.pairs import find_pairs, unit_words
from mtkit.errors import UserError
from mtkit.processes import is_main_process

PLAIN = ["source", "target", "lang"]


def _gendered(cfg: RunConfig, split: str | None) -> Dataset:
    """The rows of ``--gender_data`` (``split`` of an MT-GenEval folder, or the table), every one with a gender."""
    path = Path(str(cfg.mitigation.gender_data))
    if path.is_dir():
        try:
            return mtgeneval_rows(load_mtgeneval(path, str(split), cfg.data.languages()))
        except UserError as err:
            raise UserError(f"--gender_data {path}: {err}") from None
    if not path.is_file():
        raise UserError(f"--gender_data {path}: no such file or folder")
    table = load_table(path, cfg.data, line_aligned=True)  # its verdict pairs are written one a line
    if table.gender is None:
        raise UserError(f"--gender_data {path}: no gender column (feminine/masculine rows sharing an ID)")
    return table_rows(table)


def _need_pairs(rows: Dataset, message: str) -> Dataset:
    """``rows``, refused with ``message`` (and what a pair is) when they hold no complete counterfactual pair
    (:func:`mtkit.data.pairs.find_pairs`): a mitigation chooses and is judged on pairs."""
    if not find_pairs(*(rows[c][:] for c in ("lang", "gender", "pair_id"))).complete:  # lists: indexed fast
        raise UserError(f"{message} (a feminine and a masculine row sharing an ID, and no other row)")
    return rows


def replay(cfg: RunConfig, pool: Dataset, tuning: int) -> Dataset:
    """The seeded sample of general training pairs replayed beside ``tuning`` tuning pairs (``--replay_ratio`` of
    the training data): the same rows whether the tuning pairs are trained on or not (the control arm); refused when
    nothing would be trained on."""
    m = cfg.mitigation
    if m.replay_ratio == 0 and (m.control_arm() or not m.tuning_pairs):
        why = "--control replay trains a control on the replay alone" if m.tuning_pairs else "--tuning_pairs false"
        raise UserError(f"--replay_ratio 0: {why}, which would have no data; give a replay ratio or --control none")
    wanted = min(len(pool), round(m.replay_ratio / (1 - m.replay_ratio) * tuning))
    picked = np.sort(np.random.default_rng([cfg.train.seed, 7]).choice(len(pool), wanted, replace=False))
    return pool.select(picked).select_columns(PLAIN)


def hold_out_words(cfg: RunConfig, pairs: Dataset, candidates: set[str] | None = None) -> tuple[Dataset, Dataset]:
    """``(withheld, kept)``: the rows of the units that hold a gendered word held out (:func:`word_holdout`,
    ``--unseen_fraction`` of the units, words drawn from ``candidates``, default every pair's), and the others; one
    note line says how many and which words. Without ``candidates`` the withheld pairs are part of the verdict's
    ``--verdict_fraction``, which must leave room for others."""
    m = cfg.mitigation
    if candidates is None and m.unseen_fraction >= m.verdict_fraction:
        raise UserError(f"--unseen_fraction {m.unseen_fraction}: must be below --verdict_fraction "
                        f"{m.verdict_fraction} (the pairs held out by words are part of the verdict's)")  # fmt: skip
    words, withheld = word_holdout(unit_words(pairs.to_list()), m.unseen_fraction, cfg.train.seed, candidates)
    keys = pairs["pair_id"][:]
    if withheld and is_main_process():
        done = "left out of the tuning and selection pairs" if candidates is not None else "in the verdict"
        named = ", ".join(sorted(words)[:5]) + (", ..." if len(words) > 5 else "")
        print(f"note: --gender_data {m.gender_data}: {len(withheld)} pairs hold one of {len(words)} gendered words "
              f"held out ({named}): {done}", file=sys.stderr)  # fmt: skip
    return (pairs.select([i for i, k in enumerate(keys) if k in withheld]),
            pairs.select([i for i, k in enumerate(keys) if k not in withheld]))  # fmt: skip


def own_verdict_split(cfg: RunConfig) -> bool:
    """Whether the verdict has an MT-GenEval split of its own, present in the folder (else it is held out of the
    tuning pairs)."""
    m = cfg.mitigation
    path = Path(str(m.gender_data))
    if not m.verdict_split or m.verdict_split == m.gender_split or not path.is_dir():
        return False
    return m.verdict_split in available_splits(mtgeneval_root(path))


def mitigation_splits(cfg: RunConfig, general: DatasetDict) -> DatasetDict:
    """The run's splits (see the module docstring) from ``--gender_data`` and the general data ``general``;
    ``general`` itself when the run is no mitigation."""
    m, seed = cfg.mitigation, cfg.train.seed
    if not m.enabled():
        return general
    if not cfg.model.model_name_or_path:
        raise UserError("--gender_data: a mitigation starts from a trained model; give --model_name_or_path")
    where = f"--gender_data {m.gender_data}"
    pairs = _need_pairs(_gendered(cfg, m.gender_split), f"{where}: no complete pair")
    if own_verdict_split(cfg):
        verdict = _need_pairs(
            _gendered(cfg, m.verdict_split), f"{where}: its {m.verdict_split} split has no complete pair"
        )
        words = set().union(*(g for g, _ in unit_words(verdict.to_list()).values()))
        left = f"--unseen_fraction {m.unseen_fraction}: no complete pair of {where} left to tune on"
        pairs = _need_pairs(hold_out_words(cfg, pairs, words)[1], left)
    else:
        unseen, pairs = hold_out_words(cfg, pairs)
        held, kept = (len(set(part["pair_id"][:])) for part in (unseen, pairs))
        share = held / (held + kept)
        pairs, verdict = heldout_split(pairs, (m.verdict_fraction - share) / (1 - share), seed)
        verdict = concatenate_datasets([verdict, unseen]) if len(unseen) else verdict
        _need_pairs(verdict, f"--verdict_fraction {m.verdict_fraction}: no complete pair of {where} held out")
    for lang in sorted(set(verdict["lang"][:])):  # the verdict reads its pairs under this name: checked before training
        layout_name(lang, f"{where}: language")
    tuning, selection = heldout_split(pairs, m.selection_fraction, seed + 1)
    _need_pairs(selection, f"--selection_fraction {m.selection_fraction}: no complete pair of {where} held out")
    train = replay(cfg, general["train"], len(tuning))
    if m.tuning_pairs:
        train = concatenate_datasets([tuning.select_columns(PLAIN), *([train] if len(train) else [])])
    out = {"train": train, "validation": selection, "general": general["validation"], "verdict": verdict}
    out.update({"test": general["test"]} if "test" in general else {})
    return Splits({**out, "tuning": tuning}, getattr(general, "left_out", None))  # what its tables left out


def write_pairs_layout(rows: Dataset, root: Path, split: str = "test") -> dict[str, list[str]]:
    """The complete counterfactual pairs of ``rows`` written in MT-GenEval's layout under ``root`` (line i of the
    feminine and the masculine files one pair), for ``bias_eval``; returns each language's units (``pair_id``) line by
    line, under the tag its file names spell (:func:`mtkit.data.mtgeneval.layout_name`: ``pt_BR`` -> ``pt-BR``), the
    one :func:`mtkit.data.mtgeneval.load_mtgeneval` reads back."""
    records = rows.to_list()
    by_lang: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for pair in find_pairs(*(rows[c][:] for c in ("lang", "gender", "pair_id"))).complete.values():
        by_lang[records[pair[0]]["lang"]].append(pair)
    for lang, complete in sorted(by_lang.items()):
        folder, tag = root / "sentences" / split, layout_name(lang)
        for k, gender in enumerate(GENDERS):
            name = f"geneval-sentences-{gender}-{split}.en_{tag}"
            for side, key in (("en", "source"), (tag, "target")):
                text = "".join(records[pair[k]][key] + "\n" for pair in complete)
                atomic_write(folder / f"{name}.{side}", text.encode("utf-8"))
    return {layout_name(lang): [records[f]["pair_id"] for f, _ in by_lang[lang]] for lang in sorted(by_lang)}
