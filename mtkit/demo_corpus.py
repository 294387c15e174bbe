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

The valid and test splits use 50 % feminine for every profession, and the MT-GenEval-style
counterfactual pairs are perfectly balanced, so a model trained on the skewed data can show a
measurable gender gap. No English sentence of valid, test or the gender pairs occurs in train.

Usage: ``write_demo_corpus(out_dir, seed=0)`` or ``python -m mtkit.demo_corpus OUT_DIR``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EN_GENDER_WORDS",
    "PROFESSIONS",
    "Profession",
    "annotate_gender",
    "generate_corpus",
    "write_demo_corpus",
]

Pair = tuple[str, str]

# ---------------------------------------------------------------------------------------------
# Morphology helpers
# ---------------------------------------------------------------------------------------------

_ACCENT_STRIP = str.maketrans("áéíóú", "aeiou")


def _es_plural(word: str) -> str:
    """Regular Spanish plural of a noun or adjective."""
    if word[-1] in "aeiouáéó":
        return word + "s"
    if word.endswith("z"):
        return word[:-1] + "ces"
    if len(word) > 2 and word[-2] in "áéíóú":  # canción -> canciones, bailarín -> bailarines
        return word[:-2] + word[-2].translate(_ACCENT_STRIP) + word[-1] + "es"
    return word + "es"


def _en_plural(word: str) -> str:
    """Regular English plural."""
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


def _es_fem(masc: str) -> str:
    """Feminine form of a Spanish adjective given its masculine singular."""
    if masc.endswith("o"):
        return masc[:-1] + "a"
    if masc.endswith("or"):
        return masc + "a"
    return masc


@dataclass(frozen=True)
class Adjective:
    """An adjective with its four Spanish forms (masc sg, fem sg, masc pl, fem pl)."""

    en: str
    forms: tuple[str, str, str, str]

    def es(self, fem: bool, plural: bool = False) -> str:
        """Spanish form agreeing with a noun of the given gender and number."""
        return self.forms[2 * plural + fem]


def _adj(en: str, masc: str, masc_pl: str | None = None) -> Adjective:
    fem = _es_fem(masc)
    masc_pl = masc_pl or _es_plural(masc)
    return Adjective(en, (masc, fem, masc_pl, masc_pl if fem == masc else _es_plural(fem)))


def _adjs(spec: str) -> tuple[Adjective, ...]:
    """Parse ``en:masc[:masc_pl];...`` into adjectives."""
    return tuple(_adj(*item.split(":")) for item in spec.split(";"))


def _pairs(spec: str) -> tuple[Pair, ...]:
    """Parse ``en:es;...`` into (English, Spanish) pairs."""
    return tuple((en, es) for en, es in (item.split(":") for item in spec.split(";")))


# ---------------------------------------------------------------------------------------------
# Lexicon: professions (with the training skew), people, objects, places, adjectives, verbs
# ---------------------------------------------------------------------------------------------


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
        return _en_plural(self.en)

    def es(self, fem: bool, plural: bool = False) -> str:
        """Spanish noun for the given gender and number."""
        word = self.fem if fem else self.masc
        return _es_plural(word) if plural else word


def _prof(en: str, masc: str, fem: str, p_fem: float, places: str) -> Profession:
    return Profession(en, masc, fem, p_fem, tuple(places.split("|")))


#: All professions; ``p_fem`` is the probability of the feminine form in the training split.
PROFESSIONS: tuple[Profession, ...] = (
    _prof("nurse", "enfermero", "enfermera", 0.85, "hospital|clinic"),
    _prof("secretary", "secretario", "secretaria", 0.85, "office|bank"),
    _prof("receptionist", "recepcionista", "recepcionista", 0.80, "hotel|clinic"),
    _prof("hairdresser", "peluquero", "peluquera", 0.80, "salon"),
    _prof("dancer", "bailarín", "bailarina", 0.80, "theater"),
    _prof("librarian", "bibliotecario", "bibliotecaria", 0.75, "library|university"),
    _prof("cleaner", "limpiador", "limpiadora", 0.75, "office|hotel|hospital"),
    _prof("teacher", "profesor", "profesora", 0.70, "school|university"),
    _prof("cashier", "cajero", "cajera", 0.70, "supermarket|store|bank"),
    _prof("psychologist", "psicólogo", "psicóloga", 0.70, "clinic|hospital"),
    _prof("designer", "diseñador", "diseñadora", 0.65, "studio|company"),
    _prof("pharmacist", "farmacéutico", "farmacéutica", 0.65, "pharmacy"),
    _prof("singer", "cantante", "cantante", 0.60, "theater|studio"),
    _prof("baker", "panadero", "panadera", 0.60, "bakery"),
    _prof("veterinarian", "veterinario", "veterinaria", 0.60, "clinic"),
    _prof("translator", "traductor", "traductora", 0.60, "company|office"),
    _prof("writer", "escritor", "escritora", 0.55, "newspaper|library"),
    _prof("journalist", "periodista", "periodista", 0.50, "newspaper"),
    _prof("photographer", "fotógrafo", "fotógrafa", 0.45, "studio|newspaper"),
    _prof("accountant", "contable", "contable", 0.45, "bank|company"),
    _prof("cook", "cocinero", "cocinera", 0.45, "restaurant|hotel"),
    _prof("lawyer", "abogado", "abogada", 0.40, "court|office"),
    _prof("painter", "pintor", "pintora", 0.40, "studio|museum"),
    _prof("doctor", "doctor", "doctora", 0.35, "hospital|clinic"),
    _prof("researcher", "investigador", "investigadora", 0.35, "lab|university"),
    _prof("scientist", "científico", "científica", 0.30, "lab|university"),
    _prof("architect", "arquitecto", "arquitecta", 0.30, "studio|company"),
    _prof("judge", "juez", "jueza", 0.30, "court"),
    _prof("manager", "gerente", "gerente", 0.30, "hotel|bank|store"),
    _prof("director", "director", "directora", 0.25, "museum|school"),
    _prof("boss", "jefe", "jefa", 0.25, "factory|company|office"),
    _prof("farmer", "agricultor", "agricultora", 0.25, "farm|market"),
    _prof("programmer", "programador", "programadora", 0.20, "company|office"),
    _prof("surgeon", "cirujano", "cirujana", 0.20, "hospital"),
    _prof("driver", "conductor", "conductora", 0.20, "airport|station"),
    _prof("police officer", "policía", "policía", 0.20, "police station|airport"),
    _prof("soldier", "soldado", "soldado", 0.15, "base"),
    _prof("pilot", "piloto", "piloto", 0.15, "airport"),
    _prof("engineer", "ingeniero", "ingeniera", 0.15, "factory|company"),
    _prof("mechanic", "mecánico", "mecánica", 0.15, "garage"),
    _prof("plumber", "fontanero", "fontanera", 0.15, "hotel|company"),
    _prof("electrician", "electricista", "electricista", 0.15, "factory|company"),
    _prof("firefighter", "bombero", "bombera", 0.15, "station"),
    _prof("carpenter", "carpintero", "carpintera", 0.15, "workshop|factory"),
)

#: English words that carry the gender of a person (lower-case, punctuation stripped).
EN_GENDER_WORDS: frozenset[str] = frozenset(
    {"he", "she", "his", "her", "him", "himself", "herself", "man", "woman", "men", "women", "mr.", "ms."}
)


@dataclass(frozen=True)
class Place:
    """A place noun used after at/to/in (Spanish article contracts: a el -> al, de el -> del)."""

    en: str
    es: str
    fem: bool

    def es_the(self) -> str:
        return ("la " if self.fem else "el ") + self.es


def _places(spec: str) -> dict[str, Place]:
    out = {}
    for item in spec.split(";"):
        en, es, g = item.split(":")
        out[en] = Place(en, es, g == "f")
    return out


PLACES: dict[str, Place] = _places(
    "hospital:hospital:m;clinic:clínica:f;office:oficina:f;bank:banco:m;hotel:hotel:m;"
    "salon:peluquería:f;theater:teatro:m;library:biblioteca:f;university:universidad:f;"
    "school:escuela:f;supermarket:supermercado:m;store:tienda:f;studio:estudio:m;"
    "company:empresa:f;pharmacy:farmacia:f;bakery:panadería:f;newspaper:periódico:m;"
    "restaurant:restaurante:m;court:tribunal:m;museum:museo:m;lab:laboratorio:m;"
    "factory:fábrica:f;farm:granja:f;market:mercado:m;airport:aeropuerto:m;station:estación:f;"
    "police station:comisaría:f;base:base:f;garage:taller:m;workshop:taller:m;park:parque:m;"
    "beach:playa:f;gym:gimnasio:m;cinema:cine:m;church:iglesia:f"
)
_OUTING_PLACES = (
    "park",
    "beach",
    "gym",
    "cinema",
    "museum",
    "market",
    "library",
    "bank",
    "supermarket",
    "restaurant",
    "theater",
    "station",
    "airport",
    "pharmacy",
    "bakery",
    "church",
    "hotel",
)

