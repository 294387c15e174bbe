"""Tests for the built-in English→Spanish demo corpus (mtkit.demo_corpus)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mtkit.demo_corpus as dc
from mtkit.demo_corpus import PROFESSIONS, write_demo_corpus

REPO = Path(__file__).resolve().parents[2]
SPLITS = ("train", "valid", "test")
GENEVAL = Path("mt-geneval/sentences/test")
GENEVAL_FILES = [
    GENEVAL / f"geneval-sentences-{gender}-test.en_es.{lang}"
    for gender in ("feminine", "masculine")
    for lang in ("en", "es")
]
PUNCT = ".,?!¿¡"
FEM_CUES = {"she", "her", "herself", "woman", "women", "ms.", "sisters"}
MASC_CUES = {"he", "his", "him", "himself", "man", "men", "mr.", "brothers"}
EN_GENDER_TOKENS = {"he", "she", "his", "her", "him", "himself", "herself", "man", "woman", "men", "women"}
EN_GENDER_TOKENS |= {"mr.", "ms."}
FEM_ART = {"la", "una", "las", "unas"}
MASC_ART = {"el", "un", "los", "unos", "al", "del"}


def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").split("\n")[:-1]


def _tok(word: str) -> str:
    return word.strip(PUNCT).lower()


def _en_tok(word: str) -> str:
    """English token without trailing punctuation, keeping the dot of Mr./Ms."""
    low = word.lower().rstrip(",?!")
    return low if low in ("mr.", "ms.") else low.rstrip(".")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    out = tmp_path_factory.mktemp("demo")
    t0 = time.perf_counter()
    write_demo_corpus(out, seed=0)
    return out, time.perf_counter() - t0


@pytest.fixture(scope="module")
def data(corpus: tuple[Path, float]) -> dict[str, list[str]]:
    out, _ = corpus
    files = {f"{s}.{lang}": _lines(out / f"{s}.{lang}") for s in SPLITS for lang in ("en", "es")}
    for path in GENEVAL_FILES:
        files[path.name] = _lines(out / path)
        files["annotated/" + path.name] = _lines(out / GENEVAL / "annotated" / path.name)
    return files


def _geneval(data: dict[str, list[str]], gender: str, lang: str, annotated: bool = False) -> list[str]:
    return data[("annotated/" if annotated else "") + f"geneval-sentences-{gender}-test.en_es.{lang}"]


# Spanish profession word -> (profession, gender or None when masculine and feminine forms coincide)
_ES_FORMS: dict[str, tuple[str, bool | None]] = {}
for _p in PROFESSIONS:
    for _fem in (True, False):
        for _pl in (True, False):
            _form = _p.es(_fem, _pl)
            _ES_FORMS[_form] = (_p.en, None if _p.fem == _p.masc else _fem)
_EN_PROF_WORDS = sorted({w for p in PROFESSIONS for w in (p.en, p.en_pl)}, key=len, reverse=True)
_EN_PROF_RE = re.compile(r"\b(" + "|".join(map(re.escape, _EN_PROF_WORDS)) + r")\b")


def _es_prof_genders(es: str) -> list[bool | None]:
    """Gender of each profession noun in a Spanish sentence (from the noun, else its article)."""
    toks = [_tok(w) for w in es.split()]
    genders: list[bool | None] = []
    for i, tok in enumerate(toks):
        if tok in _ES_FORMS:
            gender = _ES_FORMS[tok][1]
            if gender is None and i > 0:
                gender = True if toks[i - 1] in FEM_ART else False if toks[i - 1] in MASC_ART else None
            genders.append(gender)
    return genders


def test_files_exist_utf8_nonempty_and_fast(corpus: tuple[Path, float]) -> None:
    out, seconds = corpus
    expected = [f"{s}.{lang}" for s in SPLITS for lang in ("en", "es")] + ["README.md"]
    expected += [str(p) for p in GENEVAL_FILES] + [str(GENEVAL / "annotated" / p.name) for p in GENEVAL_FILES]
    for name in expected:
        raw = (out / name).read_bytes()
        text = raw.decode("utf-8")  # raises on invalid UTF-8
        assert text.strip(), name
        assert text.endswith("\n") and "\r" not in text, name
    assert not [p for p in out.rglob("*") if ".tmp" in p.name], "temporary files left behind"
    assert seconds < 15, f"generation took {seconds:.1f}s"


def test_counts_alignment_and_lengths(data: dict[str, list[str]]) -> None:
    sizes = {"train": 40000, "valid": 500, "test": 500}
    for split, n in sizes.items():
        en, es = data[f"{split}.en"], data[f"{split}.es"]
        assert len(en) == len(es) == n
        for line in en + es:
            assert line and line == line.strip() and "  " not in line
            assert 5 <= len(line.split()) <= 20, line
    for path in GENEVAL_FILES:
        assert len(data[path.name]) == 500
        assert len(data["annotated/" + path.name]) == 500


def test_heldout_sentences_never_in_train(data: dict[str, list[str]]) -> None:
    train = data["train.en"]
    assert len(set(train)) == len(train)
    heldout = {
        "valid": set(data["valid.en"]),
        "test": set(data["test.en"]),
        "gender": set(_geneval(data, "feminine", "en")) | set(_geneval(data, "masculine", "en")),
    }
    assert len(heldout["valid"]) == 500 and len(heldout["test"]) == 500 and len(heldout["gender"]) == 1000
    for name, sents in heldout.items():
        assert not sents & set(train), name
    assert not heldout["valid"] & heldout["test"]
    assert not heldout["gender"] & (heldout["valid"] | heldout["test"])


def test_translation_is_deterministic(data: dict[str, list[str]]) -> None:
    mapping: dict[str, str] = {}
    pairs = [(data[f"{s}.en"], data[f"{s}.es"]) for s in SPLITS]
    pairs += [(_geneval(data, g, "en"), _geneval(data, g, "es")) for g in ("feminine", "masculine")]
    for en_lines, es_lines in pairs:
        for en, es in zip(en_lines, es_lines, strict=True):
            assert mapping.setdefault(en, es) == es, en


def test_punctuation_and_capitalisation(data: dict[str, list[str]]) -> None:
    for en, es in zip(data["train.en"], data["train.es"], strict=True):
        assert en[0].isupper() and en[-1] in ".?"
        assert es[-1] == en[-1]
        if en.endswith("?"):
            assert es.startswith("¿") and es[1].isupper()
        else:
            assert es[0].isupper()


def test_every_profession_sentence_has_a_matching_gender_cue(data: dict[str, list[str]]) -> None:
    n_prof = 0
    for split in SPLITS:
        for en, es in zip(data[f"{split}.en"], data[f"{split}.es"], strict=True):
            if not _EN_PROF_RE.search(en.lower()):
                assert not _es_prof_genders(es), (en, es)
                continue
            n_prof += 1
            toks = {_en_tok(w) for w in en.split()}
            fem, masc = bool(toks & FEM_CUES), bool(toks & MASC_CUES)
            assert fem != masc, f"no unambiguous gender cue: {en}"
            genders = {g for g in _es_prof_genders(es) if g is not None}
            assert genders <= {fem}, (en, es)
    assert n_prof > 15000


def test_gender_pairs_differ_only_in_gendered_words(data: dict[str, list[str]]) -> None:
    fem_en, masc_en = _geneval(data, "feminine", "en"), _geneval(data, "masculine", "en")
    fem_es, masc_es = _geneval(data, "feminine", "es"), _geneval(data, "masculine", "es")
    assert len(fem_en) == len(masc_en) == len(fem_es) == len(masc_es)
    for f_en, m_en, f_es, m_es in zip(fem_en, masc_en, fem_es, masc_es, strict=True):
        f_toks, m_toks = f_en.split(), m_en.split()
        assert len(f_toks) == len(m_toks)
        diff = [(_en_tok(a), _en_tok(b)) for a, b in zip(f_toks, m_toks, strict=True) if a != b]
        assert diff, f_en
        for a, b in diff:
            assert a in FEM_CUES & EN_GENDER_TOKENS and b in MASC_CUES & EN_GENDER_TOKENS, (f_en, m_en)
        assert not {_en_tok(w) for w in f_toks} & MASC_CUES
        assert not {_en_tok(w) for w in m_toks} & FEM_CUES
        assert len(f_es.split()) == len(m_es.split()) and f_es != m_es


def test_spanish_agreement_in_gender_pairs(data: dict[str, list[str]]) -> None:
    for gender, fem in (("feminine", True), ("masculine", False)):
        for es in _geneval(data, gender, "es"):
            genders = _es_prof_genders(es)
            assert genders, es
            assert all(g is None or g == fem for g in genders), es
            toks = [_tok(w) for w in es.split()]
            for i, tok in enumerate(toks):
                if tok in _ES_FORMS and i > 0 and toks[i - 1] in FEM_ART | MASC_ART:
                    assert (toks[i - 1] in FEM_ART) == fem, es
    # spot checks on fixed words
    fem_text = " ".join(_geneval(data, "feminine", "es")).lower()
    masc_text = " ".join(_geneval(data, "masculine", "es")).lower()
    for word in ("cansado", "el enfermero", "el señor", "un hombre"):
        assert word not in fem_text.split() if " " not in word else word not in fem_text
    for word in ("cansada", "la enfermera", "la señora", "una mujer"):
        assert word not in masc_text.split() if " " not in word else word not in masc_text


def test_annotated_files(data: dict[str, list[str]]) -> None:
    for gender, tag, other in (("feminine", "F", "M"), ("masculine", "M", "F")):
        plain, ann = _geneval(data, gender, "es"), _geneval(data, gender, "es", annotated=True)
        assert _geneval(data, gender, "en", annotated=True) == _geneval(data, gender, "en")
        for p, a in zip(plain, ann, strict=True):
            assert f"<{tag}>" in a and f"<{other}>" not in a
            assert a.count(f"<{tag}>") == a.count(f"</{tag}>")
            assert re.sub(r"</?[FM]>", "", a) == p
    f, m = dc.annotate_gender("La enfermera dijo que estaba cansada.", "El enfermero dijo que estaba cansado.")
    assert f == "<F>La enfermera</F> dijo que estaba <F>cansada</F>."
    assert m == "<M>El enfermero</M> dijo que estaba <M>cansado</M>."
    f, _ = dc.annotate_gender("¿La jueza firmó su contrato?", "¿El juez firmó su contrato?")
    assert f == "¿<F>La jueza</F> firmó su contrato?"


def test_training_split_is_gender_skewed(data: dict[str, list[str]]) -> None:
    def shares(es_lines: list[str]) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {p.en: [0, 0] for p in PROFESSIONS}
        for es in es_lines:
            toks = [_tok(w) for w in es.split()]
            for i, tok in enumerate(toks):
                if tok not in _ES_FORMS:
                    continue
                prof, gender = _ES_FORMS[tok]
                if gender is None and i > 0:
                    gender = True if toks[i - 1] in FEM_ART else False if toks[i - 1] in MASC_ART else None
                if gender is not None:
                    counts[prof][0 if gender else 1] += 1
        return {k: (f, m) for k, (f, m) in counts.items()}

    train = shares(data["train.es"])
    expected, observed = [], []
    for p in PROFESSIONS:
        f, m = train[p.en]
        assert f + m >= 200, p.en
        share = f / (f + m)
        assert abs(share - p.p_fem) < 0.12, (p.en, share, p.p_fem)
        expected.append(p.p_fem)
        observed.append(share)
    n = len(expected)
    mx, my = sum(expected) / n, sum(observed) / n
    cov = sum((x - mx) * (y - my) for x, y in zip(expected, observed, strict=True))
    var_x = sum((x - mx) ** 2 for x in expected)
    var_y = sum((y - my) ** 2 for y in observed)
    assert cov / (var_x * var_y) ** 0.5 > 0.9
    assert min(p.p_fem for p in PROFESSIONS) >= 0.15 and max(p.p_fem for p in PROFESSIONS) <= 0.85
    heldout = shares(data["valid.es"] + data["test.es"])
    f_total = sum(f for f, _ in heldout.values())
    m_total = sum(m for _, m in heldout.values())
    assert 0.4 < f_total / (f_total + m_total) < 0.6


def test_skew_is_documented() -> None:
    doc = dc.__doc__ or ""
    assert "p_fem" in doc and "0.15" in doc and "0.85" in doc
    for p in PROFESSIONS:
        assert p.en in doc, p.en


def test_readme(corpus: tuple[Path, float]) -> None:
    text = (corpus[0] / "README.md").read_text(encoding="utf-8")
    assert "mtkit.demo_corpus" in text and "seed 0" in text
    assert "| 40000 |" in text and "| 500 |" in text and "500 pairs" in text


def test_deterministic_and_idempotent(tmp_path: Path) -> None:
    kw = {"n_train": 1500, "n_valid": 60, "n_test": 60, "n_gender_pairs": 40}

    def snapshot(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    a = write_demo_corpus(tmp_path / "a", seed=3, **kw)
    b = write_demo_corpus(str(tmp_path / "b"), seed=3, **kw)
    assert a == tmp_path / "a" and isinstance(b, Path)
    snap_a = snapshot(a)
    assert len(snap_a) == 15 and snap_a == snapshot(b)
    write_demo_corpus(a, seed=3, **kw)  # rewriting in place is a no-op
    assert snapshot(a) == snap_a
    c = write_demo_corpus(tmp_path / "c", seed=4, **kw)
    snap_c = snapshot(c)
    assert snap_c.keys() == snap_a.keys()
    for name in ("train.en", "train.es", "test.en", str(GENEVAL_FILES[0])):
        assert snap_c[name] != snap_a[name], name
    assert len(_lines(a / "train.en")) == 1500 and len(_lines(a / GENEVAL_FILES[3])) == 40


def test_cli(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = tmp_path / "cli"
    cmd = [sys.executable, "-m", "mtkit.demo_corpus", str(out), "--seed", "2", "--n-train", "700"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert len(_lines(out / "train.en")) == 700 and len(_lines(out / "test.es")) == 500
    direct = write_demo_corpus(tmp_path / "direct", seed=2, n_train=700)
    assert (direct / "train.es").read_bytes() == (out / "train.es").read_bytes()


def test_conjugation_and_agreement_helpers() -> None:
    leer = next(v for v in dc.TRANSITIVE if v.inf == "leer")
    assert [leer.es("pret", p) for p in dc.PERSONS] == ["leí", "leíste", "leyó", "leímos", "leyeron"]
    buscar = next(v for v in dc.TRANSITIVE if v.inf == "buscar")
    assert buscar.es("pret", "1s") == "busqué" and buscar.es("fut", "3p") == "buscarán"
    cerrar = next(v for v in dc.TRANSITIVE if v.inf == "cerrar")
    assert cerrar.es("pres", "3s") == "cierra" and cerrar.es("pres", "1p") == "cerramos"
    salir = next(v for v in dc.INTRANSITIVE if v.inf == "salir")
    assert salir.es("cond", "3s") == "saldría"
    escribir = next(v for v in dc.TRANSITIVE if v.inf == "escribir")
    assert escribir.es_pp(fem=True, plural=True) == "escritas"
    nurse = next(p for p in PROFESSIONS if p.en == "nurse")
    judge = next(p for p in PROFESSIONS if p.en == "judge")
    forms = (nurse.es(True), nurse.es(False, True), judge.es(False, True), nurse.en_pl)
    assert forms == ("enfermera", "enfermeros", "jueces", "nurses")
    young = next(a for a in dc.TRAIT_ADJS if a.en == "young")
    assert young.forms == ("joven", "joven", "jóvenes", "jóvenes")


def test_zero_and_negative_counts(tmp_path: Path) -> None:
    out = write_demo_corpus(tmp_path, n_train=50, n_valid=0, n_test=5, n_gender_pairs=0)
    assert (out / "valid.en").read_bytes() == b"" and len(_lines(out / "test.es")) == 5
    assert (out / GENEVAL_FILES[0]).read_bytes() == b""
    with pytest.raises(ValueError, match="n_train"):
        write_demo_corpus(tmp_path / "bad", n_train=-1)
