"""MT-GenEval in its original repository layout (``sentences/<split>/``, ``annotated/``, ``context/``).

References are the *plain* files ``sentences/<split>/geneval-sentences-<gender>-...``, read verbatim (in one
Unicode normal form, :func:`bias_eval.core.textio.read_sentences`): the
official ``accuracy_metric.py`` of amazon-science/machine-translation-gender-eval uses exactly those files as
correct and counterfactual references. The square brackets found in a few lines (``[citation needed]``-style
Wikipedia remarks) are part of the text in both the English source and the reference, so they are kept. The
``annotated/`` files are the same sentences with the gendered words wrapped in ``<F>..</F>`` / ``<M>..</M>``;
they are only used to list those words in the details.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from bias_eval.core.langtag import LanguageTag
from bias_eval.core.textio import read_sentences
from bias_eval.mtgeneval.gendered import GENDERS, ContextSet, GenderedData, LanguageData, Side, annotated_keywords
from mtkit.data.origin import DEMO_NAME, demo_corpus_root
from mtkit.errors import UserError


def mtgeneval_root(directory: Path) -> Path:
    """The folder holding ``sentences/`` (the repository's ``data/`` folder or the folder itself)."""
    if not directory.is_dir():
        raise UserError(f"--mtgeneval_dir: {directory} is not a directory")
    for candidate in (directory, directory / "data"):
        if (candidate / "sentences").is_dir():
            return candidate
    raise UserError(
        f"--mtgeneval_dir: {directory} has no sentences/ folder "
        "(expected the MT-GenEval layout sentences/<split>/geneval-sentences-<gender>-<split>.en_<lang>.*)"
    )


def _sentence_file(
    root: Path,
    split: str,
    gender: str,
    lang: str,
    side: str,
    annotated: bool = False,
) -> Path:
    folder = root / "sentences" / split / ("annotated" if annotated else "")
    return folder / f"geneval-sentences-{gender}-{split}.en_{lang}.{side}"


def _context_file(root: Path, split: str, kind: str, lang: str) -> Path:
    side = "en" if kind == "2to1" else lang
    return root / "context" / f"geneval-context-wikiprofessions-{kind}-{split}.en_{lang}.{side}"


def available_splits(root: Path) -> list[str]:
    """Splits with a folder under ``sentences/``."""
    return sorted(p.name for p in (root / "sentences").iterdir() if p.is_dir())


def layout_name(lang: str, where: str = "language") -> str:
    """How the layout's file names spell language ``lang`` (its one BCP 47 tag: ``pt_BR`` -> ``pt-BR``), the
    spelling :func:`language_files` reads back as the same tag; no tag is one line naming ``where``."""
    return str(LanguageTag.parse(lang, where))


def language_files(root: Path, split: str) -> dict[str, str]:
    """Each language whose four sentence files (sources and references of both genders) exist for ``split``: its tag
    (:class:`~bias_eval.core.langtag.LanguageTag`, one spelling: ``en_pt_BR`` and ``en_pt-BR`` are ``pt-BR``) and the
    spelling its file names use."""
    folder = root / "sentences" / split
    if not folder.is_dir():
        return {}
    pattern = re.compile(rf"geneval-sentences-feminine-{re.escape(split)}\.en_([A-Za-z0-9_-]+)\.en$")
    langs = {}
    for path in folder.iterdir():
        match = pattern.match(path.name)
        tag = LanguageTag.read(match.group(1)) if match else None
        if tag is None:
            continue
        lang = match.group(1)
        needed = [_sentence_file(root, split, g, lang, s) for g in GENDERS for s in ("en", lang)]
        if all(p.is_file() for p in needed):
            langs[str(tag)] = lang
    return dict(sorted(langs.items()))


def available_languages(root: Path, split: str) -> list[str]:
    """The tags of :func:`language_files`, sorted."""
    return list(language_files(root, split))


def _require_same_length(columns: Mapping[Path, Sequence[str]]) -> int:
    lengths = {path: len(lines) for path, lines in columns.items()}
    first_path, first = next(iter(lengths.items()))
    for path, count in lengths.items():
        if count != first:
            raise UserError(f"{path}: {count} lines, but {first_path} has {first}")
    return first


def _load_mtgeneval_language(root: Path, split: str, tag: str, lang: str, context: bool) -> LanguageData:
    """Language ``tag`` of the layout, whose file names spell it ``lang``."""
    src = {g: _sentence_file(root, split, g, lang, "en") for g in GENDERS}
    ref = {g: _sentence_file(root, split, g, lang, lang) for g in GENDERS}
    lines = {p: read_sentences(p) for p in [*src.values(), *ref.values()]}
    _require_same_length(lines)

    keywords: dict[str, list[list[str]] | None] = {g: None for g in GENDERS}
    ann = {g: _sentence_file(root, split, g, lang, lang, annotated=True) for g in GENDERS}
    if all(p.is_file() for p in ann.values()):
        ann_lines = {p: read_sentences(p) for p in ann.values()}
        _require_same_length({**lines, **ann_lines})
        keywords = {g: [annotated_keywords(line) for line in ann_lines[ann[g]]] for g in GENDERS}

    other = {"feminine": "masculine", "masculine": "feminine"}
    sides = {
        g: Side(
            sources=lines[src[g]],
            references=lines[ref[g]],
            counterfactuals=lines[ref[other[g]]],
            keywords=keywords[g],
            origin=str(ref[g]),
        )
        for g in GENDERS
    }
    ctx = _load_context(root, split, lang) if context else None
    return LanguageData(tag, sides["feminine"], sides["masculine"], paired=True, context=ctx)


def _load_context(root: Path, split: str, lang: str) -> ContextSet:
    files = {kind: _context_file(root, split, kind, lang) for kind in ("2to1", "original", "flipped")}
    for path in files.values():
        if not path.is_file():
            raise UserError(f"--context: {path} not found (the contextual subset needs context/ files)")
    lines = {p: read_sentences(p) for p in files.values()}
    _require_same_length(lines)
    return ContextSet(
        sources=lines[files["2to1"]],
        original=lines[files["original"]],
        flipped=lines[files["flipped"]],
        origin=str(files["original"]),
    )


def load_mtgeneval(
    directory: Path, split: str, langs: Sequence[str] | None = None, context: bool = False
) -> GenderedData:
    """Load MT-GenEval from its repository layout; ``langs=None`` means every language of ``split``."""
    root = mtgeneval_root(directory)
    splits = available_splits(root)
    if split not in splits:
        found = " ".join(splits) or "none"
        raise UserError(f"--split: split {split!r} not present in {root / 'sentences'} (found: {found})")
    present = language_files(root, split)
    if not present:
        raise UserError(f"--split: {root / 'sentences' / split} holds no complete language")
    wanted = [str(LanguageTag.parse(lang, "--target_langs")) for lang in langs] if langs else list(present)
    for lang in wanted:
        if lang not in present:
            available = " ".join(present)
            raise UserError(
                f"--target_langs: language {lang!r} not present for split {split} in {root} (available: {available})"
            )
    languages = {
        lang: _load_mtgeneval_language(root, split, lang, present[lang], context) for lang in sorted(set(wanted))
    }
    if demo_corpus_root(root) is not None:
        name = f"{DEMO_NAME}'s gender pairs ({split}, {root}; MT-GenEval's layout)"
        return GenderedData(name=name, split=split, languages=languages, demo=True)
    return GenderedData(name=f"MT-GenEval {split} ({root})", split=split, languages=languages)
