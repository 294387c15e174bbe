"""Sentence templates built around a profession, each with an English gender cue for that person.

A template is ``fn(rng, profession, fem) -> (english, spanish)``; the same seed with ``fem`` flipped gives the
counterfactual sentence.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from mtkit.demo.lexicon import (
    ADVERBS,
    AUX,
    BECAUSE,
    BOUGHT_FOR_ONESELF,
    BYSTANDERS,
    CITIES,
    CITY_PREPS,
    INTRANSITIVE,
    MODALS,
    NOUNS,
    OUTING_PLACES,
    PLACES,
    PLURAL_GENDERED_NPS,
    PRONOUNS,
    RELATIVES,
    REPORTING,
    STATE_ADJS,
    SURNAMES,
    TALKED_ABOUT,
    TIME_FUT,
    TIME_PAST,
    TIMES,
    TRAIT_ADJS,
    TRANSITIVE,
    WH,
    Pair,
    Profession,
)
from mtkit.demo.syntax import art, finish, obj_np, pick_obj, tense, the_prof, transitive_vp, workplace


def _possessive(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse lost her keys yesterday."""
    s_en, s_es = the_prof(p, fem)
    t = tense(rng)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), PRONOUNS[fem]["poss"])
    t_en, t_es = rng.choice(TIMES[t]) if t == "pres" or rng.random() < 0.5 else ("", "")
    return finish([s_en, verb.en_form(t, "3s"), o_en, t_en], [s_es, verb.es(t, "3s"), o_es, t_es])


