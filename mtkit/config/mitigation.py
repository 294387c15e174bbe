"""The ``mitigation`` section of a run's recipe: fine-tune a trained model on gender-balanced counterfactual pairs,
with replay of its general data, a pull toward its starting model and a general-quality budget (read by
:mod:`mtkit.data.mitigation_data`, :mod:`mtkit.train.mitigation` and :mod:`mtkit.evaluation.verdict`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, fields
from typing import Literal

from bias_eval.core.decision import MIN_EFFECT, P_ADJUSTS, Rule
from mtkit.config.keys import key
from mtkit.errors import UserError


@dataclass
class MitigationConfig:
    """Gender-bias mitigation of --model_name_or_path (on when --gender_data is given)."""

    gender_data: str | None = key(
        None,
        "Gender-balanced counterfactual pairs to fine-tune on: MT-GenEval's layout (a folder) or a CSV/TSV/JSONL "
        "table with source, target, gender and ID columns (one feminine and one masculine row per ID); the run's "
        "data (--data_dir, ...) is the model's general data, replayed and used for the quality budget.",
    )
    gender_split: str = key("dev", "MT-GenEval split of --gender_data to fine-tune on (dev or test).")
    verdict_split: str | None = key(
        "test",
        "MT-GenEval split of --gender_data the verdict is measured on; when the folder lacks it (or it is "
        "none, --gender_split itself, or --gender_data is a table), --verdict_fraction of the pairs are held out "
        "for it instead.",
    )
    verdict_fraction: float = key(
        0.4,
        "Share of the pairs held out for the verdict when it has no split of its own (the pairs held out by their "
        "words, --unseen_fraction, among them).",
    )
    unseen_fraction: float = key(
        0.2,
        "Share of the pairs held out by their gendered words: words drawn at random until the pairs that hold any of "
        "them reach this share; those pairs go to the verdict (when it has no split of its own; else they are left "
        "out, the words drawn from the verdict's), so no tuning or selection pair holds these words, and the verdict "
        "reports pairs with a word the tuning pairs lack apart (0: a cut by ID alone).",
    )
    selection_fraction: float = key(0.2, "Share of the tuning pairs held out to choose the checkpoint.")
    replay_ratio: float = key(
        0.5, "Share of general training pairs (a seeded sample) in the mitigation training data (0: none)."
    )
    l2_to_start: float = key(
        0.0, "Pull toward the starting weights: adds this x the summed squared distance of the trained weights."
    )
    distill_to_start: float = key(
        0.0,
        "Pull toward the starting model by distillation: this share of every target token's loss is taken against "
        "the start's predicted distribution (a frozen copy, one more forward per batch) instead of the reference.",
    )
    max_bleu_drop: float = key(
        1.0,
        "Quality budget: a checkpoint is kept only if its general validation BLEU is at most this many points "
        "below the start's (measured at update 0).",
    )
    max_accuracy_drop: float = key(
        2.0,
        "Levelling-down budget, in points: a checkpoint is kept only if the accuracy (--mitigation_accuracy) of the "
        "gender the start served better on the selection pairs is at most this far below the start's; among those "
        "(and --max_bleu_drop's), the one with the best accuracy of the worse-served gender is kept.",
    )
    mitigation_accuracy: Literal["strict", "lenient"] = key(
        "strict",
        "The accuracy the checkpoint is kept by and the verdict's headline gap is of: strict (an output with a word of "
        "its sentence's gender and none of the other) or lenient (MT-GenEval's: no word of the other gender, so an "
        "output without a gendered word counts as right and leaving the gender out cannot be told from getting it "
        "right).",
    )

    p_adjust: Literal["holm", "none"] = key(
        P_ADJUSTS[0],
        "The verdict's and its comparisons' paired tests: p-values adjusted over each table's tests by Holm's "
        "step-down method (holm) or not (none); a change is a finding when its adjusted p is below 0.05.",
    )
    min_effect: float = key(
        MIN_EFFECT,
        "The smallest change the verdict and its comparisons call a finding, in points (percentage points for "
        "accuracies and their gaps, BLEU or chrF points for those).",
    )
    control: Literal["replay", "none"] = key(
        "replay",
        "Control arm: after the mitigated run, the same start trained for as many updates on the replay alone (same "
        "schedule, seed, pulls, budgets and checkpoint rule) into control/ in the run folder, and the verdict compares "
        "start, control and mitigated model; none: no control, and the verdict cannot separate the mitigation from "
        "further training.",
    )
    tuning_pairs: bool = key(
        True,
        "Train on the tuning pairs; false trains on the replay alone, as the control arm does (--control replay "
        "runs it in the run folder's control/ with this false).",
    )

    def enabled(self) -> bool:
        """Whether the run is a mitigation (``--gender_data`` given)."""
        return bool(self.gender_data)

    def rule(self) -> Rule:
        """How the verdict decides a change (:class:`bias_eval.core.decision.Rule`)."""
        return Rule(self.p_adjust, self.min_effect)

    def control_arm(self) -> bool:
        """Whether the run trains a control arm after the mitigated one."""
        return self.enabled() and self.control == "replay"

    def check_flags(self, flags: Collection[str]) -> None:
        """Refuse a mitigation key given on the command line (``flags``) to a run that is no mitigation: without
        ``--gender_data`` it would be ignored. One line naming the flag."""
        if self.enabled():
            return
        for name in (f.name for f in fields(self) if f.name != "gender_data"):
            if name in flags or f"no_{name}" in flags:
                raise UserError(f"--{name}: only used with --gender_data (a bias mitigation of --model_name_or_path)")
