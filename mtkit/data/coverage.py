"""Can a tokenizer write a target language? The share of a language's characters it cannot round-trip.

flan-t5's vocabulary covers Latin-script European languages and next to nothing of Cyrillic, Devanagari, Arabic or
Chinese: a model fine-tuned or evaluated on such a target silently reads and writes unknown tokens. These checks
refuse that before any work, with one line (:func:`check_coverage` on reference texts, :func:`check_language` on a
built-in table of each language's letters when only the language is known), unless forced.

A non-whitespace character of a text is *uncovered* when

- encoding the text (without special tokens) puts it inside an unknown token (with a word-level vocabulary, a whole
  unknown word; needs a fast tokenizer's offsets), or
- on its own it encodes without the unknown token but decodes to something else than itself or its NFKC form
  (whitespace ignored): a lossy normalizer or decoder (an uncased vocabulary, accents stripped). Characters the
  tokenizer writes in their NFKC form (full-width letters, ligatures such as ``ﬁ``) count as covered.

Without offsets (a slow tokenizer such as ByT5's), a character that encodes to the unknown token on its own is
uncovered everywhere. The share is uncovered occurrences over all non-whitespace occurrences.
"""

from __future__ import annotations

import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from bias_eval.core.langtag import base_language
from mtkit.config import RunConfig
from mtkit.errors import UserError
from mtkit.processes import is_main_process

#: Above this share of uncovered characters, a language is refused (1%).
THRESHOLD = 0.01
#: At most this many texts of a language are measured (the first ones; callers pass a seeded sample).
SAMPLE_LINES = 2000
#: What to use instead, in the refusal.
ALTERNATIVES = (
    "use a multilingual model (google/mt5-base, google/umt5-base or google/byt5-base) or a tokenizer trained for "
    "the pair (train from scratch: no --model_name_or_path/--tokenizer_name)"
)

#: What to do instead when the model was trained from scratch with a tokenizer learned from its own training data.
RETRAIN = (
    "train it again on data that contains them (e.g. sentences with {kinds}), so that its new tokenizer learns them"
)
#: Unicode categories (their first letter, or the whole for letters) by the name the refusal gives them.
KINDS = {"Nd": "digits", "Lu": "capital letters", "L": "letters", "P": "punctuation", "S": "symbols", "N": "numerals"}

_LATIN = "abcdefghijklmnopqrstuvwxyz"
_DEVANAGARI = "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसहािीुूेैोौंः्"
_CYRILLIC_RU = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"

#: Each language's everyday letters (lowercase), for callers that know only the target language. A tokenizer that
#: cannot write one of them cannot write the language; chosen from the Unicode blocks of each script and each
#: alphabet's letters in common use (rare letters such as French ÿ left out). Chinese: its most frequent Han
#: characters; Korean: frequent Hangul syllables; Japanese: the hiragana.
EXEMPLARS: dict[str, str] = {
    "en": _LATIN,
    "de": _LATIN + "äöüß",
    "fr": _LATIN + "àâçéèêëîïôœùû",
    "es": _LATIN + "áéíñóúü",
    "it": _LATIN + "àèéìòù",
    "pt": _LATIN + "áâãàçéêíóôõú",
    "nl": _LATIN + "éëï",
    "ca": _LATIN + "àçéèíïòóúü",
    "ro": _LATIN + "ăâîșț",
    "pl": _LATIN + "ąćęłńóśźż",
    "cs": _LATIN + "áčďéěíňóřšťúůýž",
    "hr": _LATIN + "čćđšž",
    "hu": _LATIN + "áéíóöőúüű",
    "sv": _LATIN + "åäö",
    "fi": _LATIN + "äö",
    "da": _LATIN + "æøå",
    "no": _LATIN + "æøå",
    "nb": _LATIN + "æøå",
    "tr": "abcçdefgğhıijklmnoöprsştuüvyz",
    "ru": _CYRILLIC_RU,
    "uk": "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
    "bg": "абвгдежзийклмнопрстуфхцчшщъьюя",
    "sr": "абвгдђежзијклљмнњопрстћуфхцчџш",
    "el": "αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώ",
    "he": "אבגדהוזחטיכךלמםנןסעפףצץקרשת",
    "ar": "ءآأؤإئابةتثجحخدذرزسشصضطظعغفقكلمنهوىي",
    "fa": "آابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی",
    "ur": "آابپتٹثجچحخدڈذرڑزژسشصضطظعغفقکگلمنںوہھیے",
    "hi": _DEVANAGARI,
    "mr": _DEVANAGARI + "ळ",
    "ne": _DEVANAGARI,
    "zh": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年",
    "ja": "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん",
    "ko": "이의가는다에하고을를서지한로기사나도리자대수일그어시정국인아전해으우제있것들주보만",
}


