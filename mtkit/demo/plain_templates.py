"""Sentence templates without a profession: ``fn(rng) -> (english, spanish)``."""

from __future__ import annotations

import random
from collections.abc import Callable

from mtkit.demo.lexicon import (
    AUX,
    CAT_ADJS,
    CITIES,
    CONTAINERS,
    ESTAR_OBJ_ADJS,
    LOC_PREPS,
    LOCATABLE,
    MODALS,
    NOUNS,
    NUMBERS,
    OBJ_ADJ,
    OUTING_PLACES,
    PLACES,
    PRICED,
    RELATIVES,
    STATE_ADJS,
    TIME_FUT,
    TIME_PAST,
    TIMES,
    TRANSITIVE,
    TRANSPORT,
    WH,
    WORK_PLACES,
    Pair,
)
from mtkit.demo.syntax import (
    art,
    en_det,
    finish,
    gendered_np,
    join,
    obj_np,
    pick_det,
    pick_obj,
    subject,
    tense,
    transitive_vp,
)

_ESTAR, _SER = AUX["estar"], AUX["ser"]
_THERE_IS_NOUNS = tuple(
    n.en for n in NOUNS.values() if n.en_pl and n.cat in ("phys", "food") and n.en not in ("kitchen", "room")
)


def _copula_en(t: str, plural: bool) -> str:
    """English "to be" in the present ("pres") or past ("impf")."""
    return ("are" if plural else "is") if t == "pres" else ("were" if plural else "was")


def _svo(rng: random.Random) -> Pair:
    """My father bought a red car last week."""
    subj = subject(rng)
    vp_en, vp_es = transitive_vp(rng, tense(rng), subj.person, subj.poss)
    return finish([subj.en, vp_en], [subj.es, vp_es])


def _passive(rng: random.Random) -> Pair:
    """The letters were written by my grandmother."""
    verb = rng.choice([v for v in TRANSITIVE if v.passive])
    noun = pick_obj(rng, verb)
    o_en, o_es = obj_np(rng, noun, "the", adj_p=0.2, plural_p=0.3)
    plural = o_en.endswith("s") and noun.en_pl is not None and o_en.endswith(noun.en_pl)
    subj = subject(rng, gendered=True, plural=rng.random() < 0.2)
    if subj.en in ("he", "she"):
        agent_en, agent_es = ("her", "ella") if subj.fem else ("him", "él")
    else:
        agent_en, agent_es = subj.en, subj.es or subj.en
    t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.3 else ("", "")
    return finish(
        [o_en, "were" if plural else "was", verb.en[3], "by", agent_en, t_en],
        [o_es, "fueron" if plural else "fue", verb.es_pp(noun.fem, plural), "por", agent_es, t_es],
    )


def _location(rng: random.Random) -> Pair:
    """The keys are under the chair."""
    noun = NOUNS[rng.choice(LOCATABLE)]
    o_en, o_es = obj_np(rng, noun, rng.choice(["the", "my", "your", "our"]), adj_p=0.3, plural_p=0.4)
    plural = noun.en_pl is not None and o_en.endswith(noun.en_pl)
    prep = rng.choice(LOC_PREPS)
    target = NOUNS[rng.choice([t for t in prep[2] if t != noun.en])]
    t = rng.choice(["pres", "impf"])
    return finish(
        [o_en, _copula_en(t, plural), prep[0], "the", target.en],
        [o_es, _ESTAR[(t, "3p" if plural else "3s")], prep[1], art("the", target.fem, False), target.es],
    )


def _there_is(rng: random.Random) -> Pair:
    """There are many red cars in the street."""
    noun = NOUNS[rng.choice(_THERE_IS_NOUNS)]
    adj = OBJ_ADJ[rng.choice(CAT_ADJS[noun.cat])] if rng.random() < 0.5 else None
    where = rng.choice(CONTAINERS)
    if rng.random() < 0.4:
        np_en = join(["a", adj.en if adj else "", noun.en])
        np_es = join(["una" if noun.fem else "un", noun.es, adj.es(noun.fem) if adj else ""])
        cop_en = "is"
    else:
        num_en, num_es = rng.choice(NUMBERS)
        np_en = join([num_en, adj.en if adj else "", noun.en_pl or ""])
        np_es = join(
            [num_es or ("muchas" if noun.fem else "muchos"), noun.es_pl, adj.es(noun.fem, True) if adj else ""]
        )
        cop_en = "are"
    past = rng.random() < 0.3
    return finish(
        ["there", ("was" if cop_en == "is" else "were") if past else cop_en, np_en, "in the", where[0]],
        ["había" if past else "hay", np_es, "en", where[1]],
    )


