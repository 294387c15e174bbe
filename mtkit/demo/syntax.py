"""Sentence assembly for the demo grammar: determiners, noun phrases, subjects, verb phrases and the final join.

Every helper draws from the ``random.Random`` it is given in a fixed order; the templates rely on that order.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mtkit.demo.lexicon import (
    CAT_ADJS,
    EN_PLURAL_DETERMINERS,
    ES_DETERMINERS,
    FEMALE_NAMES,
    GENDERED_NPS,
    MALE_NAMES,
    NEUTRAL_PLURAL_SUBJECTS,
    NOUNS,
    OBJ_ADJ,
    PLACES,
    PLURAL_SUBJECTS,
    TIMES,
    TRANSITIVE,
    Noun,
    Pair,
    Place,
    Profession,
    Verb,
)

_AN_EXCEPTIONS = ("uni", "use", "eu")
_CONTRACT = ((re.compile(r"\ba el\b"), "al"), (re.compile(r"\bde el\b"), "del"))


def _fix_an(text: str) -> str:
    words = text.split(" ")
    for i in range(len(words) - 1):
        if words[i] in ("a", "A"):
            nxt = words[i + 1].lower()
            if (nxt[:1] in "aeiou" and not nxt.startswith(_AN_EXCEPTIONS)) or nxt.startswith("honest"):
                words[i] += "n"
    return " ".join(words)


def _cap(text: str) -> str:
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
    return text


def join(parts: Sequence[str]) -> str:
    """Join the non-empty parts with spaces (no space before a comma)."""
    return " ".join(p for p in parts if p).replace(" ,", ",")


def finish(en: Sequence[str], es: Sequence[str], question: bool = False) -> Pair:
    """Join parts, apply a/an and Spanish contractions, capitalise and punctuate."""
    en_s = _cap(_fix_an(join(en)))
    es_s = join(es)
    for pat, rep in _CONTRACT:
        es_s = pat.sub(rep, es_s)
    if question:
        return en_s + "?", "¿" + _cap(es_s) + "?"
    return en_s + ".", _cap(es_s) + "."


def art(det: str, fem: bool, plural: bool) -> str:
    """Spanish form of an English determiner ("the", "a", "my", ...) for a noun's gender and number."""
    return ES_DETERMINERS[det][2 * plural + fem]


def en_det(det: str, plural: bool) -> str:
    """English determiner for the noun's number ("a" -> "some", "this" -> "these")."""
    return EN_PLURAL_DETERMINERS.get(det, det) if plural else det


def obj_np(rng: random.Random, noun: Noun, det: str, *, adj_p: float = 0.3, plural_p: float = 0.3) -> Pair:
    """Object noun phrase with a determiner, optional adjective and number."""
    plural = noun.en_pl is not None and rng.random() < plural_p
    adj = OBJ_ADJ[rng.choice(CAT_ADJS[noun.cat])] if rng.random() < adj_p else None
    if noun.en_pl is None and det == "a":
        det = "some" if adj else "the"
    en_d = en_det(det, plural)
    if det == "some" and not plural:
        en_d = ""  # bare mass noun: "fresh bread" -> "pan fresco"
    en_noun = noun.en_pl if plural and noun.en_pl else noun.en
    en = join([en_d, adj.en if adj else "", en_noun])
    es = join([art(det, noun.fem, plural), noun.es_form(plural), adj.es(noun.fem, plural) if adj else ""])
    return en, es


@dataclass(frozen=True)
class Subject:
    """A (non-profession) grammatical subject; empty ``es`` means a dropped Spanish pronoun."""

    en: str
    es: str
    person: str
    fem: bool | None  # None: gender unknown from the English (no adjectives then)
    poss: str  # English possessive determiner

    @property
    def plural(self) -> bool:
        return self.person.endswith("p")


def subject(rng: random.Random, *, gendered: bool = False, plural: bool | None = None) -> Subject:
    """Pick a non-profession subject; ``gendered`` requires a known gender."""
    kind = rng.random()
    if plural is None:
        plural = rng.random() < 0.25
    if plural:
        groups = PLURAL_SUBJECTS if gendered else PLURAL_SUBJECTS + NEUTRAL_PLURAL_SUBJECTS
        en, es, fem = rng.choice(groups)
        return Subject(en, es, "1p" if en == "we" else "3p", fem, "our" if en == "we" else "their")
    if not gendered and kind < 0.2:
        return Subject("I", "", "1s", None, "my")
    fem = rng.random() < 0.5
    poss = "her" if fem else "his"
    if kind < 0.45:
        name = rng.choice(FEMALE_NAMES if fem else MALE_NAMES)
        return Subject(name, name, "3s", fem, poss)
    if kind < 0.55:
        return Subject("she" if fem else "he", "", "3s", fem, poss)
    return gendered_np(rng, fem)


def gendered_np(rng: random.Random, fem: bool, *, only_the: bool = False) -> Subject:
    """A singular noun phrase whose gender is lexical (the woman, my brother, ...)."""
    f_en, f_es, m_en, m_es = rng.choice(GENDERED_NPS[:2] if only_the else GENDERED_NPS)
    return Subject(f_en if fem else m_en, f_es if fem else m_es, "3s", fem, "her" if fem else "his")


def pick_obj(rng: random.Random, verb: Verb) -> Noun:
    return NOUNS[rng.choice(verb.objs)]


def pick_det(rng: random.Random, poss: str) -> str:
    return rng.choice(["the", "the", "a", poss, "this"])


def the_prof(p: Profession, fem: bool) -> Pair:
    return f"the {p.en}", f"{'la' if fem else 'el'} {p.es(fem)}"


def workplace(rng: random.Random, p: Profession) -> Place:
    return PLACES[rng.choice(p.workplaces)]


def transitive_vp(rng: random.Random, tense: str, person: str, poss: str, *, time_p: float = 0.6) -> Pair:
    """Verb phrase "verb det obj [time]" whose object may use the subject's possessive."""
    verb = rng.choice(TRANSITIVE)
    det = rng.choice(["the", poss, poss, "a", "this"])
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), det)
    t_en, t_es = rng.choice(TIMES[tense]) if (tense == "pres" or rng.random() < time_p) else ("", "")
    return join([verb.en_form(tense, person), o_en, t_en]), join([verb.es(tense, person), o_es, t_es])


def tense(rng: random.Random) -> str:
    return rng.choices(["pret", "pres", "fut"], weights=[0.5, 0.25, 0.25])[0]