def _said_state(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse said that she was very tired."""
    s_en, s_es = the_prof(p, fem)
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy"), ("a little", "un poco")])
    if rng.random() < 0.7:
        r_en, r_es = rng.choice(REPORTING)
        cop_en, cop_es = "was", "estaba"
    else:
        r_en, r_es = rng.choice((("says", "dice"), ("thinks", "cree")))
        cop_en, cop_es = "is", "está"
    return finish(
        [s_en, r_en, "that", PRONOUNS[fem]["subj"], cop_en, very[0], adj.en],
        [s_es, r_es, "que", cop_es, very[1], adj.es(fem)],
    )


def _said_would(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The engineer said that she would arrive late."""
    s_en, s_es = the_prof(p, fem)
    r_en, r_es = rng.choice(REPORTING)
    verb = rng.choice(INTRANSITIVE)
    adv = rng.choice(ADVERBS + TIME_FUT[:7])
    preps = CITY_PREPS.get(verb.inf)
    if preps and rng.random() < 0.3:
        city = rng.choice(CITIES)
        loc = (f"{preps[0]} {city[0]}", f"{preps[1]} {city[1]}")
    else:
        loc = ("", "")
    return finish(
        [s_en, r_en, "that", PRONOUNS[fem]["subj"], "would", verb.en[0], loc[0], adv[0]],
        [s_es, r_es, "que", verb.es("cond", "3s"), loc[1], adv[1]],
    )


def _said_had(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The lawyer said that he had lost his keys."""
    s_en, s_es = the_prof(p, fem)
    r_en, r_es = rng.choice(REPORTING)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), rng.choice([PRONOUNS[fem]["poss"], "the"]), adj_p=0.2)
    return finish(
        [s_en, r_en, "that", PRONOUNS[fem]["subj"], "had", verb.en[3], o_en],
        [s_es, r_es, "que", "había", verb.pp, o_es],
    )


def _trait_noun(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The doctor is a very kind woman (from Rome)."""
    s_en, s_es = the_prof(p, fem)
    adj = rng.choice(TRAIT_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    pr = PRONOUNS[fem]
    en = [s_en, "is", "a", very[0], adj.en, pr["noun"]]
    es = [s_es, "es", "una" if fem else "un", pr["es_noun"], very[1], adj.es(fem)]
    if rng.random() < 0.7:
        return finish(en, es)
    city = rng.choice(CITIES)
    return finish([*en, "from", city[0]], [*es, "de", city[1]])


def _title(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """Ms. Ortiz is an engineer. / Mr. Ortiz works as a nurse in Madrid."""
    pr = PRONOUNS[fem]
    name = rng.choice(SURNAMES)
    r = rng.random()
    if r < 0.3:
        adj = rng.choice(TRAIT_ADJS)
        return finish(
            [pr["title"], name, "is", "a", adj.en, p.en],
            [pr["es_title"], name, "es", "una" if fem else "un", p.es(fem), adj.es(fem)],
        )
    if r < 0.55:
        city = rng.choice(CITIES)
        return finish(
            [pr["title"], name, "works as", "a", p.en, "in", city[0]],
            [pr["es_title"], name, "trabaja como", p.es(fem), "en", city[1]],
        )
    if r < 0.7:
        city = rng.choice(CITIES)
        return finish(
            [pr["title"], name, "is", "a", p.en, "from", city[0]],
            [pr["es_title"], name, "es", p.es(fem), "de", city[1]],
        )
    s_en, s_es = the_prof(p, fem)
    vp_en, vp_es = transitive_vp(rng, rng.choice(["pret", "fut"]), "3s", "the", time_p=0.4)
    return finish([pr["title"], name, ",", s_en, ",", vp_en], [pr["es_title"], name, ",", s_es, ",", vp_es])


def _relative(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse who works at the hospital lost her keys."""
    s_en, s_es = the_prof(p, fem)
    if rng.random() < 0.6:
        place = workplace(rng, p)
        rel_en, rel_es = f"who works at the {place.en}", f"que trabaja en {place.es_the()}"
    else:
        city = rng.choice(CITIES)
        rel_en, rel_es = f"who lives in {city[0]}", f"que vive en {city[1]}"
    t = rng.choice(["pret", "pret", "fut"])
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), PRONOUNS[fem]["poss"], adj_p=0.2)
    return finish([s_en, rel_en, verb.en_form(t, "3s"), o_en], [s_es, rel_es, verb.es(t, "3s"), o_es])


def _question(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """Did the nurse find her keys? / Where did the pilot leave his car?"""
    s_en, s_es = the_prof(p, fem)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), PRONOUNS[fem]["poss"], adj_p=0.2)
    r = rng.random()
    if r < 0.4:
        return finish(["did", s_en, verb.en[0], o_en], [s_es, verb.es("pret", "3s"), o_es], True)
    if r < 0.6:
        t_en, t_es = rng.choice(TIME_FUT)
        return finish(["will", s_en, verb.en[0], o_en, t_en], [s_es, verb.es("fut", "3s"), o_es, t_es], True)
    if r < 0.8:
        wh_en, wh_es = rng.choice(WH)
        return finish([wh_en, "did", s_en, verb.en[0], o_en], [wh_es, verb.es("pret", "3s"), s_es, o_es], True)
    adj = rng.choice(STATE_ADJS)
    return finish(
        ["why", "was", s_en, "so", adj.en, "when", PRONOUNS[fem]["subj"], "arrived"],
        ["por qué", "estaba", s_es, "tan", adj.es(fem), "cuando", "llegó"],
        True,
    )


def _companion(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The pilot went to the beach with his sister."""
    s_en, s_es = the_prof(p, fem)
    rel = rng.choice(RELATIVES)
    t = rng.choice(["pret", "pret", "fut"])
    if rng.random() < 0.5:
        place = PLACES[rng.choice(OUTING_PLACES)]
        dest_en, dest_es = f"to the {place.en}", f"a {place.es_the()}"
    else:
        city = rng.choice(CITIES)
        dest_en, dest_es = f"to {city[0]}", f"a {city[1]}"
    t_en, t_es = rng.choice(TIMES[t]) if rng.random() < 0.5 else ("", "")
    return finish(
        [s_en, "went" if t == "pret" else "will go", dest_en, "with", PRONOUNS[fem]["poss"], rel.en, t_en],
        [s_es, AUX["ir"][(t, "3s")], dest_es, "con", art("his", rel.fem, rel.plural), rel.es, t_es],
    )


def _reflexive(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The judge bought herself a new car."""
    s_en, s_es = the_prof(p, fem)
    o_en, o_es = obj_np(rng, NOUNS[rng.choice(BOUGHT_FOR_ONESELF)], "a", adj_p=0.6, plural_p=0.0)
    t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.5 else ("", "")
    return finish([s_en, "bought", PRONOUNS[fem]["refl"], o_en, t_en], [s_es, "se", "compró", o_es, t_es])


def _because(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse stayed at home because she was sick."""
    s_en, s_es = the_prof(p, fem)
    m_en, m_es = rng.choice(BECAUSE)
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    t_en, t_es = rng.choice(TIME_PAST[:8]) if rng.random() < 0.3 else ("", "")
    return finish(
        [s_en, m_en, t_en, "because", PRONOUNS[fem]["subj"], "was", very[0], adj.en],
        [s_es, m_es, t_es, "porque", "estaba", very[1], adj.es(fem)],
    )


def _when(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """When the doctor arrived at the hospital, she was very tired."""
    s_en, s_es = the_prof(p, fem)
    place = workplace(rng, p) if rng.random() < 0.6 else PLACES[rng.choice(OUTING_PLACES)]
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    return finish(
        ["when", s_en, "arrived at the", place.en, ",", PRONOUNS[fem]["subj"], "was", very[0], adj.en],
        ["cuando", s_es, "llegó a", place.es_the(), ",", "estaba", very[1], adj.es(fem)],
    )


def _modal(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The surgeon has to finish his report today."""
    s_en, s_es = the_prof(p, fem)
    m3, _, que, table = rng.choice(MODALS)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), PRONOUNS[fem]["poss"], adj_p=0.2)
    t_en, t_es = rng.choice((("today", "hoy"),) + TIME_FUT[:7]) if rng.random() < 0.6 else ("", "")
    return finish([s_en, m3, verb.en[0], o_en, t_en], [s_es, table[("pres", "3s")], que, verb.inf, o_es, t_es])


def _object(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """I spoke with the lawyer about his contract. / We waited for the doctor and her son."""
    s_en, s_es = the_prof(p, fem)
    # the subject must not be he/she-like, or "her contract" could refer to it
    subj_en, person, subj_es = rng.choice(BYSTANDERS)
    if rng.random() < 0.6:
        noun = NOUNS[rng.choice(TALKED_ABOUT)]
        o_en, o_es = obj_np(rng, noun, PRONOUNS[fem]["poss"], adj_p=0.3, plural_p=0.0)
        t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.4 else ("", "")
        return finish(
            [subj_en, "spoke with", s_en, "about", o_en, t_en],
            [subj_es, AUX["hablar"][("pret", person)], "con", s_es, "sobre", o_es, t_es],
        )
    rel = rng.choice(RELATIVES)
    place = PLACES[rng.choice(OUTING_PLACES)]
    waited, poss = AUX["esperar"][("pret", person)], art("his", rel.fem, rel.plural)
    return finish(
        [subj_en, "waited for", s_en, "and", PRONOUNS[fem]["poss"], rel.en, "at the", place.en],
        [subj_es, waited, "a", s_es, "y", "a", poss, rel.es, "en", place.es_the()],
    )


def _plural(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The women who work at the hospital are nurses."""
    f_en, f_es, m_en, m_es = rng.choice(PLURAL_GENDERED_NPS)
    s_en, s_es = (f_en, f_es) if fem else (m_en, m_es)
    r = rng.random()
    if r < 0.4:
        place = workplace(rng, p)
        return finish(
            [s_en, "who work at the", place.en, "are", p.en_pl],
            [s_es, "que trabajan en", place.es_the(), "son", p.es(fem, True)],
        )
    if r < 0.7:
        adj = rng.choice(TRAIT_ADJS)
        return finish([s_en, "are", "very", adj.en, p.en_pl], [s_es, "son", p.es(fem, True), "muy", adj.es(fem, True)])
    city = rng.choice(CITIES)
    return finish([s_en, "work as", p.en_pl, "in", city[0]], [s_es, "trabajan como", p.es(fem, True), "en", city[1]])


def _pair_subject(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse and her sister bought a new car."""
    s_en, s_es = the_prof(p, fem)
    rel = rng.choice([r for r in RELATIVES if r.en not in ("dog", "family")])
    vp_en, vp_es = transitive_vp(rng, rng.choice(["pret", "pret", "fut", "pres"]), "3p", "their", time_p=0.5)
    return finish(
        [s_en, "and", PRONOUNS[fem]["poss"], rel.en, vp_en],
        [s_es, "y", art("his", rel.fem, rel.plural), rel.es, vp_es],
    )


#: (template, weight) pairs, in the order the sampler draws them.
PROFESSION_TEMPLATES: tuple[tuple[Callable[[random.Random, Profession, bool], Pair], float], ...] = (
    (_possessive, 3.0),
    (_said_state, 2.5),
    (_said_would, 1.5),
    (_said_had, 1.0),
    (_trait_noun, 1.0),
    (_title, 1.5),
    (_relative, 1.5),
    (_question, 1.5),
    (_companion, 1.0),
    (_reflexive, 0.7),
    (_because, 1.2),
    (_when, 1.0),
    (_modal, 1.0),
    (_object, 1.0),
    (_plural, 0.8),
    (_pair_subject, 0.8),
)
