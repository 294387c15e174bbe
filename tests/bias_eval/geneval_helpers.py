"""Helpers for the bias_eval tests: paths of the shared MT-GenEval copy, reduced copies, hypothesis files."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU
from testing_utils import SHARED_DATA

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_GENEVAL = SHARED_DATA / "mt-geneval"
LANGS = ("de", "es", "fr", "it", "pt")
GENDERS = ("feminine", "masculine")


def read_plain(path: Path) -> list[str]:
    """Lines of a UTF-8 file, for building expectations independently of the package under test."""
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def geneval_file(root: Path, lang: str, gender: str, side: str, split: str = "dev") -> Path:
    """Path of an MT-GenEval sentence file."""
    return root / "sentences" / split / f"geneval-sentences-{gender}-{split}.en_{lang}.{side}"


def make_subset(
    source: Path,
    target: Path,
    langs: Sequence[str],
    lines: int,
    *,
    split: str = "test",
    annotated: bool = False,
    context: bool = False,
) -> Path:
    """Copy the first ``lines`` lines of some languages into a new MT-GenEval layout (under ``split``)."""
    for lang in langs:
        for gender in ("feminine", "masculine"):
            for side in ("en", lang):
                name = f"geneval-sentences-{gender}-{split}.en_{lang}.{side}"
                folders = [("", "")] + ([("annotated", "annotated")] if annotated else [])
                for sub_in, sub_out in folders:
                    dev_name = f"geneval-sentences-{gender}-dev.en_{lang}.{side}"
                    src = source / "sentences" / "dev" / sub_in / dev_name
                    dst = target / "sentences" / split / sub_out / name
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_text("\n".join(read_plain(src)[:lines]) + "\n", encoding="utf-8")
        if context:
            for kind, side in (("2to1", "en"), ("original", lang), ("flipped", lang)):
                src = source / "context" / f"geneval-context-wikiprofessions-{kind}-dev.en_{lang}.{side}"
                dst = target / "context" / f"geneval-context-wikiprofessions-{kind}-{split}.en_{lang}.{side}"
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text("\n".join(read_plain(src)[:lines]) + "\n", encoding="utf-8")
    return target


def write_hyps(folder: Path, hyps: dict[str, dict[str, Sequence[str]]]) -> Path:
    """Write ``<lang>.<kind>.txt`` hypothesis files."""
    folder.mkdir(parents=True, exist_ok=True)
    for lang, kinds in hyps.items():
        for kind, lines in kinds.items():
            (folder / f"{lang}.{kind}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def reference_hyps(root: Path, langs: Sequence[str], split: str, use: Callable[[str], str]) -> dict:
    """Hypotheses that copy a reference: ``use(gender)`` says which gender's reference each gender gets."""
    hyps = {}
    for lang in langs:
        hyps[lang] = {g: read_plain(geneval_file(root, lang, use(g), lang, split)) for g in GENDERS}
    return hyps


def score_test_interval(hits: float, n: float, z: float = 1.959963984540054) -> list[float]:
    """The 95% score interval found by bisection, not by Wilson's closed form: the true shares ``q`` in [0, 1] that a
    two-sided score test does not reject, ``(hits/n - q)^2 <= z^2 q (1 - q) / n``."""
    p = hits / n

    def rejected(q: float) -> bool:
        return (p - q) ** 2 > z * z * q * (1 - q) / n

    def edge(inside: float, outside: float) -> float:
        for _ in range(200):
            middle = (inside + outside) / 2
            inside, outside = (inside, middle) if rejected(middle) else (middle, outside)
        return inside

    return [0.0 if not rejected(0.0) else edge(p, 0.0), 1.0 if not rejected(1.0) else edge(p, 1.0)]


class SentenceCounts:
    """sacreBLEU's BLEU statistics of each ``hyps``/``refs`` line pair (its default 13a tokenization), from
    ``sacrebleu.sentence_bleu`` once: :meth:`bleu` of any selection of pairs (repeats allowed) is then what
    ``sacrebleu.corpus_bleu`` gives on those lines, which sums the same counts, at the cost of a sum."""

    def __init__(self, hyps: Sequence[str], refs: Sequence[str]) -> None:
        scores = [sacrebleu.sentence_bleu(h, [r]) for h, r in zip(hyps, refs, strict=True)]
        self.counts = np.array([[*s.counts, *s.totals, s.sys_len, s.ref_len] for s in scores], dtype=np.int64)

    def total(self, idx: Sequence[int]) -> np.ndarray:
        """The summed statistics of the pairs at ``idx``."""
        return self.counts[np.asarray(idx)].sum(axis=0)


def bleu_of(total: np.ndarray) -> float:
    """Corpus BLEU from summed :class:`SentenceCounts` statistics, with ``corpus_bleu``'s default smoothing."""
    t = [int(x) for x in total]
    return BLEU.compute_bleu(t[:4], t[4:8], t[8], t[9], smooth_method="exp").score


def assert_same_but_figures(drawn: Path, bare: Path) -> None:
    """``bare``, a report or comparison made with ``--no_figures``, against ``drawn``, the same with its figures: no
    ``figures/``, no figure on its page or in its markdown, a report's command ending in ``--no_figures``; every other
    file the same, byte for byte (its own folder in the command aside)."""

    def files(folder: Path) -> set[str]:
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}

    kept = {name for name in files(drawn) if not name.startswith("figures/")}
    assert kept != files(drawn) and files(bare) == kept
    if (bare / "metrics.json").is_file():  # a report records the command that rebuilds it
        command = json.loads((bare / "metrics.json").read_text(encoding="utf-8"))["config"]["command"]
        assert command.endswith(" --no_figures")
    for name in sorted(kept):
        with_them, without = (folder / name for folder in (drawn, bare))
        if name.endswith((".json", ".md", ".html")):
            text = with_them.read_text(encoding="utf-8")
            text = re.sub(r"<figure id=.*?</figure>\n?", "", text, flags=re.S)  # the page's figures
            text = re.sub(r", figures/ \([a-z, ]+\)", "", text)  # the page's list of files
            text = re.sub(r"!\[[^\]]*\]\(figures/[^\n]*\n(?:\n\*[^\n]*\*\n\n)?", "", text)  # the markdown's
            assert "<figure" not in without.read_text(encoding="utf-8"), name
            bare_text = without.read_text(encoding="utf-8").replace(" --no_figures", "").replace(str(bare), str(drawn))
            assert bare_text == text, name
        else:
            assert without.read_bytes() == with_them.read_bytes(), name
