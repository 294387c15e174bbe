"""The demo grammar's lexicon: the word tables of ``grammar/*.yaml`` as typed, read-only objects.

The YAML files hold the words; this module adds the morphology (Spanish plurals, feminine adjectives, verb
conjugation, English plurals and past tenses) and keeps every table in file order, which the seeded generator
depends on: reordering a table changes the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

Pair = tuple[str, str]

#: Verb persons, in the order of the five forms in the grammar files.
PERSONS = ("1s", "2s", "3s", "1p", "3p")
_TENSES = ("pres", "pret", "impf", "fut", "cond")
_VERB_KEYS = frozenset({"en", "objects", "passive", "pp", "pres_stem", "pret3_stem", "fut_stem", *_TENSES})
_ACCENT_STRIP = str.maketrans("áéíóú", "aeiou")
# BaseLoader reads every scalar as a string: "on", "no" and "yes" stay words, never booleans.
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def load(name: str) -> dict[str, Any]:
    """The grammar file ``grammar/<name>.yaml`` as nested dicts, lists and strings."""
    path = resources.files(__package__) / "grammar" / f"{name}.yaml"
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


# --- morphology -------------------------------------------------------------------------------------------------


def es_plural(word: str) -> str:
    """Regular Spanish plural of a noun or adjective."""
    if word[-1] in "aeiouáéó":
        return word + "s"
    if word.endswith("z"):
        return word[:-1] + "ces"
    if len(word) > 2 and word[-2] in "áéíóú":  # canción -> canciones, bailarín -> bailarines
        return word[:-2] + word[-2].translate(_ACCENT_STRIP) + word[-1] + "es"
    return word + "es"


def en_plural(word: str) -> str:
    """Regular English plural."""
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


def es_fem(masc: str) -> str:
    """Feminine form of a Spanish adjective given its masculine singular."""
    if masc.endswith("o"):
        return masc[:-1] + "a"
    if masc.endswith("or"):
        return masc + "a"
    return masc


def conjugate(inf: str, spec: dict[str, str]) -> dict[tuple[str, str], str]:
    """Spanish conjugation table ``{(tense, person): form}`` of ``inf``; ``spec`` as in ``grammar/verbs.yaml``."""
    endings = _VERBS["endings"]  # grammar/verbs.yaml, loaded below before any verb is built
    stem, cls = inf[:-2], inf[-2:]
    pres_stem, pret3_stem = spec.get("pres_stem", ""), spec.get("pret3_stem", "")
    forms: dict[tuple[str, str], str] = {}
    for tense in ("pres", "pret", "impf"):
        for p, ending in zip(PERSONS, endings[cls][tense].split(), strict=True):
            s = stem
            if tense == "pres" and pres_stem and p != "1p":
                s = pres_stem
            if tense == "pret" and pret3_stem and p in ("3s", "3p"):
                s = pret3_stem
            forms[(tense, p)] = s + ending
    if cls == "ar":  # spelling changes in the 1st person preterite
        if stem.endswith("c"):
            forms[("pret", "1s")] = stem[:-1] + "qué"
        elif stem.endswith("g"):
            forms[("pret", "1s")] = stem + "ué"
        elif stem.endswith("z"):
            forms[("pret", "1s")] = stem[:-1] + "cé"
    fut_stem = spec.get("fut_stem") or inf
    for p, f_end, c_end in zip(PERSONS, endings["fut"].split(), endings["cond"].split(), strict=True):
        forms[("fut", p)] = fut_stem + f_end
        forms[("cond", p)] = fut_stem + c_end
    for tense in _TENSES:
        if tense in spec:
            forms.update(zip(((tense, p) for p in PERSONS), spec[tense].split(), strict=True))
    return forms


# --- word classes -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adjective:
    """An adjective with its four Spanish forms (masc sg, fem sg, masc pl, fem pl)."""

    en: str
    forms: tuple[str, str, str, str]

    def es(self, fem: bool, plural: bool = False) -> str:
        """Spanish form agreeing with a noun of the given gender and number."""
        return self.forms[2 * plural + fem]


def adjective(en: str, spec: str) -> Adjective:
    """Adjective from its masculine singular, optionally followed by an irregular masculine plural."""
    masc, _, masc_pl = spec.partition(" ")
    fem = es_fem(masc)
    masc_pl = masc_pl or es_plural(masc)
    return Adjective(en, (masc, fem, masc_pl, masc_pl if fem == masc else es_plural(fem)))


@dataclass(frozen=True)
class Profession:
    """A profession: English noun, Spanish masculine/feminine forms and training ``p_fem``."""

    en: str
    masc: str
    fem: str
    p_fem: float
    workplaces: tuple[str, ...]

    @property
    def en_pl(self) -> str:
        return en_plural(self.en)

    def es(self, fem: bool, plural: bool = False) -> str:
        """Spanish noun for the given gender and number."""
        word = self.fem if fem else self.masc
        return es_plural(word) if plural else word


@dataclass(frozen=True)
class Place:
    """A place noun used after at/to/in (Spanish article contracts: a el -> al, de el -> del)."""

    en: str
    es: str
    fem: bool

    def es_the(self) -> str:
        return ("la " if self.fem else "el ") + self.es


@dataclass(frozen=True)
class Relative:
    """A relative used after a possessive ("her sister" -> "su hermana")."""

    en: str
    es: str
    fem: bool
    plural: bool


@dataclass(frozen=True)
class Noun:
    """An inanimate noun; ``en_pl`` is None for mass nouns."""

    en: str
    en_pl: str | None
    es: str
    es_pl: str
    fem: bool
    cat: str

    def es_form(self, plural: bool) -> str:
        return self.es_pl if plural else self.es


@dataclass(frozen=True)
class Verb:
    """A verb: English forms (base, 3sg, past, participle) and Spanish conjugation table."""

    en: tuple[str, str, str, str]
    inf: str
    forms: dict[tuple[str, str], str]
    pp: str
    objs: tuple[str, ...] = ()
    passive: bool = False

    def es(self, tense: str, person: str) -> str:
        return self.forms[(tense, person)]

    def es_pp(self, fem: bool, plural: bool) -> str:
        """Agreeing participle (for passives)."""
        return adjective("", self.pp).es(fem, plural)

    def en_form(self, tense: str, person: str) -> str:
        """English verb phrase for a tense ("pres", "pret", "fut", "cond")."""
        base, s3, past, _ = self.en
        if tense == "pres":
            return s3 if person == "3s" else base
        if tense == "pret":
            return past
        return ("will " if tense == "fut" else "would ") + base


def verb(inf: str, spec: dict[str, str]) -> Verb:
    """Verb from a ``grammar/verbs.yaml`` entry; a one-word ``en`` is a regular English verb."""
    if unknown := set(spec) - _VERB_KEYS:
        raise ValueError(f"grammar/verbs.yaml: {inf}: unknown keys {sorted(unknown)}")
    parts = [part.strip() for part in spec["en"].split(",")]
    if len(parts) == 1:  # regular English verb, possibly with a particle ("look for")
        head, _, rest = parts[0].partition(" ")
        past = " ".join([head + ("d" if head.endswith("e") else "ed"), rest]).strip()
        parts.extend([" ".join([en_plural(head), rest]).strip(), past])
    if len(parts) == 3:
        parts.append(parts[2])
    base, s3, past, participle = parts
    pp = spec.get("pp") or inf[:-2] + ("ado" if inf.endswith("ar") else "ido")
    passive = spec.get("passive", "no")
    if passive not in ("yes", "no"):
        raise ValueError(f"grammar/verbs.yaml: {inf}: passive must be yes or no, got {passive!r}")
    return Verb(
        (base, s3, past, participle),
        inf,
        conjugate(inf, spec),
        pp,
        tuple(spec.get("objects", "").split()),
        passive == "yes",
    )


def _pairs(table: dict[str, str]) -> tuple[Pair, ...]:
    return tuple(table.items())


# --- the tables -------------------------------------------------------------------------------------------------

_VERBS = load("verbs")
_PEOPLE = load("people")
_PLACES = load("places")
_ADJS = load("adjectives")
_NOUNS = load("nouns")
_PHRASES = load("phrases")

#: All professions; ``p_fem`` is the probability of the feminine form in the training split.
PROFESSIONS: tuple[Profession, ...] = tuple(
    Profession(en, masc, fem, float(p_fem), tuple(places))
    for en, (masc, fem, p_fem, places) in load("professions")["professions"].items()
)
#: English words that carry the gender of a person (lower-case, punctuation stripped).
EN_GENDER_WORDS: frozenset[str] = frozenset(_PEOPLE["gender_words"])
PRONOUNS: dict[bool, dict[str, str]] = {True: _PEOPLE["pronouns"]["f"], False: _PEOPLE["pronouns"]["m"]}
FEMALE_NAMES: tuple[str, ...] = tuple(_PEOPLE["female_names"])
MALE_NAMES: tuple[str, ...] = tuple(_PEOPLE["male_names"])
SURNAMES: tuple[str, ...] = tuple(_PEOPLE["surnames"])
RELATIVES: tuple[Relative, ...] = tuple(
    Relative(en, es, g == "f", n == "p") for en, (es, g, n) in _PEOPLE["relatives"].items()
)
GENDERED_NPS: tuple[tuple[str, ...], ...] = tuple(map(tuple, _PEOPLE["gendered_nps"]))
PLURAL_GENDERED_NPS: tuple[tuple[str, ...], ...] = tuple(map(tuple, _PEOPLE["plural_gendered_nps"]))
#: Plural subjects as (English, Spanish, feminine?): with a known gender, then without one (feminine? is None).
PLURAL_SUBJECTS: tuple[tuple[str, str, bool], ...] = tuple(
    (en, es, g == "f") for en, es, g in _PEOPLE["plural_subjects"]["gendered"]
)
NEUTRAL_PLURAL_SUBJECTS: tuple[tuple[str, str, None], ...] = tuple(
    (en, es, None) for en, es in _PEOPLE["plural_subjects"]["neutral"]
)
BYSTANDERS: tuple[tuple[str, ...], ...] = tuple(map(tuple, _PEOPLE["bystanders"]))

PLACES: dict[str, Place] = {en: Place(en, es, g == "f") for en, (es, g) in _PLACES["places"].items()}
OUTING_PLACES: tuple[str, ...] = tuple(_PLACES["outings"])
WORK_PLACES: tuple[str, ...] = tuple(_PLACES["work_places"])
CITIES: tuple[Pair, ...] = _pairs(_PLACES["cities"])

STATE_ADJS: tuple[Adjective, ...] = tuple(adjective(en, spec) for en, spec in _ADJS["state"].items())
TRAIT_ADJS: tuple[Adjective, ...] = tuple(adjective(en, spec) for en, spec in _ADJS["trait"].items())
OBJ_ADJ: dict[str, Adjective] = {en: adjective(en, spec) for en, spec in _ADJS["object"].items()}
ESTAR_OBJ_ADJS: frozenset[str] = frozenset(_ADJS["estar"])
CAT_ADJS: dict[str, tuple[str, ...]] = {cat: tuple(names) for cat, names in _ADJS["by_category"].items()}

_MASS = frozenset(_NOUNS["mass"])
NOUNS: dict[str, Noun] = {
    en: Noun(en, None if en in _MASS else en_plural(en), es, (rest or [es_plural(es)])[0], g == "f", cat)
    for cat, table in _NOUNS["nouns"].items()
    for en, (es, g, *rest) in table.items()
}
LOCATABLE: tuple[str, ...] = tuple(_NOUNS["locatable"])
LOC_PREPS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    (en, es, tuple(targets)) for en, es, targets in _NOUNS["location_preps"]
)
PRICED: tuple[str, ...] = tuple(_NOUNS["priced"])
BOUGHT_FOR_ONESELF: tuple[str, ...] = tuple(_NOUNS["bought_for_oneself"])
TALKED_ABOUT: tuple[str, ...] = tuple(_NOUNS["talked_about"])
#: Where "there is/are ..." things are: (English noun, Spanish with its article).
CONTAINERS: tuple[Pair, ...] = tuple((en, PLACES[en].es_the()) for en in _PLACES["containers"]["places"]) + tuple(
    (en, ("la " if NOUNS[en].fem else "el ") + NOUNS[en].es) for en in _PLACES["containers"]["nouns"]
)

TRANSITIVE: tuple[Verb, ...] = tuple(verb(inf, spec) for inf, spec in _VERBS["transitive"].items())
#: Intransitive verbs used with adverbs ("would arrive late").
INTRANSITIVE: tuple[Verb, ...] = tuple(verb(inf, spec) for inf, spec in _VERBS["intransitive"].items())
CITY_PREPS: dict[str, tuple[str, str]] = {inf: (en, es) for inf, (en, es) in _VERBS["city_preps"].items()}
#: Conjugation tables of the verbs the templates use directly (ser, estar, ir, ...).
AUX: dict[str, dict[tuple[str, str], str]] = {inf: conjugate(inf, spec) for inf, spec in _VERBS["auxiliaries"].items()}
#: Modals as (English 3s, English other persons, Spanish word before the infinitive, conjugation table).
MODALS: tuple[tuple[str, str, str, dict[tuple[str, str], str]], ...] = tuple(
    (en3, en, que, AUX[aux]) for en3, en, aux, que in _VERBS["modals"]
)

_DAYS = _PHRASES["days"]
TIME_PAST: tuple[Pair, ...] = _pairs(_PHRASES["time_past"]) + tuple((f"on {d}", f"el {s}") for d, s, _ in _DAYS)
TIME_FUT: tuple[Pair, ...] = _pairs(_PHRASES["time_future"]) + tuple((f"on {d}", f"el {s}") for d, s, _ in _DAYS)
TIME_HAB: tuple[Pair, ...] = _pairs(_PHRASES["time_habitual"]) + tuple((f"on {d}s", f"los {p}") for d, _, p in _DAYS)
TIMES: dict[str, tuple[Pair, ...]] = {"pret": TIME_PAST, "fut": TIME_FUT, "pres": TIME_HAB}
ADVERBS: tuple[Pair, ...] = _pairs(_PHRASES["adverbs"])
REPORTING: tuple[Pair, ...] = _pairs(_PHRASES["reporting"])
BECAUSE: tuple[Pair, ...] = _pairs(_PHRASES["because"])
WH: tuple[Pair, ...] = _pairs(_PHRASES["wh"])
TRANSPORT: tuple[Pair, ...] = _pairs(_PHRASES["transport"])
NUMBERS: tuple[Pair, ...] = _pairs(_PHRASES["numbers"])
ES_DETERMINERS: dict[str, tuple[str, ...]] = {det: tuple(forms) for det, forms in _PHRASES["determiners"].items()}
EN_PLURAL_DETERMINERS: dict[str, str] = dict(_PHRASES["plural_determiners"])