def _obj_pred(rng: random.Random) -> Pair:
    """The soup was very cold. / My sister thinks that this car is too expensive."""
    noun = rng.choice(list(NOUNS.values()))
    det = rng.choice(["the", "the", "my", "this", "our", "your"])
    plural = noun.en_pl is not None and rng.random() < 0.3
    adj = OBJ_ADJ[rng.choice(CAT_ADJS[noun.cat])]
    estar = adj.en in ESTAR_OBJ_ADJS
    t = rng.choice(["pres", "impf"])
    cop_es = (_ESTAR if estar else _SER)[(t, "3p" if plural else "3s")]
    deg = rng.choice([("very", "muy"), ("too", "demasiado")])
    noun_en = noun.en_pl if plural else noun.en
    assert noun_en is not None
    en = [en_det(det, plural), noun_en, _copula_en(t, plural), deg[0], adj.en]
    es = [art(det, noun.fem, plural), noun.es_form(plural), cop_es, deg[1], adj.es(noun.fem, plural)]
    if rng.random() < 0.5:
        tail_en, tail_es = rng.choice([("", ""), ("today", "hoy")]) if estar else ("", "")
        return finish([*en, tail_en], [*es, tail_es])
    subj = subject(rng, plural=False)
    think_en = "think" if subj.person in ("1s", "2s") else "thinks"
    return finish([subj.en, think_en, "that", *en], [subj.es, AUX["creer"][("pres", subj.person)], "que", *es])


def _question(rng: random.Random) -> Pair:
    """Where are my keys? / Did you buy the bread? / Who wrote this letter?"""
    r = rng.random()
    if r < 0.2:
        noun = NOUNS[rng.choice(LOCATABLE)]
        o_en, o_es = obj_np(rng, noun, rng.choice(["the", "my", "your", "our"]), adj_p=0.3, plural_p=0.4)
        plural = noun.en_pl is not None and o_en.endswith(noun.en_pl)
        return finish(["where", "are" if plural else "is", o_en], ["dónde", "están" if plural else "está", o_es], True)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), rng.choice(["the", "my", "this", "our"]), adj_p=0.3)
    if r < 0.45:
        return finish(["did", "you", verb.en[0], o_en], [verb.es("pret", "2s"), o_es], True)
    if r < 0.6:
        return finish(["who", verb.en[2], o_en], ["quién", verb.es("pret", "3s"), o_es], True)
    if r < 0.8:
        subj = subject(rng, plural=rng.random() < 0.3)
        wh_en, wh_es = rng.choice(WH)
        return finish(
            [wh_en, "will", subj.en, verb.en[0], o_en], [wh_es, verb.es("fut", subj.person), subj.es, o_es], True
        )
    noun = NOUNS[rng.choice(PRICED)]
    plural = rng.random() < 0.3
    o_en = f"the {noun.en_pl if plural else noun.en}"
    o_es = join([art("the", noun.fem, plural), noun.es_form(plural)])
    return finish(
        ["how much", "do" if plural else "does", o_en, "cost"],
        ["cuánto", AUX["costar"][("pres", "3p" if plural else "3s")], o_es],
        True,
    )


def _state(rng: random.Random) -> Pair:
    """My sister was very tired yesterday."""
    subj = subject(rng, gendered=True)
    adj = rng.choice(STATE_ADJS)
    t = rng.choice(["pres", "impf"])
    if t == "pres":
        t_en, t_es = rng.choice([("today", "hoy"), ("this morning", "esta mañana"), ("tonight", "esta noche")])
    else:
        t_en, t_es = rng.choice(TIME_PAST[:8])
    very = rng.choice([("very", "muy"), ("a little", "un poco"), ("", "")])
    assert subj.fem is not None
    return finish(
        [subj.en, _copula_en(t, subj.plural), very[0], adj.en, t_en],
        [subj.es, _ESTAR[(t, subj.person)], very[1], adj.es(subj.fem, subj.plural), t_es],
    )