CITIES: tuple[Pair, ...] = _pairs(
    "Madrid:Madrid;Barcelona:Barcelona;Seville:Sevilla;London:Londres;Paris:París;Rome:Roma;Berlin:Berlín;"
    "Lisbon:Lisboa;New York:Nueva York;Lima:Lima;Bogota:Bogotá;Tokyo:Tokio;Chicago:Chicago;Dublin:Dublín;"
    "Athens:Atenas;Vienna:Viena;Valencia:Valencia;Buenos Aires:Buenos Aires"
)
FEMALE_NAMES = ("Laura", "Elena", "Carmen", "Julia", "Anna", "Sara", "Paula", "Clara", "Eva", "Marta")
MALE_NAMES = ("Carlos", "Daniel", "Pablo", "Luis", "David", "Pedro", "Jorge", "Mario", "Diego", "Hugo")
SURNAMES = tuple(
    "Ortiz Navarro Molina Romero Torres Vargas Morales Castro Reyes Ruiz Smith Brown Taylor Wilson Walker "
    "Clark Miller Santos".split()
)


@dataclass(frozen=True)
class Relative:
    """A relative used after a possessive ("her sister" -> "su hermana")."""

    en: str
    es: str
    fem: bool
    plural: bool


RELATIVES: tuple[Relative, ...] = tuple(
    Relative(en, es, g == "f", n == "p")
    for en, es, g, n in (
        item.split(":")
        for item in (
            "sister:hermana:f:s;brother:hermano:m:s;mother:madre:f:s;father:padre:m:s;daughter:hija:f:s;"
            "son:hijo:m:s;parents:padres:m:p;children:hijos:m:p;friends:amigos:m:p;family:familia:f:s;"
            "dog:perro:m:s;colleagues:compañeros:m:p"
        ).split(";")
    )
)

# Person adjectives: states take "estar", traits take "ser".
STATE_ADJS: tuple[Adjective, ...] = _adjs(
    "tired:cansado;happy:contento;sad:triste;busy:ocupado;sick:enfermo;worried:preocupado;nervous:nervioso;"
    "angry:enfadado;ready:listo;bored:aburrido;surprised:sorprendido;calm:tranquilo;exhausted:agotado;"
    "confused:confundido;excited:emocionado"
)
TRAIT_ADJS: tuple[Adjective, ...] = _adjs(
    "tall:alto;short:bajo;young:joven:jóvenes;intelligent:inteligente;kind:amable;friendly:simpático;"
    "honest:honesto;patient:paciente;funny:divertido;serious:serio;strong:fuerte;famous:famoso;"
    "generous:generoso;hardworking:trabajador;brave:valiente;shy:tímido;polite:educado;creative:creativo;"
    "careful:cuidadoso;rich:rico"
)

# Object adjectives by noun category; copula "estar" for the food/drink states.
_OBJ_ADJ: dict[str, Adjective] = {
    a.en: a
    for a in _adjs(
        "new:nuevo;old:viejo;red:rojo;white:blanco;black:negro;blue:azul;green:verde;big:grande;small:pequeño;"
        "expensive:caro;cheap:barato;heavy:pesado;beautiful:bonito;long:largo;short:corto;important:importante;"
        "interesting:interesante;boring:aburrido;fresh:fresco;delicious:delicioso;hot:caliente;cold:frío"
    )
}
_ESTAR_OBJ_ADJS = frozenset({"fresh", "delicious", "hot", "cold"})
_CAT_ADJS: dict[str, tuple[str, ...]] = {
    "phys": (
        "new",
        "old",
        "red",
        "white",
        "black",
        "blue",
        "green",
        "big",
        "small",
        "expensive",
        "cheap",
        "heavy",
        "beautiful",
    ),
    "doc": ("new", "old", "long", "short", "important", "interesting", "boring"),
    "food": ("fresh", "delicious", "cold", "hot", "cheap", "expensive"),
    "drink": ("hot", "cold", "cheap", "expensive"),
    "event": ("long", "short", "important", "interesting", "boring"),
    "idea": ("new", "old", "important", "interesting"),
}


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


def _nouns(cat: str, spec: str) -> list[Noun]:
    """Parse ``en[/en_pl]:es[/es_pl]:m|f`` items; en_pl ``-`` marks a mass noun."""
    out = []
    for item in spec.split(";"):
        en, es, g = item.split(":")
        en, _, en_pl = en.partition("/")
        es, _, es_pl = es.partition("/")
        out.append(
            Noun(
                en,
                None if en_pl == "-" else (en_pl or _en_plural(en)),
                es,
                es_pl or _es_plural(es),
                g == "f",
                cat,
            )
        )
    return out


NOUNS: dict[str, Noun] = {
    n.en: n
    for n in (
        _nouns(
            "phys",
            "car:coche:m;house:casa:f;box:caja:f;bag:bolsa:f;door:puerta:f;window:ventana:f;"
            "table:mesa:f;bicycle:bicicleta:f;phone:teléfono:m;computer:ordenador:m;"
            "umbrella:paraguas/paraguas:m;key:llave:f;chair:silla:f;lamp:lámpara:f;bottle:botella:f;"
            "painting:cuadro:m;watch/watches:reloj:m;camera:cámara:f;suitcase:maleta:f;jacket:chaqueta:f;"
            "gift:regalo:m;package:paquete:m;ticket:billete:m;kitchen:cocina:f;room:habitación:f;"
            "shoe:zapato:m;dish/dishes:plato:m",
        )
        + _nouns(
            "doc",
            "book:libro:m;newspaper:periódico:m;letter:carta:f;report:informe:m;email:correo:m;"
            "note:nota:f;contract:contrato:m;story/stories:historia:f;list:lista:f;document:documento:m;"
            "map:mapa:m;photo:foto:f;song:canción:f;poem:poema:m;project:proyecto:m",
        )
        + _nouns(
            "food",
            "bread/-:pan:m;cake:pastel:m;fish/-:pescado:m;rice/-:arroz:m;apple:manzana:f;"
            "soup/-:sopa:f;salad:ensalada:f;sandwich/sandwiches:bocadillo:m;pizza:pizza:f;"
            "chicken/-:pollo:m;dinner:cena:f;lunch/lunches:almuerzo:m",
        )
        + _nouns("drink", "coffee/-:café:m;tea/-:té:m;juice/-:zumo:m;milk/-:leche:f;wine/-:vino:m")
        + _nouns(
            "event",
            "meeting:reunión:f;party/parties:fiesta:f;trip:viaje:m;game:partido:m;"
            "exam:examen/exámenes:m;class/classes:clase:f;concert:concierto:m;movie:película:f",
        )
        + _nouns(
            "idea",
            "plan:plan:m;idea:idea:f;problem:problema:m;question:pregunta:f;rule:regla:f;decision:decisión:f",
        )
    )
}

# Location phrases for "X is on/under ... the Y".
_LOC_PREPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("on", "sobre", ("table", "chair", "box", "suitcase")),
    ("under", "debajo de", ("table", "chair", "car", "bag")),
    ("next to", "al lado de", ("table", "chair", "box", "bag", "car", "door", "window", "suitcase", "lamp")),
    ("behind", "detrás de", ("door", "chair", "car", "box")),
    ("in", "en", ("box", "bag", "car", "kitchen", "room", "suitcase")),
)
_LOCATABLE = (
    "key",
    "phone",
    "book",
    "letter",
    "bag",
    "umbrella",
    "camera",
    "watch",
    "box",
    "bottle",
    "newspaper",
    "photo",
    "document",
    "ticket",
    "gift",
    "package",
    "shoe",
    "map",
    "lamp",
)

# ---------------------------------------------------------------------------------------------
# Verbs
# ---------------------------------------------------------------------------------------------