@dataclass(frozen=True)
class Coverage:
    """What :func:`measure_coverage` found: non-whitespace characters measured, those uncovered, and the uncovered
    characters with their counts, most frequent first."""

    total: int
    uncovered: int
    missing: tuple[tuple[str, int], ...]

    @property
    def share(self) -> float:
        """Uncovered characters over all measured ones (0 for no text)."""
        return self.uncovered / self.total if self.total else 0.0


def _round_trips(tokenizer, char: str, unk: int | None) -> bool | None:
    """Whether ``char`` alone encodes without the unknown token and decodes to itself or its NFKC form (whitespace
    ignored); ``None`` when it encodes to the unknown token (the texts' own encoding decides)."""
    ids = tokenizer.encode(char, add_special_tokens=False)
    if unk is not None and unk in ids:
        return None
    decoded = "".join(tokenizer.decode(ids, skip_special_tokens=True).split())
    return decoded in (char, "".join(unicodedata.normalize("NFKC", char).split()))


def measure_coverage(tokenizer, texts: Iterable[str], max_lines: int = SAMPLE_LINES) -> Coverage:
    """The characters of the first ``max_lines`` of ``texts`` that ``tokenizer`` cannot round-trip (module doc)."""
    lines = [text for text in islice(texts, max_lines) if text]
    counts = Counter(c for line in lines for c in line if not c.isspace())
    unk = tokenizer.unk_token_id
    lost: Counter[str] = Counter()
    offsets = None
    if unk is not None and lines:
        encoded = tokenizer(lines, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets = encoded.get("offset_mapping")  # None from a slow tokenizer
    if offsets is not None:
        for line, ids, spans in zip(lines, encoded["input_ids"], offsets):
            inside = {i for token, (start, end) in zip(ids, spans) if token == unk for i in range(start, end)}
            lost.update(line[i] for i in inside if not line[i].isspace())
    for char, n in counts.items():
        alone = _round_trips(tokenizer, char, unk)
        if alone is False or (alone is None and offsets is None):
            lost[char] = n
    missing = tuple(sorted(lost.items(), key=lambda item: (-item[1], item[0])))
    return Coverage(total=sum(counts.values()), uncovered=sum(lost.values()), missing=missing)


def _examples(coverage: Coverage, k: int = 5) -> str:
    return " ".join(repr(char) for char, _ in coverage.missing[:k])


def kinds(coverage: Coverage) -> str:
    """What the uncovered characters are (digits, capital letters, punctuation, ...), most frequent kind first."""
    found: list[str] = []
    for char, _ in coverage.missing:
        category = unicodedata.category(char)
        name = KINDS.get(category) or KINDS.get(category[0]) or "other characters"
        found += [name] if name not in found else []
    return ", ".join(found)


def trained_from_scratch(model: str | Path) -> bool:
    """Whether ``model`` is a folder of a model trained from scratch with a tokenizer learned from its own training
    data: the run it is the ``final/`` of (its parent's ``config.yaml``), or its model card, says so."""
    path = Path(model)
    if not path.is_dir():
        return False
    run_config = path.parent / "config.yaml"
    if path.name == "final" and run_config.is_file():
        import yaml

        saved = yaml.safe_load(run_config.read_text(encoding="utf-8")) or {}
        model_keys, tokenizer_keys = saved.get("model") or {}, saved.get("tokenizer") or {}
        return not model_keys.get("model_name_or_path") and not tokenizer_keys.get("tokenizer_name")
    card = path / "README.md"
    return card.is_file() and "trained from scratch" in card.read_text(encoding="utf-8", errors="replace")


def _cause(coverage: Coverage, scratch: bool) -> tuple[str, str]:
    """Why the characters are lost, and what to do, for a tokenizer learned from scratch or a given one."""
    if scratch:
        why = (
            ", because the model's own tokenizer never saw them: it was trained from scratch on its run's training "
            "data, which has none of them"
        )
        return why, RETRAIN.format(kinds=kinds(coverage))
    return ", for which the tokenizer has no token", ALTERNATIVES


def _refuse_or_warn(
    coverage: Coverage, message: str, flag: str, force: bool, threshold: float, advice: str = ALTERNATIVES
) -> Coverage:
    if coverage.share <= threshold or coverage.uncovered == 0:
        return coverage
    if not force:
        raise UserError(f"{message}; {advice}; or pass {flag} to go on anyway")
    if is_main_process():  # once per run, not once per process
        print(f"warning: {message}; going on ({flag})", file=sys.stderr)
    return coverage


def check_coverage(
    tokenizer,
    texts: Iterable[str],
    lang: str,
    *,
    flag: str,
    force: bool,
    threshold: float = THRESHOLD,
    source: str = "the tokenizer",
    what: str = "reference",
    scratch: bool = False,
) -> Coverage:
    """Refuse (:class:`UserError`, one line naming ``lang``, the share, examples, what to use instead and ``flag``)
    a tokenizer that cannot round-trip more than ``threshold`` of the characters of ``lang``'s ``texts``
    (:func:`measure_coverage`; ``what`` names the texts); with ``force``, one warning line on standard error
    instead. The refusal says why the characters are lost and what to do: ``scratch`` for a model trained from scratch
    with its own tokenizer (:func:`trained_from_scratch`), else for a given, pretrained tokenizer. Returns the
    measure."""
    coverage = measure_coverage(tokenizer, texts)
    why, advice = _cause(coverage, scratch)
    message = (
        f"{source} cannot write {coverage.share:.1%} of the {lang} {what} characters (unknown or lost in decoding: "
        f"{_examples(coverage)}; {kinds(coverage)}){why}, so the model would read and write unknown tokens"
    )
    return _refuse_or_warn(coverage, message, flag, force, threshold, advice)


def exemplars(lang: str | None) -> str | None:
    """The built-in letters of ``lang`` (``pt-BR`` and ``pt_br`` look up ``pt``); ``None`` when unknown."""
    return EXEMPLARS.get(base_language(lang))


def check_language(
    tokenizer,
    lang: str | None,
    *,
    flag: str,
    force: bool,
    threshold: float = THRESHOLD,
    source: str = "the tokenizer",
    scratch: bool = False,
) -> Coverage | None:
    """:func:`check_coverage` on ``lang``'s built-in letters (:data:`EXEMPLARS`, each counted once: one letter
    missing of 30 is 3.3%); ``None`` for a language without letters in the table (nothing checked)."""
    letters = exemplars(lang)
    if letters is None:
        return None
    coverage = measure_coverage(tokenizer, [" ".join(letters)])
    why, advice = _cause(coverage, scratch)
    message = (
        f"{source} cannot write {coverage.share:.1%} of the letters of {lang} (unknown or lost in decoding: "
        f"{_examples(coverage)}; {kinds(coverage)}){why}, so the model would write unknown tokens"
    )
    return _refuse_or_warn(coverage, message, flag, force, threshold, advice)


def target_samples(split, n: int = SAMPLE_LINES, seed: int = 0) -> dict[str, list[str]]:
    """Per target language (the ``lang`` column) of a ``datasets.Dataset`` of pairs, the targets of at most ``n`` of
    its rows, drawn at random (seeded) and in corpus order; the column is read through Arrow, not row by row."""
    import pyarrow.compute as pc

    langs = split.select_columns(["lang"]).with_format("arrow")[:].column("lang")
    rng = np.random.default_rng(seed)
    out: dict[str, list[str]] = {}
    for lang in sorted(pc.unique(langs).to_pylist()):
        rows = np.flatnonzero(pc.equal(langs, lang).to_numpy(zero_copy_only=False))
        if len(rows) > n:
            rows = np.sort(rng.choice(rows, n, replace=False))
        targets = split.select(rows).select_columns(["target"]).with_format("arrow")[:].column("target")
        out[lang] = targets.to_pylist()
    return out


def check_run_coverage(cfg: RunConfig, train) -> None:
    """Before training: a tokenizer the run is given (``--tokenizer_name``, or ``--model_name_or_path``'s) must
    write each target language of the training split (:func:`target_samples`), unless ``--force_coverage``. A
    tokenizer the run trains learns every character of its sample, so it is not checked."""
    name = cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path
    if not name:
        return
    from mtkit.data.tokenizer import load_tokenizer

    flag = "--tokenizer_name" if cfg.tokenizer.tokenizer_name else "--model_name_or_path"
    tokenizer = load_tokenizer(name, flag)
    for lang, texts in target_samples(train, seed=cfg.train.seed).items():
        check_coverage(
            tokenizer, texts, lang, flag="--force_coverage", force=cfg.train.force_coverage,
            source=f"{flag} {name}", what="training target",
        )  # fmt: skip


def model_tokenizer(model: str):
    """The tokenizer of ``model`` (a model folder, a CTranslate2 folder from ``scripts/export_ct2.py`` or a hub id), or
    ``None`` when it cannot be loaded: that is left to the model's loader, which says what is wrong with the folder."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(model))
    except (OSError, ValueError):
        return None


def check_model(model: str, texts: dict[str, list[str]], *, force: bool, flag: str = "--force") -> None:
    """:func:`check_coverage` of ``model``'s tokenizer (:func:`model_tokenizer`) on each language's texts."""
    tokenizer = model_tokenizer(model)
    if tokenizer is None:
        return
    scratch = trained_from_scratch(model)
    for lang, lines in texts.items():
        check_coverage(tokenizer, lines, lang, flag=flag, force=force, source=f"--model {model}", scratch=scratch)


def check_model_language(model: str, lang: str | None, *, force: bool, flag: str = "--force") -> Coverage | None:
    """:func:`check_language` of ``model``'s tokenizer (loaded only for a language of the table)."""
    tokenizer = model_tokenizer(model) if exemplars(lang) is not None else None
    if tokenizer is None:
        return None
    scratch = trained_from_scratch(model)
    return check_language(tokenizer, lang, flag=flag, force=force, source=f"--model {model}", scratch=scratch)
