"""Seeded English→Spanish demo corpus with a deliberate, documented gender skew.

The corpus is produced by a small synchronous grammar: every template builds the English and the
Spanish sentence from the same choices, so each English sentence has exactly one Spanish
translation (a small transformer trained on CPU can learn it and reach a high BLEU). Spanish
agreement is explicit: articles, profession nouns (``la enfermera``/``el enfermero``), adjectives
and participles agree in gender and number, and verbs are conjugated in the present, preterite,
imperfect, future and conditional. Templates cover simple SVO sentences, adjectives, locations,
passives, relative clauses, reported speech ("said that she ..."), modal verbs, plurals and
questions. Sentences have 5 to 20 words; the lexicon is a few hundred lemmas (about 600 English
and 1,200 Spanish word forms).

Gender in the English source is always recoverable when a profession appears: every sentence
that mentions a profession also has a cue for that person (he/she, his/her, him/her,
himself/herself, man/woman, men/women, Mr./Ms.), e.g. "The doctor finished her shift." →
"La doctora terminó su turno." Sentences without such a cue never mention a profession.

Deliberate bias (training split only): each profession has a fixed probability ``p_fem`` (see
``PROFESSIONS``, between 0.15 and 0.85) that a *training* sentence uses its feminine form, chosen
to follow common occupational stereotypes:

* mostly feminine (0.70-0.85): nurse, secretary, receptionist, hairdresser, dancer, librarian,
  cleaner, teacher, cashier, psychologist;
* mixed (0.35-0.65): designer, pharmacist, singer, baker, veterinarian, translator, writer,
  journalist, photographer, accountant, cook, lawyer, painter, doctor, researcher;
* mostly masculine (0.15-0.30): scientist, architect, judge, manager, director, boss, farmer,
  programmer, surgeon, driver, police officer, soldier, pilot, engineer, mechanic, plumber,
  electrician, firefighter, carpenter.

``feminine_scale`` (default 1) multiplies every profession's training ``p_fem``: 0.1 makes feminine forms ten times
rarer in the training split (a skew as real corpora have), while the held-out splits stay balanced.

The valid and test splits use 50 % feminine for every profession, and the MT-GenEval-style
counterfactual pairs are perfectly balanced, so a model trained on the skewed data can show a
measurable gender gap. No English sentence of valid, test or the gender pairs occurs in train.

The words live in ``grammar/*.yaml`` (read by :mod:`mtkit.demo.lexicon`); the sentence templates are in
:mod:`mtkit.demo.profession_templates` and :mod:`mtkit.demo.plain_templates`.

Usage: ``write_demo_corpus(out_dir, seed=0)`` or ``python scripts/demo_corpus.py OUT_DIR``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mtkit.data.origin import DEMO_TITLE
from mtkit.demo.lexicon import EN_GENDER_WORDS, PROFESSIONS, Pair, Profession
from mtkit.demo.plain_templates import PLAIN_TEMPLATES
from mtkit.demo.profession_templates import PROFESSION_TEMPLATES

__all__ = [
    "EN_GENDER_WORDS",
    "PROFESSIONS",
    "DemoCorpus",
    "Profession",
    "annotate_gender",
    "generate_corpus",
    "write_demo_corpus",
]

#: Share of sentences built around a profession.
PROFESSION_SHARE = 0.55

_MIN_WORDS, _MAX_WORDS = 5, 20


def _ok_length(pair: Pair) -> bool:
    return all(_MIN_WORDS <= len(s.split()) <= _MAX_WORDS for s in pair)


class _Sampler:
    """Draws sentence pairs; ``skewed`` applies each profession's training ``p_fem`` times ``feminine_scale``."""

    def __init__(self, rng: random.Random, skewed: bool, feminine_scale: float = 1.0) -> None:
        self.rng = rng
        self.skewed = skewed
        self.feminine_scale = feminine_scale
        self._p_fns = [f for f, _ in PROFESSION_TEMPLATES]
        self._p_w = [w for _, w in PROFESSION_TEMPLATES]
        self._n_fns = [f for f, _ in PLAIN_TEMPLATES]
        self._n_w = [w for _, w in PLAIN_TEMPLATES]

    def profession_pair(self, fem: bool | None = None) -> tuple[Pair, Profession, bool, int]:
        rng = self.rng
        prof = rng.choice(PROFESSIONS)
        if fem is None:
            fem = rng.random() < (prof.p_fem * self.feminine_scale if self.skewed else 0.5)
        idx = rng.choices(range(len(self._p_fns)), weights=self._p_w)[0]
        sub_seed = rng.getrandbits(64)
        return self._p_fns[idx](random.Random(sub_seed), prof, fem), prof, fem, idx

    def __call__(self) -> Pair:
        while True:
            if self.rng.random() < PROFESSION_SHARE:
                pair = self.profession_pair()[0]
            else:
                pair = self.rng.choices(self._n_fns, weights=self._n_w)[0](self.rng)
            if _ok_length(pair):
                return pair