PERSONS = ("1s", "2s", "3s", "1p", "3p")
_REG = {
    "ar": {"pres": "o as a amos an", "pret": "é aste ó amos aron", "impf": "aba abas aba ábamos aban"},
    "er": {"pres": "o es e emos en", "pret": "í iste ió imos ieron", "impf": "ía ías ía íamos ían"},
    "ir": {"pres": "o es e imos en", "pret": "í iste ió imos ieron", "impf": "ía ías ía íamos ían"},
}
_FUT = "é ás á emos án".split()
_COND = "ía ías ía íamos ían".split()


def _conjugate(
    inf: str,
    pres_stem: str = "",
    pret3_stem: str = "",
    fut_stem: str = "",
    over: dict[str, str] | None = None,
) -> dict[tuple[str, str], str]:
    """Conjugate a Spanish verb; ``over`` maps a tense to five space-separated forms."""
    stem, cls = inf[:-2], inf[-2:]
    forms: dict[tuple[str, str], str] = {}
    for tense in ("pres", "pret", "impf"):
        for p, ending in zip(PERSONS, _REG[cls][tense].split(), strict=True):
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
    fs = fut_stem or inf
    for p, f_end, c_end in zip(PERSONS, _FUT, _COND, strict=True):
        forms[("fut", p)] = fs + f_end
        forms[("cond", p)] = fs + c_end
    for tense, spec in (over or {}).items():
        for p, form in zip(PERSONS, spec.split(), strict=True):
            forms[(tense, p)] = form
    return forms


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
        return _adj("", self.pp).es(fem, plural)

    def en_form(self, tense: str, person: str) -> str:
        """English verb phrase for a tense ("pres", "pret", "fut", "cond")."""
        base, s3, past, _ = self.en
        if tense == "pres":
            return s3 if person == "3s" else base
        if tense == "pret":
            return past
        return ("will " if tense == "fut" else "would ") + base


def _verb(
    en: str,
    inf: str,
    objs: str = "",
    *,
    pp: str = "",
    passive: bool = False,
    pres_stem: str = "",
    pret3_stem: str = "",
    fut_stem: str = "",
    over: dict[str, str] | None = None,
) -> Verb:
    """Build a verb; ``en`` is "base" (regular) or "base,3sg,past[,participle]"."""
    parts = en.split(",")
    if len(parts) == 1:  # regular English verb, possibly with a particle ("look for")
        head, _, rest = en.partition(" ")
        past = " ".join([head + ("d" if head.endswith("e") else "ed"), rest]).strip()
        parts = [en, " ".join([_en_plural(head), rest]).strip(), past]
    if len(parts) == 3:
        parts.append(parts[2])
    base, s3, past, participle = parts
    forms = _conjugate(inf, pres_stem, pret3_stem, fut_stem, over)
    pp = pp or inf[:-2] + ("ado" if inf.endswith("ar") else "ido")
    return Verb((base, s3, past, participle), inf, forms, pp, tuple(objs.split()), passive)


_PHYS_SMALL = "key phone umbrella bag camera watch book ticket document map"
TRANSITIVE: tuple[Verb, ...] = (
    _verb(
        "read,reads,read",
        "leer",
        "book newspaper letter report email note contract story list poem",
        pp="leído",
        passive=True,
        over={"pret": "leí leíste leyó leímos leyeron"},
    ),
    _verb(
        "write,writes,wrote,written",
        "escribir",
        "letter report email note story list song poem book",
        pp="escrito",
        passive=True,
    ),
    _verb(
        "buy,buys,bought",
        "comprar",
        "car house bicycle phone computer umbrella camera watch lamp "
        "bread cake apple coffee milk wine book newspaper ticket gift jacket shoe painting",
        passive=True,
    ),
    _verb(
        "sell,sells,sold",
        "vender",
        "car house bicycle phone computer camera watch painting bread cake",
        passive=True,
    ),
    _verb("open", "abrir", "door window box bag letter package suitcase bottle", pp="abierto", passive=True),
    _verb("close", "cerrar", "door window box bag suitcase", pres_stem="cierr", passive=True),
    _verb("clean", "limpiar", "car house table window door chair kitchen room shoe bicycle", passive=True),
    _verb(
        "repair",
        "reparar",
        "car phone computer door window bicycle watch camera lamp chair table",
        passive=True,
    ),
    _verb("prepare", "preparar", "dinner lunch coffee tea soup salad sandwich report list class", passive=True),
    _verb("find,finds,found", "encontrar", _PHYS_SMALL + " letter photo", pres_stem="encuentr"),
    _verb("lose,loses,lost", "perder", _PHYS_SMALL, pres_stem="pierd"),
    _verb("need", "necesitar", "car computer phone umbrella map bicycle document ticket camera"),
    _verb(
        "watch,watches,watched",
        "ver",
        "movie game concert",
        pp="visto",
        over={
            "pres": "veo ves ve vemos ven",
            "pret": "vi viste vio vimos vieron",
            "impf": "veía veías veía veíamos veían",
        },
    ),
    _verb("paint", "pintar", "house door chair table bicycle room", passive=True),
    _verb("wash,washes,washed", "lavar", "car dish bicycle shoe", passive=True),
    _verb(
        "order",
        "pedir",
        "coffee tea juice pizza salad soup sandwich fish chicken wine",
        pres_stem="pid",
        pret3_stem="pid",
    ),
    _verb(
        "send,sends,sent",
        "enviar",
        "letter email package report photo gift document contract",
        pres_stem="enví",
        passive=True,
    ),
    _verb("receive", "recibir", "letter email package gift report"),
    _verb(
        "bring,brings,brought",
        "traer",
        "coffee cake wine book gift chair umbrella salad photo",
        pp="traído",
        over={"pres": "traigo traes trae traemos traen", "pret": "traje trajiste trajo trajimos trajeron"},
    ),
    _verb("eat,eats,ate,eaten", "comer", "apple bread fish cake pizza salad soup sandwich chicken rice"),
    _verb("drink,drinks,drank,drunk", "beber", "coffee tea juice milk wine"),
    _verb("check", "revisar", "report contract document list email car", passive=True),
    _verb("sign", "firmar", "contract letter document report", passive=True),
    _verb("finish,finishes,finished", "terminar", "report book story exam project lunch dinner", passive=True),
    _verb("explain", "explicar", "plan idea problem rule decision project"),
    _verb("discuss,discusses,discussed", "discutir", "plan idea problem project contract decision"),
    _verb("forget,forgets,forgot,forgotten", "olvidar", "key umbrella phone bag ticket list map"),
    _verb("organize", "organizar", "party meeting trip concert dinner", passive=True),
    _verb("plan,plans,planned", "planear", "party trip meeting dinner", passive=True),
    _verb("look for", "buscar", "key phone book umbrella bag document camera"),
    _verb("cancel,cancels,canceled", "cancelar", "meeting trip party class concert dinner", passive=True),
)

# Intransitive verbs used with adverbs ("would arrive late").
INTRANSITIVE: tuple[Verb, ...] = (
    _verb("arrive", "llegar"),
    _verb("leave,leaves,left", "salir", fut_stem="saldr", over={"pres": "salgo sales sale salimos salen"}),
    _verb(
        "come,comes,came",
        "venir",
        fut_stem="vendr",
        over={"pres": "vengo vienes viene venimos vienen", "pret": "vine viniste vino vinimos vinieron"},
    ),
    _verb("return", "volver", pres_stem="vuelv", pp="vuelto"),
    _verb("work", "trabajar"),
    _verb("travel", "viajar"),
    _verb("rest", "descansar"),
)
_SER = _conjugate(
    "ser",
    over={
        "pres": "soy eres es somos son",
        "pret": "fui fuiste fue fuimos fueron",
        "impf": "era eras era éramos eran",
    },
)
_ESTAR = _conjugate(
    "estar",
    over={"pres": "estoy estás está estamos están", "pret": "estuve estuviste estuvo estuvimos estuvieron"},
)
_IR = _conjugate(
    "ir",
    over={
        "pres": "voy vas va vamos van",
        "pret": "fui fuiste fue fuimos fueron",
        "impf": "iba ibas iba íbamos iban",
    },
)
_TENER = _conjugate(
    "tener",
    fut_stem="tendr",
    over={"pres": "tengo tienes tiene tenemos tienen", "pret": "tuve tuviste tuvo tuvimos tuvieron"},
)
_PODER = _conjugate("poder", fut_stem="podr", over={"pres": "puedo puedes puede podemos pueden"})
_QUERER = _conjugate("querer", fut_stem="querr", over={"pres": "quiero quieres quiere queremos quieren"})
_NECESITAR = _conjugate("necesitar")
_DECIR = _conjugate(
    "decir",
    fut_stem="dir",
    over={"pres": "digo dices dice decimos dicen", "pret": "dije dijiste dijo dijimos dijeron"},
)
_CREER = _conjugate("creer", over={"pret": "creí creíste creyó creímos creyeron"})
_VIVIR = _conjugate("vivir")
_TRABAJAR = _conjugate("trabajar")
_VIAJAR = _conjugate("viajar")
_ESPERAR = _conjugate("esperar")
_HABLAR = _conjugate("hablar")
_COSTAR = _conjugate("costar", pres_stem="cuest")