def _relative(rng: random.Random) -> Pair:
    """The woman who bought the car lives in Rome. / The car that my father bought was very expensive."""
    verb = rng.choice(TRANSITIVE)
    noun = pick_obj(rng, verb)
    if rng.random() < 0.5:
        subj = gendered_np(rng, rng.random() < 0.5, only_the=True)
        o_en, o_es = obj_np(rng, noun, "the", adj_p=0.2, plural_p=0.2)
        city = rng.choice(CITIES)
        t = rng.choice(["pres", "impf"])
        return finish(
            [subj.en, "who", verb.en[2], o_en, "lives" if t == "pres" else "lived", "in", city[0]],
            [subj.es, "que", verb.es("pret", "3s"), o_es, AUX["vivir"][(t, "3s")], "en", city[1]],
        )
    subj = subject(rng)
    plural = noun.en_pl is not None and rng.random() < 0.3
    adj = OBJ_ADJ[rng.choice(CAT_ADJS[noun.cat])]
    cop_en = "were" if plural else "was"
    cop_es = (_ESTAR if adj.en in ESTAR_OBJ_ADJS else _SER)[("impf", "3p" if plural else "3s")]
    noun_en = noun.en_pl if plural else noun.en
    the_es, verb_es, adj_es = art("the", noun.fem, plural), verb.es("pret", subj.person), adj.es(noun.fem, plural)
    return finish(
        ["the", noun_en, "that", subj.en, verb.en[2], cop_en, "very", adj.en],
        [the_es, noun.es_form(plural), "que", subj.es, verb_es, cop_es, "muy", adj_es],
    )


def _modal(rng: random.Random) -> Pair:
    """My brother has to finish the report tomorrow."""
    subj = subject(rng)
    m3, mo, que, table = rng.choice(MODALS)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = obj_np(rng, pick_obj(rng, verb), pick_det(rng, subj.poss), adj_p=0.3)
    t_en, t_es = rng.choice((("today", "hoy"),) + TIME_FUT[:7]) if rng.random() < 0.6 else ("", "")
    return finish(
        [subj.en, m3 if subj.person == "3s" else mo, verb.en[0], o_en, t_en],
        [subj.es, table[("pres", subj.person)], que, verb.inf, o_es, t_es],
    )


def _travel(rng: random.Random) -> Pair:
    """Laura traveled to Rome by train with her sister last week."""
    subj = subject(rng)
    t = tense(rng)
    city = rng.choice(CITIES)
    how = rng.choice(TRANSPORT)
    base, s3, past, table = rng.choice(
        (("go", "goes", "went", AUX["ir"]), ("travel", "travels", "traveled", AUX["viajar"]))
    )
    v_en = {"pret": past, "fut": "will " + base, "pres": s3 if subj.person == "3s" else base}[t]
    t_en, t_es = rng.choice(TIMES[t]) if t == "pres" or rng.random() < 0.6 else ("", "")
    comp_en, comp_es = ("", "")
    if rng.random() < 0.4:
        rel = rng.choice(RELATIVES)
        comp_en, comp_es = f"with {subj.poss} {rel.en}", f"con {art(subj.poss, rel.fem, rel.plural)} {rel.es}"
    return finish(
        [subj.en, v_en, "to", city[0], how[0], comp_en, t_en],
        [subj.es, table[(t, subj.person)], "a", city[1], how[1], comp_es, t_es],
    )


def _place(rng: random.Random) -> Pair:
    """We waited for our friends at the station. / My aunt works at the bank."""
    subj = subject(rng)
    place = PLACES[rng.choice(OUTING_PLACES + WORK_PLACES)]
    if rng.random() < 0.5:
        rel = rng.choice(RELATIVES)
        t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.5 else ("", "")
        waited, poss = AUX["esperar"][("pret", subj.person)], art(subj.poss, rel.fem, rel.plural)
        return finish(
            [subj.en, "waited for", subj.poss, rel.en, "at the", place.en, t_en],
            [subj.es, waited, "a", poss, rel.es, "en", place.es_the(), t_es],
        )
    t = tense(rng)
    v_en = {"pret": "worked", "fut": "will work", "pres": "works" if subj.person == "3s" else "work"}[t]
    t_en, t_es = rng.choice(TIMES[t]) if t == "pres" or rng.random() < 0.6 else ("", "")
    return finish(
        [subj.en, v_en, "at the", place.en, t_en],
        [subj.es, AUX["trabajar"][(t, subj.person)], "en", place.es_the(), t_es],
    )


#: (template, weight) pairs, in the order the sampler draws them.
PLAIN_TEMPLATES: tuple[tuple[Callable[[random.Random], Pair], float], ...] = (
    (_svo, 4.0),
    (_passive, 1.2),
    (_location, 1.0),
    (_there_is, 0.8),
    (_obj_pred, 1.2),
    (_question, 1.5),
    (_state, 1.0),
    (_relative, 1.2),
    (_modal, 1.0),
    (_travel, 1.0),
    (_place, 1.0),
)