def _sample_unique(sampler: Callable[[], Pair], n: int, seen: set[str]) -> list[Pair]:
    """Draw ``n`` pairs whose English side is not in ``seen`` (which is updated)."""
    out: list[Pair] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n + 1000:
            raise RuntimeError(f"demo grammar exhausted after {len(out)} unique sentences")
        pair = sampler()
        if pair[0] in seen:
            continue
        seen.add(pair[0])
        out.append(pair)
    return out


def _strip(tok: str) -> str:
    return tok.strip(".,?!¿¡").lower()


def _gender_pairs(rng: random.Random, n: int, seen: set[str]) -> list[tuple[Pair, Pair]]:
    """Counterfactual (feminine, masculine) pairs differing only in the person's gender."""
    out: list[tuple[Pair, Pair]] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n + 1000:
            raise RuntimeError("could not build enough gender pairs")
        prof = rng.choice(PROFESSIONS)
        fns = [f for f, _ in PROFESSION_TEMPLATES]
        fn = rng.choices(fns, weights=[w for _, w in PROFESSION_TEMPLATES])[0]
        sub_seed = rng.getrandbits(64)
        fem_pair = fn(random.Random(sub_seed), prof, True)
        masc_pair = fn(random.Random(sub_seed), prof, False)
        if not (_ok_length(fem_pair) and _ok_length(masc_pair)):
            continue
        if fem_pair[0] in seen or masc_pair[0] in seen:
            continue
        f_en, m_en = fem_pair[0].split(), masc_pair[0].split()
        f_es, m_es = fem_pair[1].split(), masc_pair[1].split()
        if len(f_en) != len(m_en) or len(f_es) != len(m_es):
            continue  # e.g. Spanish "al doctor" / "a la doctora"
        if any(a != b and not {_strip(a), _strip(b)} <= EN_GENDER_WORDS for a, b in zip(f_en, m_en, strict=True)):
            continue
        seen.update((fem_pair[0], masc_pair[0]))
        out.append((fem_pair, masc_pair))
    return out


_PUNCT = ".,?!¿¡"


def _split_punct(tok: str) -> tuple[str, str, str]:
    core = tok.strip(_PUNCT)
    start = tok.index(core) if core else len(tok)
    return tok[:start], core, tok[start + len(core) :]


def annotate_gender(fem_es: str, masc_es: str) -> tuple[str, str]:
    """Wrap the words where two equally long Spanish sentences differ in ``<F>``/``<M>`` tags.

    Adjacent differing words form one span (``<F>La enfermera</F>``); punctuation stays outside.
    """
    f_toks, m_toks = fem_es.split(), masc_es.split()
    if len(f_toks) != len(m_toks):
        raise ValueError("counterfactual sentences must have the same number of words")
    diff = [_strip(a) != _strip(b) for a, b in zip(f_toks, m_toks, strict=True)]
    result = []
    for tag, toks in (("F", f_toks), ("M", m_toks)):
        parts = [_split_punct(t) for t in toks]
        words: list[str] = []
        i = 0
        while i < len(toks):
            if not diff[i]:
                words.append(toks[i])
                i += 1
                continue
            j = i  # extend the span while the next word differs and no punctuation intervenes
            while j + 1 < len(toks) and diff[j + 1] and not parts[j][2] and not parts[j + 1][0]:
                j += 1
            inner = " ".join(p[1] for p in parts[i : j + 1])
            words.append(f"{parts[i][0]}<{tag}>{inner}</{tag}>{parts[j][2]}")
            i = j + 1
        result.append(" ".join(words))
    return result[0], result[1]


@dataclass
class DemoCorpus:
    """All generated splits (in memory)."""

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    gender_pairs: list[tuple[Pair, Pair]]


def generate_corpus(
    *,
    seed: int = 0,
    n_train: int = 40000,
    n_valid: int = 500,
    n_test: int = 500,
    n_gender_pairs: int = 500,
    feminine_scale: float = 1.0,
) -> DemoCorpus:
    """Generate all splits in memory; held-out English sentences never occur in train. ``feminine_scale`` (in (0, 1])
    multiplies every profession's training ``p_fem``."""
    if not 0 < feminine_scale <= 1:
        raise ValueError(f"feminine_scale must be in (0, 1], got {feminine_scale}")
    for name, n in (
        ("n_train", n_train),
        ("n_valid", n_valid),
        ("n_test", n_test),
        ("n_gender_pairs", n_gender_pairs),
    ):
        if n < 0:
            raise ValueError(f"{name} must be >= 0, got {n}")
    seen: set[str] = set()
    gender = _gender_pairs(random.Random(seed * 7919 + 1), n_gender_pairs, seen)
    test = _sample_unique(_Sampler(random.Random(seed * 7919 + 2), skewed=False), n_test, seen)
    valid = _sample_unique(_Sampler(random.Random(seed * 7919 + 3), skewed=False), n_valid, seen)
    train = _sample_unique(
        _Sampler(random.Random(seed * 7919 + 4), skewed=True, feminine_scale=feminine_scale), n_train, seen
    )
    return DemoCorpus(train, valid, test, gender)