# (English 3s/other, Spanish table) for modal constructions followed by an infinitive.
_MODALS: tuple[tuple[str, str, str, dict[tuple[str, str], str]], ...] = (
    ("has to", "have to", "que", _TENER),
    ("wants to", "want to", "", _QUERER),
    ("needs to", "need to", "", _NECESITAR),
    ("can", "can", "", _PODER),
)

# ---------------------------------------------------------------------------------------------
# Time expressions
# ---------------------------------------------------------------------------------------------

_DAYS = (
    ("Monday", "lunes", "lunes"),
    ("Tuesday", "martes", "martes"),
    ("Wednesday", "miércoles", "miércoles"),
    ("Thursday", "jueves", "jueves"),
    ("Friday", "viernes", "viernes"),
    ("Saturday", "sábado", "sábados"),
    ("Sunday", "domingo", "domingos"),
)
TIME_PAST: tuple[Pair, ...] = (
    ("yesterday", "ayer"),
    ("last week", "la semana pasada"),
    ("last night", "anoche"),
    ("this morning", "esta mañana"),
    ("two days ago", "hace dos días"),
    ("last year", "el año pasado"),
    ("yesterday afternoon", "ayer por la tarde"),
    ("last month", "el mes pasado"),
) + tuple((f"on {d}", f"el {s}") for d, s, _ in _DAYS)
TIME_FUT: tuple[Pair, ...] = (
    ("tomorrow", "mañana"),
    ("next week", "la próxima semana"),
    ("tonight", "esta noche"),
    ("next year", "el próximo año"),
    ("tomorrow morning", "mañana por la mañana"),
    ("next month", "el próximo mes"),
    ("soon", "pronto"),
) + tuple((f"on {d}", f"el {s}") for d, s, _ in _DAYS)
TIME_HAB: tuple[Pair, ...] = (
    ("every day", "todos los días"),
    ("every morning", "todas las mañanas"),
    ("every week", "todas las semanas"),
    ("every night", "todas las noches"),
    ("every weekend", "todos los fines de semana"),
    ("in the afternoon", "por la tarde"),
) + tuple((f"on {d}s", f"los {p}") for d, _, p in _DAYS)
_ADVERBS: tuple[Pair, ...] = (("late", "tarde"), ("early", "temprano"))
_TIMES = {"pret": TIME_PAST, "fut": TIME_FUT, "pres": TIME_HAB}

# ---------------------------------------------------------------------------------------------
# Sentence assembly
# ---------------------------------------------------------------------------------------------

_AN_EXCEPTIONS = ("uni", "use", "eu")


def _fix_an(text: str) -> str:
    words = text.split(" ")
    for i in range(len(words) - 1):
        if words[i] in ("a", "A"):
            nxt = words[i + 1].lower()
            if (nxt[:1] in "aeiou" and not nxt.startswith(_AN_EXCEPTIONS)) or nxt.startswith("honest"):
                words[i] += "n"
    return " ".join(words)


_CONTRACT = ((re.compile(r"\ba el\b"), "al"), (re.compile(r"\bde el\b"), "del"))


def _cap(text: str) -> str:
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
    return text


def _join(parts: Sequence[str]) -> str:
    return " ".join(p for p in parts if p).replace(" ,", ",")


def _finish(en: Sequence[str], es: Sequence[str], question: bool = False) -> Pair:
    """Join parts, apply a/an and Spanish contractions, capitalise and punctuate."""
    en_s = _cap(_fix_an(_join(en)))
    es_s = _join(es)
    for pat, rep in _CONTRACT:
        es_s = pat.sub(rep, es_s)
    if question:
        return en_s + "?", "¿" + _cap(es_s) + "?"
    return en_s + ".", _cap(es_s) + "."


_ES_ART = {
    "the": ("el", "la", "los", "las"),
    "a": ("un", "una", "unos", "unas"),
    "this": ("este", "esta", "estos", "estas"),
    "my": ("mi", "mi", "mis", "mis"),
    "our": ("nuestro", "nuestra", "nuestros", "nuestras"),
    "your": ("tu", "tu", "tus", "tus"),
    "his": ("su", "su", "sus", "sus"),
    "her": ("su", "su", "sus", "sus"),
    "their": ("su", "su", "sus", "sus"),
    "some": ("", "", "unos", "unas"),
}
_EN_DET_PL = {"a": "some", "this": "these"}


def _art(det: str, fem: bool, plural: bool) -> str:
    return _ES_ART[det][2 * plural + fem]


def _obj_np(
    rng: random.Random,
    noun: Noun,
    det: str,
    *,
    adj_p: float = 0.3,
    plural_p: float = 0.3,
) -> Pair:
    """Object noun phrase with a determiner, optional adjective and number."""
    plural = noun.en_pl is not None and rng.random() < plural_p
    adj = _OBJ_ADJ[rng.choice(_CAT_ADJS[noun.cat])] if rng.random() < adj_p else None
    if noun.en_pl is None and det == "a":
        det = "some" if adj else "the"
    en_det = _EN_DET_PL.get(det, det) if plural else det
    if det == "some" and not plural:
        en_det = ""  # bare mass noun: "fresh bread" -> "pan fresco"
    en_noun = noun.en_pl if plural and noun.en_pl else noun.en
    en = _join([en_det, adj.en if adj else "", en_noun])
    es = _join([_art(det, noun.fem, plural), noun.es_form(plural), adj.es(noun.fem, plural) if adj else ""])
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


def _subject(rng: random.Random, *, gendered: bool = False, plural: bool | None = None) -> Subject:
    """Pick a non-profession subject; ``gendered`` requires a known gender."""
    kind = rng.random()
    if plural is None:
        plural = rng.random() < 0.25
    if plural:
        groups = [
            ("the women", "las mujeres", True),
            ("the men", "los hombres", False),
            ("the girls", "las chicas", True),
            ("the boys", "los chicos", False),
            ("my sisters", "mis hermanas", True),
            ("my brothers", "mis hermanos", False),
        ]
        if not gendered:
            groups += [
                ("the children", "los niños", None),
                ("my parents", "mis padres", None),
                ("my friends", "mis amigos", None),
                ("the students", "los estudiantes", None),
                ("we", "", None),
            ]
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
    return _gendered_np(rng, fem)


_GENDERED_NPS = (
    ("the woman", "la mujer", "the man", "el hombre"),
    ("the girl", "la niña", "the boy", "el niño"),
    ("my mother", "mi madre", "my father", "mi padre"),
    ("my sister", "mi hermana", "my brother", "mi hermano"),
    ("my aunt", "mi tía", "my uncle", "mi tío"),
    ("my grandmother", "mi abuela", "my grandfather", "mi abuelo"),
    ("my daughter", "mi hija", "my son", "mi hijo"),
)


def _gendered_np(rng: random.Random, fem: bool, *, only_the: bool = False) -> Subject:
    """A singular noun phrase whose gender is lexical (the woman, my brother, ...)."""
    f_en, f_es, m_en, m_es = rng.choice(_GENDERED_NPS[:2] if only_the else _GENDERED_NPS)
    return Subject(f_en if fem else m_en, f_es if fem else m_es, "3s", fem, "her" if fem else "his")


def _pick_obj(rng: random.Random, verb: Verb) -> Noun:
    return NOUNS[rng.choice(verb.objs)]


def _pick_det(rng: random.Random, poss: str) -> str:
    return rng.choice(["the", "the", "a", poss, "this"])


# --- profession helpers -----------------------------------------------------------------------

_PRON = {
    True: {
        "subj": "she",
        "poss": "her",
        "refl": "herself",
        "noun": "woman",
        "title": "Ms.",
        "es_noun": "mujer",
        "es_title": "la señora",
    },
    False: {
        "subj": "he",
        "poss": "his",
        "refl": "himself",
        "noun": "man",
        "title": "Mr.",
        "es_noun": "hombre",
        "es_title": "el señor",
    },
}


def _the_prof(p: Profession, fem: bool) -> Pair:
    return f"the {p.en}", f"{'la' if fem else 'el'} {p.es(fem)}"


def _workplace(rng: random.Random, p: Profession) -> Place:
    return PLACES[rng.choice(p.workplaces)]


def _transitive_vp(rng: random.Random, tense: str, person: str, poss: str, *, time_p: float = 0.6) -> Pair:
    """Verb phrase "verb det obj [time]" whose object may use the subject's possessive."""
    verb = rng.choice(TRANSITIVE)
    det = rng.choice(["the", poss, poss, "a", "this"])
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), det)
    times = _TIMES[tense]
    t_en, t_es = rng.choice(times) if (tense == "pres" or rng.random() < time_p) else ("", "")
    return (
        _join([verb.en_form(tense, person), o_en, t_en]),
        _join([verb.es(tense, person), o_es, t_es]),
    )


def _tense(rng: random.Random) -> str:
    return rng.choices(["pret", "pres", "fut"], weights=[0.5, 0.25, 0.25])[0]


# --- templates with a profession (always with an English gender cue) --------------------------


def _p_possessive(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse lost her keys yesterday."""
    s_en, s_es = _the_prof(p, fem)
    tense = _tense(rng)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), _PRON[fem]["poss"])
    t_en, t_es = rng.choice(_TIMES[tense]) if tense == "pres" or rng.random() < 0.5 else ("", "")
    return _finish([s_en, verb.en_form(tense, "3s"), o_en, t_en], [s_es, verb.es(tense, "3s"), o_es, t_es])


_REPORT = (
    ("said", "dijo"),
    ("told me", "me dijo"),
    ("wrote", "escribió"),
    ("explained", "explicó"),
    ("mentioned", "mencionó"),
)


def _p_said_state(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse said that she was very tired."""
    s_en, s_es = _the_prof(p, fem)
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy"), ("a little", "un poco")])
    if rng.random() < 0.7:
        r_en, r_es = rng.choice(_REPORT)
        cop_en, cop_es = "was", "estaba"
    else:
        r_en, r_es = rng.choice((("says", "dice"), ("thinks", "cree")))
        cop_en, cop_es = "is", "está"
    return _finish(
        [s_en, r_en, "that", _PRON[fem]["subj"], cop_en, very[0], adj.en],
        [s_es, r_es, "que", cop_es, very[1], adj.es(fem)],
    )


_CITY_PREPS = {
    "llegar": ("in", "a"),
    "venir": ("to", "a"),
    "volver": ("to", "a"),
    "viajar": ("to", "a"),
    "trabajar": ("in", "en"),
    "descansar": ("in", "en"),
}


def _p_said_would(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The engineer said that she would arrive late."""
    s_en, s_es = _the_prof(p, fem)
    r_en, r_es = rng.choice(_REPORT)
    verb = rng.choice(INTRANSITIVE)
    adv = rng.choice(_ADVERBS + TIME_FUT[:7])
    preps = _CITY_PREPS.get(verb.inf)
    if preps and rng.random() < 0.3:
        city = rng.choice(CITIES)
        loc = (f"{preps[0]} {city[0]}", f"{preps[1]} {city[1]}")
    else:
        loc = ("", "")
    return _finish(
        [s_en, r_en, "that", _PRON[fem]["subj"], "would", verb.en[0], loc[0], adv[0]],
        [s_es, r_es, "que", verb.es("cond", "3s"), loc[1], adv[1]],
    )


def _p_said_had(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The lawyer said that he had lost his keys."""
    s_en, s_es = _the_prof(p, fem)
    r_en, r_es = rng.choice(_REPORT)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), rng.choice([_PRON[fem]["poss"], "the"]), adj_p=0.2)
    return _finish(
        [s_en, r_en, "that", _PRON[fem]["subj"], "had", verb.en[3], o_en],
        [s_es, r_es, "que", "había", verb.pp, o_es],
    )


def _p_trait_noun(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The doctor is a very kind woman."""
    s_en, s_es = _the_prof(p, fem)
    adj = rng.choice(TRAIT_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    pr = _PRON[fem]
    if rng.random() < 0.7:
        return _finish(
            [s_en, "is", "a", very[0], adj.en, pr["noun"]],
            [s_es, "es", "una" if fem else "un", pr["es_noun"], very[1], adj.es(fem)],
        )
    city = rng.choice(CITIES)
    return _finish(
        [s_en, "is", "a", very[0], adj.en, pr["noun"], "from", city[0]],
        [s_es, "es", "una" if fem else "un", pr["es_noun"], very[1], adj.es(fem), "de", city[1]],
    )


def _p_title(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """Ms. Ortiz is an engineer. / Mr. Ortiz works as a nurse in Madrid."""
    pr = _PRON[fem]
    name = rng.choice(SURNAMES)
    r = rng.random()
    if r < 0.3:
        adj = rng.choice(TRAIT_ADJS)
        return _finish(
            [pr["title"], name, "is", "a", adj.en, p.en],
            [pr["es_title"], name, "es", "una" if fem else "un", p.es(fem), adj.es(fem)],
        )
    if r < 0.55:
        city = rng.choice(CITIES)
        return _finish(
            [pr["title"], name, "works as", "a", p.en, "in", city[0]],
            [pr["es_title"], name, "trabaja como", p.es(fem), "en", city[1]],
        )
    if r < 0.7:
        city = rng.choice(CITIES)
        return _finish(
            [pr["title"], name, "is", "a", p.en, "from", city[0]],
            [pr["es_title"], name, "es", p.es(fem), "de", city[1]],
        )
    s_en, s_es = _the_prof(p, fem)
    tense = rng.choice(["pret", "fut"])
    vp_en, vp_es = _transitive_vp(rng, tense, "3s", "the", time_p=0.4)
    return _finish([pr["title"], name, ",", s_en, ",", vp_en], [pr["es_title"], name, ",", s_es, ",", vp_es])


def _p_relative(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse who works at the hospital lost her keys."""
    s_en, s_es = _the_prof(p, fem)
    if rng.random() < 0.6:
        place = _workplace(rng, p)
        rel_en, rel_es = f"who works at the {place.en}", f"que trabaja en {place.es_the()}"
    else:
        city = rng.choice(CITIES)
        rel_en, rel_es = f"who lives in {city[0]}", f"que vive en {city[1]}"
    tense = rng.choice(["pret", "pret", "fut"])
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), _PRON[fem]["poss"], adj_p=0.2)
    return _finish([s_en, rel_en, verb.en_form(tense, "3s"), o_en], [s_es, rel_es, verb.es(tense, "3s"), o_es])


_WH = (("where", "dónde"), ("when", "cuándo"), ("why", "por qué"))


def _p_question(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """Did the nurse find her keys? / Where did the pilot leave his car?"""
    s_en, s_es = _the_prof(p, fem)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), _PRON[fem]["poss"], adj_p=0.2)
    r = rng.random()
    if r < 0.4:
        return _finish(["did", s_en, verb.en[0], o_en], [s_es, verb.es("pret", "3s"), o_es], True)
    if r < 0.6:
        t_en, t_es = rng.choice(TIME_FUT)
        return _finish(["will", s_en, verb.en[0], o_en, t_en], [s_es, verb.es("fut", "3s"), o_es, t_es], True)
    if r < 0.8:
        wh_en, wh_es = rng.choice(_WH)
        return _finish(
            [wh_en, "did", s_en, verb.en[0], o_en],
            [wh_es, verb.es("pret", "3s"), s_es, o_es],
            True,
        )
    adj = rng.choice(STATE_ADJS)
    return _finish(
        ["why", "was", s_en, "so", adj.en, "when", _PRON[fem]["subj"], "arrived"],
        ["por qué", "estaba", s_es, "tan", adj.es(fem), "cuando", "llegó"],
        True,
    )