def _write_text(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    os.replace(tmp, path)


GENEVAL_DIR = Path("mt-geneval") / "sentences" / "test"


def _geneval_name(gender: str, lang: str) -> str:
    return f"geneval-sentences-{gender}-test.en_es.{lang}"


def _readme(seed: int, corpus: DemoCorpus, feminine_scale: float = 1.0) -> str:
    scaled = feminine_scale != 1
    skew = ", ".join(
        f"{p.en} {p.p_fem * feminine_scale:.3g}" if scaled else f"{p.en} {p.p_fem:.2f}" for p in PROFESSIONS
    )
    flag = f" --feminine_scale {feminine_scale:g}" if scaled else ""
    times = f" (the stereotyped one times {feminine_scale:g}: feminine forms rare)" if scaled else ""
    gfile = f"{GENEVAL_DIR.as_posix()}/{_geneval_name('feminine', 'en')}"
    return f"""{DEMO_TITLE} (English → Spanish)

Synthetic parallel corpus generated by `mtkit.demo.corpus` (seed {seed}); regenerate with
`python scripts/demo_corpus.py OUT_DIR --seed {seed} --n_train {len(corpus.train)}{flag}`.
Sentences come from a small seeded grammar with correct Spanish agreement and one deterministic
translation per English sentence. It is meant for the `make demo` tutorial, not for real use.

| file | sentences |
| --- | --- |
| train.en / train.es | {len(corpus.train)} |
| valid.en / valid.es | {len(corpus.valid)} |
| test.en / test.es | {len(corpus.test)} |
| {gfile} (+ .es, masculine) | {len(corpus.gender_pairs)} pairs |

`{GENEVAL_DIR.as_posix()}/` follows the MT-GenEval layout: line i of the feminine and masculine
files is the same sentence with only the person's gender changed; `annotated/` holds copies with
the gendered Spanish words marked `<F>...</F>` / `<M>...</M>`. No English sentence of valid,
test or the gender pairs occurs in train.

**Deliberate gender bias.** In the training split each profession appears in its feminine form
with a fixed, stereotyped probability{times} (valid/test: 0.5; gender pairs: balanced):
{skew}.
"""


def write_demo_corpus(out_dir: str | Path, *, seed: int = 0, feminine_scale: float = 1.0, **sizes: int) -> Path:
    """Write the demo corpus (plain splits, MT-GenEval-style gender pairs, README) into ``out_dir``; ``sizes`` are
    :func:`generate_corpus`'s (``n_train``, ``n_valid``, ``n_test``, ``n_gender_pairs``).

    Deterministic: the same arguments give byte-identical files. ``feminine_scale`` (in (0, 1]) multiplies every
    profession's training ``p_fem`` (the held-out splits stay balanced). Returns ``out_dir`` as a Path.
    """
    corpus = generate_corpus(seed=seed, feminine_scale=feminine_scale, **sizes)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for split, pairs in (("train", corpus.train), ("valid", corpus.valid), ("test", corpus.test)):
        _write_text(out / f"{split}.en", [en for en, _ in pairs])
        _write_text(out / f"{split}.es", [es for _, es in pairs])
    gdir = out / GENEVAL_DIR
    fem = [f for f, _ in corpus.gender_pairs]
    masc = [m for _, m in corpus.gender_pairs]
    annotated = [annotate_gender(f[1], m[1]) for f, m in corpus.gender_pairs]
    for gender, pairs, ann in (
        ("feminine", fem, [a[0] for a in annotated]),
        ("masculine", masc, [a[1] for a in annotated]),
    ):
        _write_text(gdir / _geneval_name(gender, "en"), [en for en, _ in pairs])
        _write_text(gdir / _geneval_name(gender, "es"), [es for _, es in pairs])
        _write_text(gdir / "annotated" / _geneval_name(gender, "en"), [en for en, _ in pairs])
        _write_text(gdir / "annotated" / _geneval_name(gender, "es"), ann)
    readme = _readme(seed, corpus, feminine_scale)
    tmp = out / f".README.md.tmp{os.getpid()}"
    tmp.write_bytes(readme.encode("utf-8"))
    os.replace(tmp, out / "README.md")
    return out