def _p_companion(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The pilot went to the beach with his sister."""
    s_en, s_es = _the_prof(p, fem)
    rel = rng.choice(RELATIVES)
    tense = rng.choice(["pret", "pret", "fut"])
    if rng.random() < 0.5:
        place = PLACES[rng.choice(_OUTING_PLACES)]
        dest_en, dest_es = f"to the {place.en}", f"a {place.es_the()}"
    else:
        city = rng.choice(CITIES)
        dest_en, dest_es = f"to {city[0]}", f"a {city[1]}"
    verb_en = "went" if tense == "pret" else "will go"
    verb_es = _IR[(tense, "3s")]
    t_en, t_es = rng.choice(_TIMES[tense]) if rng.random() < 0.5 else ("", "")
    return _finish(
        [s_en, verb_en, dest_en, "with", _PRON[fem]["poss"], rel.en, t_en],
        [s_es, verb_es, dest_es, "con", _art("his", rel.fem, rel.plural), rel.es, t_es],
    )


def _p_reflexive(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The judge bought herself a new car."""
    s_en, s_es = _the_prof(p, fem)
    noun = NOUNS[
        rng.choice(
            [
                "car",
                "bicycle",
                "phone",
                "computer",
                "camera",
                "watch",
                "lamp",
                "jacket",
                "umbrella",
                "painting",
                "house",
                "cake",
                "book",
            ]
        )
    ]
    o_en, o_es = _obj_np(rng, noun, "a", adj_p=0.6, plural_p=0.0)
    t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.5 else ("", "")
    return _finish([s_en, "bought", _PRON[fem]["refl"], o_en, t_en], [s_es, "se", "compró", o_es, t_es])


_BECAUSE_MAIN = (
    ("stayed at home", "se quedó en casa"),
    ("went home early", "se fue a casa temprano"),
    ("did not go to work", "no fue a trabajar"),
    ("left the office early", "salió de la oficina temprano"),
    ("canceled the meeting", "canceló la reunión"),
    ("did not eat lunch", "no almorzó"),
)


def _p_because(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse stayed at home because she was sick."""
    s_en, s_es = _the_prof(p, fem)
    m_en, m_es = rng.choice(_BECAUSE_MAIN)
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    t_en, t_es = rng.choice(TIME_PAST[:8]) if rng.random() < 0.3 else ("", "")
    return _finish(
        [s_en, m_en, t_en, "because", _PRON[fem]["subj"], "was", very[0], adj.en],
        [s_es, m_es, t_es, "porque", "estaba", very[1], adj.es(fem)],
    )


def _p_when(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """When the doctor arrived at the hospital, she was very tired."""
    s_en, s_es = _the_prof(p, fem)
    place = _workplace(rng, p) if rng.random() < 0.6 else PLACES[rng.choice(_OUTING_PLACES)]
    adj = rng.choice(STATE_ADJS)
    very = rng.choice([("", ""), ("very", "muy")])
    return _finish(
        ["when", s_en, "arrived at the", place.en, ",", _PRON[fem]["subj"], "was", very[0], adj.en],
        ["cuando", s_es, "llegó a", place.es_the(), ",", "estaba", very[1], adj.es(fem)],
    )


def _p_modal(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The surgeon has to finish his report today."""
    s_en, s_es = _the_prof(p, fem)
    m3, _, que, table = rng.choice(_MODALS)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), _PRON[fem]["poss"], adj_p=0.2)
    t_en, t_es = rng.choice((("today", "hoy"),) + TIME_FUT[:7]) if rng.random() < 0.6 else ("", "")
    return _finish(
        [s_en, m3, verb.en[0], o_en, t_en],
        [s_es, table[("pres", "3s")], que, verb.inf, o_es, t_es],
    )


def _p_object(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """I spoke with the lawyer about his contract. / We waited for the doctor and her son."""
    s_en, s_es = _the_prof(p, fem)
    # the subject must not be he/she-like, or "her contract" could refer to it
    subj = rng.choice([("I", "1s"), ("we", "1p"), ("my parents", "3p"), ("the students", "3p")])
    subj_es = {"I": "", "we": "", "my parents": "mis padres", "the students": "los estudiantes"}[subj[0]]
    if rng.random() < 0.6:
        noun = NOUNS[
            rng.choice(
                [
                    "contract",
                    "report",
                    "project",
                    "plan",
                    "idea",
                    "problem",
                    "decision",
                    "trip",
                    "book",
                    "car",
                    "exam",
                    "meeting",
                ]
            )
        ]
        o_en, o_es = _obj_np(rng, noun, _PRON[fem]["poss"], adj_p=0.3, plural_p=0.0)
        t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.4 else ("", "")
        return _finish(
            [subj[0], "spoke with", s_en, "about", o_en, t_en],
            [subj_es, _HABLAR[("pret", subj[1])], "con", s_es, "sobre", o_es, t_es],
        )
    rel = rng.choice(RELATIVES)
    place = PLACES[rng.choice(_OUTING_PLACES)]
    return _finish(
        [subj[0], "waited for", s_en, "and", _PRON[fem]["poss"], rel.en, "at the", place.en],
        [
            subj_es,
            _ESPERAR[("pret", subj[1])],
            "a",
            s_es,
            "y",
            "a",
            _art("his", rel.fem, rel.plural),
            rel.es,
            "en",
            place.es_the(),
        ],
    )


def _p_plural(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The women who work at the hospital are nurses."""
    who = rng.choice(
        [
            (("the women", "las mujeres"), ("the men", "los hombres")),
            (("my sisters", "mis hermanas"), ("my brothers", "mis hermanos")),
        ]
    )
    s_en, s_es = who[0] if fem else who[1]
    r = rng.random()
    if r < 0.4:
        place = _workplace(rng, p)
        return _finish(
            [s_en, "who work at the", place.en, "are", p.en_pl],
            [s_es, "que trabajan en", place.es_the(), "son", p.es(fem, True)],
        )
    if r < 0.7:
        adj = rng.choice(TRAIT_ADJS)
        return _finish([s_en, "are", "very", adj.en, p.en_pl], [s_es, "son", p.es(fem, True), "muy", adj.es(fem, True)])
    city = rng.choice(CITIES)
    return _finish([s_en, "work as", p.en_pl, "in", city[0]], [s_es, "trabajan como", p.es(fem, True), "en", city[1]])


def _p_pair_subject(rng: random.Random, p: Profession, fem: bool) -> Pair:
    """The nurse and her sister bought a new car."""
    s_en, s_es = _the_prof(p, fem)
    rel = rng.choice([r for r in RELATIVES if r.en not in ("dog", "family")])
    tense = rng.choice(["pret", "pret", "fut", "pres"])
    vp_en, vp_es = _transitive_vp(rng, tense, "3p", "their", time_p=0.5)
    return _finish(
        [s_en, "and", _PRON[fem]["poss"], rel.en, vp_en],
        [s_es, "y", _art("his", rel.fem, rel.plural), rel.es, vp_es],
    )


PROFESSION_TEMPLATES: tuple[tuple[Callable[[random.Random, Profession, bool], Pair], float], ...] = (
    (_p_possessive, 3.0),
    (_p_said_state, 2.5),
    (_p_said_would, 1.5),
    (_p_said_had, 1.0),
    (_p_trait_noun, 1.0),
    (_p_title, 1.5),
    (_p_relative, 1.5),
    (_p_question, 1.5),
    (_p_companion, 1.0),
    (_p_reflexive, 0.7),
    (_p_because, 1.2),
    (_p_when, 1.0),
    (_p_modal, 1.0),
    (_p_object, 1.0),
    (_p_plural, 0.8),
    (_p_pair_subject, 0.8),
)

# --- templates without professions ------------------------------------------------------------


def _n_svo(rng: random.Random) -> Pair:
    """My father bought a red car last week."""
    subj = _subject(rng)
    tense = _tense(rng)
    vp_en, vp_es = _transitive_vp(rng, tense, subj.person, subj.poss)
    return _finish([subj.en, vp_en], [subj.es, vp_es])


def _n_passive(rng: random.Random) -> Pair:
    """The letters were written by my grandmother."""
    verb = rng.choice([v for v in TRANSITIVE if v.passive])
    noun = _pick_obj(rng, verb)
    o_en, o_es = _obj_np(rng, noun, "the", adj_p=0.2, plural_p=0.3)
    plural = o_en.endswith("s") and noun.en_pl is not None and o_en.endswith(noun.en_pl)
    subj = _subject(rng, gendered=True, plural=rng.random() < 0.2)
    if subj.en in ("he", "she"):
        agent_en, agent_es = ("her", "ella") if subj.fem else ("him", "él")
    else:
        agent_en, agent_es = subj.en, subj.es or subj.en
    t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.3 else ("", "")
    return _finish(
        [o_en, "were" if plural else "was", verb.en[3], "by", agent_en, t_en],
        [o_es, "fueron" if plural else "fue", verb.es_pp(noun.fem, plural), "por", agent_es, t_es],
    )


def _n_location(rng: random.Random) -> Pair:
    """The keys are under the chair."""
    noun = NOUNS[rng.choice(_LOCATABLE)]
    det = rng.choice(["the", "my", "your", "our"])
    o_en, o_es = _obj_np(rng, noun, det, adj_p=0.3, plural_p=0.4)
    plural = noun.en_pl is not None and o_en.endswith(noun.en_pl)
    prep = rng.choice(_LOC_PREPS)
    target = NOUNS[rng.choice([t for t in prep[2] if t != noun.en])]
    tense = rng.choice(["pres", "impf"])
    cop_en = ("are" if plural else "is") if tense == "pres" else ("were" if plural else "was")
    return _finish(
        [o_en, cop_en, prep[0], "the", target.en],
        [o_es, _ESTAR[(tense, "3p" if plural else "3s")], prep[1], _art("the", target.fem, False), target.es],
    )


_CONTAINERS: tuple[Pair, ...] = tuple(
    (p.en, p.es_the())
    for p in (PLACES[k] for k in ("office", "store", "library", "museum", "station", "school", "hotel", "market"))
) + (("kitchen", "la cocina"), ("room", "la habitación"), ("box", "la caja"), ("bag", "la bolsa"))
_THERE_IS_NOUNS = tuple(
    n.en for n in NOUNS.values() if n.en_pl and n.cat in ("phys", "food") and n.en not in ("kitchen", "room")
)
_NUMBERS = (("two", "dos"), ("three", "tres"), ("four", "cuatro"), ("five", "cinco"), ("many", ""))


def _n_there_is(rng: random.Random) -> Pair:
    """There are many red cars in the street."""
    noun = NOUNS[rng.choice(_THERE_IS_NOUNS)]
    adj = _OBJ_ADJ[rng.choice(_CAT_ADJS[noun.cat])] if rng.random() < 0.5 else None
    where = rng.choice(_CONTAINERS)
    if rng.random() < 0.4:
        np_en, np_es = (
            _join(["a", adj.en if adj else "", noun.en]),
            _join(["una" if noun.fem else "un", noun.es, adj.es(noun.fem) if adj else ""]),
        )
        cop_en = "is"
    else:
        num = rng.choice(_NUMBERS)
        num_es = num[1] or ("muchas" if noun.fem else "muchos")
        np_en = _join([num[0], adj.en if adj else "", noun.en_pl or ""])
        np_es = _join([num_es, noun.es_pl, adj.es(noun.fem, True) if adj else ""])
        cop_en = "are"
    past = rng.random() < 0.3
    return _finish(
        ["there", ("was" if cop_en == "is" else "were") if past else cop_en, np_en, "in the", where[0]],
        ["había" if past else "hay", np_es, "en", where[1]],
    )


def _n_obj_pred(rng: random.Random) -> Pair:
    """The soup was very cold. / The houses in this street are very old."""
    noun = rng.choice(list(NOUNS.values()))
    det = rng.choice(["the", "the", "my", "this", "our", "your"])
    plural = noun.en_pl is not None and rng.random() < 0.3
    en_det = _EN_DET_PL.get(det, det) if plural else det
    adj = _OBJ_ADJ[rng.choice(_CAT_ADJS[noun.cat])]
    estar = adj.en in _ESTAR_OBJ_ADJS
    tense = rng.choice(["pres", "impf"])
    cop_es = (_ESTAR if estar else _SER)[(tense, "3p" if plural else "3s")]
    cop_en = ("are" if plural else "is") if tense == "pres" else ("were" if plural else "was")
    deg = rng.choice([("very", "muy"), ("too", "demasiado")])
    noun_en = noun.en_pl if plural else noun.en
    assert noun_en is not None
    if rng.random() < 0.5:
        tail_en, tail_es = rng.choice([("", ""), ("today", "hoy")]) if estar else ("", "")
        return _finish(
            [en_det, noun_en, cop_en, deg[0], adj.en, tail_en],
            [
                _art(det, noun.fem, plural),
                noun.es_form(plural),
                cop_es,
                deg[1],
                adj.es(noun.fem, plural),
                tail_es,
            ],
        )
    subj = _subject(rng, plural=False)
    think_en = "think" if subj.person in ("1s", "2s") else "thinks"
    return _finish(
        [subj.en, think_en, "that", en_det, noun_en, cop_en, deg[0], adj.en],
        [
            subj.es,
            _CREER[("pres", subj.person)],
            "que",
            _art(det, noun.fem, plural),
            noun.es_form(plural),
            cop_es,
            deg[1],
            adj.es(noun.fem, plural),
        ],
    )


_PRICED = (
    "car",
    "house",
    "bicycle",
    "phone",
    "computer",
    "umbrella",
    "lamp",
    "camera",
    "watch",
    "suitcase",
    "jacket",
    "painting",
    "ticket",
    "shoe",
    "book",
    "cake",
    "apple",
    "salad",
    "sandwich",
    "pizza",
    "map",
)


def _n_question(rng: random.Random) -> Pair:
    """Where are my keys? / Did you buy the bread? / Who wrote this letter?"""
    r = rng.random()
    if r < 0.2:
        noun = NOUNS[rng.choice(_LOCATABLE)]
        o_en, o_es = _obj_np(rng, noun, rng.choice(["the", "my", "your", "our"]), adj_p=0.3, plural_p=0.4)
        plural = noun.en_pl is not None and o_en.endswith(noun.en_pl)
        return _finish(["where", "are" if plural else "is", o_en], ["dónde", "están" if plural else "está", o_es], True)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), rng.choice(["the", "my", "this", "our"]), adj_p=0.3)
    if r < 0.45:
        return _finish(["did", "you", verb.en[0], o_en], [verb.es("pret", "2s"), o_es], True)
    if r < 0.6:
        return _finish(["who", verb.en[2], o_en], ["quién", verb.es("pret", "3s"), o_es], True)
    if r < 0.8:
        subj = _subject(rng, plural=rng.random() < 0.3)
        wh_en, wh_es = rng.choice(_WH)
        return _finish(
            [wh_en, "will", subj.en, verb.en[0], o_en],
            [wh_es, verb.es("fut", subj.person), subj.es, o_es],
            True,
        )
    noun = NOUNS[rng.choice(_PRICED)]
    plural = rng.random() < 0.3
    o_en, o_es = (
        (f"the {noun.en_pl}", _join([_art("the", noun.fem, True), noun.es_pl]))
        if plural
        else (f"the {noun.en}", _join([_art("the", noun.fem, False), noun.es]))
    )
    return _finish(
        ["how much", "do" if plural else "does", o_en, "cost"],
        ["cuánto", _COSTAR[("pres", "3p" if plural else "3s")], o_es],
        True,
    )


def _n_state(rng: random.Random) -> Pair:
    """My sister was very tired yesterday."""
    subj = _subject(rng, gendered=True)
    adj = rng.choice(STATE_ADJS)
    tense = rng.choice(["pres", "impf"])
    plural = subj.plural
    cop_en = ("are" if plural else "is") if tense == "pres" else ("were" if plural else "was")
    t_en, t_es = (
        rng.choice([("today", "hoy"), ("this morning", "esta mañana"), ("tonight", "esta noche")])
        if tense == "pres"
        else rng.choice(TIME_PAST[:8])
    )
    very = rng.choice([("very", "muy"), ("a little", "un poco"), ("", "")])
    assert subj.fem is not None
    return _finish(
        [subj.en, cop_en, very[0], adj.en, t_en],
        [subj.es, _ESTAR[(tense, subj.person)], very[1], adj.es(subj.fem, plural), t_es],
    )


def _n_relative(rng: random.Random) -> Pair:
    """The woman who bought the car lives in Rome. / The car that my father bought is very expensive."""
    verb = rng.choice(TRANSITIVE)
    noun = _pick_obj(rng, verb)
    if rng.random() < 0.5:
        subj = _gendered_np(rng, rng.random() < 0.5, only_the=True)
        o_en, o_es = _obj_np(rng, noun, "the", adj_p=0.2, plural_p=0.2)
        city = rng.choice(CITIES)
        tense = rng.choice(["pres", "impf"])
        v_en = "lives" if tense == "pres" else "lived"
        return _finish(
            [subj.en, "who", verb.en[2], o_en, v_en, "in", city[0]],
            [subj.es, "que", verb.es("pret", "3s"), o_es, _VIVIR[(tense, "3s")], "en", city[1]],
        )
    subj = _subject(rng)
    plural = noun.en_pl is not None and rng.random() < 0.3
    noun_en = noun.en_pl if plural else noun.en
    adj = _OBJ_ADJ[rng.choice(_CAT_ADJS[noun.cat])]
    estar = adj.en in _ESTAR_OBJ_ADJS
    cop_en = "were" if plural else "was"
    cop_es = (_ESTAR if estar else _SER)[("impf", "3p" if plural else "3s")]
    return _finish(
        ["the", noun_en, "that", subj.en, verb.en[2], cop_en, "very", adj.en],
        [
            _art("the", noun.fem, plural),
            noun.es_form(plural),
            "que",
            subj.es,
            verb.es("pret", subj.person),
            cop_es,
            "muy",
            adj.es(noun.fem, plural),
        ],
    )


def _n_modal(rng: random.Random) -> Pair:
    """My brother has to finish the report tomorrow."""
    subj = _subject(rng)
    m3, mo, que, table = rng.choice(_MODALS)
    verb = rng.choice(TRANSITIVE)
    o_en, o_es = _obj_np(rng, _pick_obj(rng, verb), _pick_det(rng, subj.poss), adj_p=0.3)
    t_en, t_es = rng.choice((("today", "hoy"),) + TIME_FUT[:7]) if rng.random() < 0.6 else ("", "")
    return _finish(
        [subj.en, m3 if subj.person == "3s" else mo, verb.en[0], o_en, t_en],
        [subj.es, table[("pres", subj.person)], que, verb.inf, o_es, t_es],
    )


_TRANSPORT = (
    ("by train", "en tren"),
    ("by plane", "en avión"),
    ("by car", "en coche"),
    ("by bus", "en autobús"),
    ("", ""),
)


def _n_travel(rng: random.Random) -> Pair:
    """Laura traveled to Rome by train with her sister last week."""
    subj = _subject(rng)
    tense = _tense(rng)
    city = rng.choice(CITIES)
    how = rng.choice(_TRANSPORT)
    verb = rng.choice((("go", "goes", "went", _IR), ("travel", "travels", "traveled", _VIAJAR)))
    v_en = {"pret": verb[2], "fut": "will " + verb[0], "pres": verb[1] if subj.person == "3s" else verb[0]}[tense]
    t_en, t_es = rng.choice(_TIMES[tense]) if tense == "pres" or rng.random() < 0.6 else ("", "")
    comp_en, comp_es = ("", "")
    if rng.random() < 0.4:
        rel = rng.choice(RELATIVES)
        comp_en, comp_es = (
            f"with {subj.poss} {rel.en}",
            f"con {_art(subj.poss, rel.fem, rel.plural)} {rel.es}",
        )
    return _finish(
        [subj.en, v_en, "to", city[0], how[0], comp_en, t_en],
        [subj.es, verb[3][(tense, subj.person)], "a", city[1], how[1], comp_es, t_es],
    )


def _n_place(rng: random.Random) -> Pair:
    """We waited for our friends at the station. / My aunt works at the bank."""
    subj = _subject(rng)
    place = PLACES[rng.choice(_OUTING_PLACES + ("office", "school", "hospital", "factory", "university"))]
    if rng.random() < 0.5:
        rel = rng.choice(RELATIVES)
        t_en, t_es = rng.choice(TIME_PAST) if rng.random() < 0.5 else ("", "")
        return _finish(
            [subj.en, "waited for", subj.poss, rel.en, "at the", place.en, t_en],
            [
                subj.es,
                _ESPERAR[("pret", subj.person)],
                "a",
                _art(subj.poss, rel.fem, rel.plural),
                rel.es,
                "en",
                place.es_the(),
                t_es,
            ],
        )
    tense = _tense(rng)
    v_en = {"pret": "worked", "fut": "will work", "pres": "works" if subj.person == "3s" else "work"}[tense]
    t_en, t_es = rng.choice(_TIMES[tense]) if tense == "pres" or rng.random() < 0.6 else ("", "")
    return _finish(
        [subj.en, v_en, "at the", place.en, t_en],
        [subj.es, _TRABAJAR[(tense, subj.person)], "en", place.es_the(), t_es],
    )


PLAIN_TEMPLATES: tuple[tuple[Callable[[random.Random], Pair], float], ...] = (
    (_n_svo, 4.0),
    (_n_passive, 1.2),
    (_n_location, 1.0),
    (_n_there_is, 0.8),
    (_n_obj_pred, 1.2),
    (_n_question, 1.5),
    (_n_state, 1.0),
    (_n_relative, 1.2),
    (_n_modal, 1.0),
    (_n_travel, 1.0),
    (_n_place, 1.0),
)
#: Share of sentences built around a profession.
PROFESSION_SHARE = 0.55

# ---------------------------------------------------------------------------------------------
# Corpus generation
# ---------------------------------------------------------------------------------------------

_MIN_WORDS, _MAX_WORDS = 5, 20


def _ok_length(pair: Pair) -> bool:
    return all(_MIN_WORDS <= len(s.split()) <= _MAX_WORDS for s in pair)


class _Sampler:
    """Draws sentence pairs; ``skewed`` applies each profession's training ``p_fem``."""

    def __init__(self, rng: random.Random, skewed: bool) -> None:
        self.rng = rng
        self.skewed = skewed
        self._p_fns = [f for f, _ in PROFESSION_TEMPLATES]
        self._p_w = [w for _, w in PROFESSION_TEMPLATES]
        self._n_fns = [f for f, _ in PLAIN_TEMPLATES]
        self._n_w = [w for _, w in PLAIN_TEMPLATES]

    def profession_pair(self, fem: bool | None = None) -> tuple[Pair, Profession, bool, int]:
        rng = self.rng
        prof = rng.choice(PROFESSIONS)
        if fem is None:
            fem = rng.random() < (prof.p_fem if self.skewed else 0.5)
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
    *, seed: int = 0, n_train: int = 40000, n_valid: int = 500, n_test: int = 500, n_gender_pairs: int = 500
) -> DemoCorpus:
    """Generate all splits in memory; held-out English sentences never occur in train."""
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
    train = _sample_unique(_Sampler(random.Random(seed * 7919 + 4), skewed=True), n_train, seen)
    return DemoCorpus(train, valid, test, gender)


def _write_text(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    os.replace(tmp, path)


GENEVAL_DIR = Path("mt-geneval") / "sentences" / "test"


def _geneval_name(gender: str, lang: str) -> str:
    return f"geneval-sentences-{gender}-test.en_es.{lang}"


def _readme(seed: int, corpus: DemoCorpus) -> str:
    skew = ", ".join(f"{p.en} {p.p_fem:.2f}" for p in PROFESSIONS)
    gfile = f"{GENEVAL_DIR.as_posix()}/{_geneval_name('feminine', 'en')}"
    return f"""# mtkit demo corpus (English → Spanish)

Synthetic parallel corpus generated by `mtkit.demo_corpus` (seed {seed}); regenerate with
`python -m mtkit.demo_corpus OUT_DIR --seed {seed} --n-train {len(corpus.train)}`.
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
with a fixed, stereotyped probability (valid/test: 0.5; gender pairs: balanced):
{skew}.
"""


def write_demo_corpus(
    out_dir: str | Path,
    *,
    seed: int = 0,
    n_train: int = 40000,
    n_valid: int = 500,
    n_test: int = 500,
    n_gender_pairs: int = 500,
) -> Path:
    """Write the demo corpus (plain splits, MT-GenEval-style gender pairs, README) into ``out_dir``.

    Deterministic: the same arguments give byte-identical files. Returns ``out_dir`` as a Path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    corpus = generate_corpus(seed=seed, n_train=n_train, n_valid=n_valid, n_test=n_test, n_gender_pairs=n_gender_pairs)
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
    readme = _readme(seed, corpus)
    tmp = out / f".README.md.tmp{os.getpid()}"
    tmp.write_bytes(readme.encode("utf-8"))
    os.replace(tmp, out / "README.md")
    return out


def _main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m mtkit.demo_corpus", description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", help="directory to write the corpus into")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-train", type=int, default=40000)
    ap.add_argument("--n-valid", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=500)
    ap.add_argument("--n-gender-pairs", type=int, default=500)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = write_demo_corpus(
        args.out_dir,
        seed=args.seed,
        n_train=args.n_train,
        n_valid=args.n_valid,
        n_test=args.n_test,
        n_gender_pairs=args.n_gender_pairs,
    )
    print(f"wrote demo corpus to {out} in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    _main()
