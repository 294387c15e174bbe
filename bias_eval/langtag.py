"""Language tags read one way: a language (ISO 639-1 ``pt``, or ISO 639-3 ``por``), then optionally a script
(ISO 15924, four letters: ``Hant``) and a region (ISO 3166-1, two letters, or UN M.49, three digits: ``BR``,
``419``), as BCP 47 orders them. ``_`` and ``-`` both separate subtags, and case does not matter: ``PT_br``,
``pt-BR`` and ``pt_BR`` are one tag. A two-letter subtag after the language is a region, never a language
(``ZH-CN`` is Chinese in China); a two-letter language must be an ISO 639-1 code. Standard library only: every
layer reads language codes through :class:`LanguageTag`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bias_eval.errors import UserError

_ISO_639_1 = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el "
    "en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu "
    "ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na "
    "nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so "
    "sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
)
#: Every ISO 639-1 code: a two-letter language that is not one of these is no language (``us``, ``cn``).
ISO_639_1 = frozenset(_ISO_639_1.split())
#: Withdrawn ISO 639-1 codes still found in data, and the codes that replaced them.
WITHDRAWN = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}

#: ISO 639-1 codes and the ISO 639-3 codes that stand for them (NLLB and Marian name individual languages:
#: ``arb`` for Arabic, ``pes`` for Persian, ``zsm`` for Malay).
_ISO3 = (
    "af afr|am amh|ar arb ara|as asm|az azj aze|be bel|bg bul|bn ben|bo bod|bs bos|ca cat|cs ces|cy cym|da dan|"
    "de deu|el ell|en eng|eo epo|es spa|et est ekk|eu eus|fa pes fas|fi fin|fo fao|fr fra|ga gle|gd gla|gl glg|"
    "gu guj|ha hau|he heb|hi hin|hr hrv|ht hat|hu hun|hy hye|id ind|ig ibo|is isl|it ita|ja jpn|jv jav|ka kat|"
    "kk kaz|km khm|kn kan|ko kor|ku kmr|ky kir|lb ltz|lo lao|lt lit|lv lvs lav|mg plt mlg|mi mri|mk mkd|ml mal|"
    "mn khk mon|mr mar|ms zsm msa|mt mlt|my mya|nb nob|ne npi nep|nl nld|nn nno|no nob nor|ny nya|oc oci|"
    "om gaz orm|or ory|pa pan|pl pol|ps pbt pus|pt por|ro ron|ru rus|rw kin|sa san|sd snd|si sin|sk slk|"
    "sl slv|sm smo|sn sna|so som|sq als sqi|sr srp|st sot|su sun|sv swe|sw swh swa|ta tam|te tel|tg tgk|"
    "th tha|ti tir|tk tuk|tl tgl|tn tsn|tr tur|tt tat|ug uig|uk ukr|ur urd|uz uzn uzb|vi vie|wo wol|xh xho|"
    "yi ydd yid|yo yor|zh zho cmn|zu zul"
)
ISO3: dict[str, tuple[str, ...]] = {row.split()[0]: tuple(row.split()[1:]) for row in _ISO3.split("|")}
_FROM_ISO3 = {three: two for two, threes in ISO3.items() for three in threes}

#: What a language tag looks like, for messages.
FORMS = "ISO 639-1 or 639-3, optionally with a script and/or region: de, deu, pt-BR, zh_Hant, zh-Hans-CN"
_SEPARATOR = re.compile(r"[_-]")


@dataclass(frozen=True)
class LanguageTag:
    """One language tag: ``base`` (the ISO 639-1 code where there is one, ``deu`` -> ``de``; else the ISO 639-3
    code, lower case), ``script`` (title case, ``Hant``) and ``region`` (upper case, ``BR``), each ``None`` when
    not given. ``str()`` writes it as BCP 47 does (``zh-Hant-TW``)."""

    base: str
    script: str | None = None
    region: str | None = None

    @classmethod
    def read(cls, text: object) -> LanguageTag | None:
        """The tag ``text`` spells (surrounding spaces ignored), or ``None`` when it is not a language tag."""
        if not isinstance(text, str) or not text.strip().isascii():
            return None
        base, *rest = _SEPARATOR.split(text.strip())
        base = WITHDRAWN.get(base.lower(), base.lower())
        if not re.fullmatch(r"[a-z]{2,3}", base) or (len(base) == 2 and base not in ISO_639_1):
            return None
        script = rest.pop(0).title() if rest and re.fullmatch(r"[A-Za-z]{4}", rest[0]) else None
        region = rest.pop(0).upper() if rest and re.fullmatch(r"[A-Za-z]{2}|[0-9]{3}", rest[0]) else None
        return None if rest else cls(_FROM_ISO3.get(base, base), script, region)

    @classmethod
    def parse(cls, text: object, where: str = "language") -> LanguageTag:
        """:meth:`read`, or a one-line :class:`UserError` naming ``where`` (a flag, a file and line)."""
        tag = cls.read(text)
        if tag is None:
            raise UserError(f"{where}: {text!r} is not a language code ({FORMS})")
        return tag

    def __str__(self) -> str:
        return "-".join(part for part in (self.base, self.script, self.region) if part)

    def covers(self, other: LanguageTag) -> bool:
        """Whether ``other`` is this tag or a variant of it: the same language, and the script and region this tag
        names, if it names them (``pt`` covers ``pt-BR``; ``pt-BR`` covers neither ``pt`` nor ``pt-PT``)."""
        return self.base == other.base and self.script in (None, other.script) and self.region in (None, other.region)

    def overlaps(self, other: LanguageTag) -> bool:
        """Whether some tag is covered by both (``pt`` and ``pt-BR``; ``zh-Hant`` and ``zh-TW``)."""
        return self.base == other.base and _agree(self.script, other.script) and _agree(self.region, other.region)


def _agree(one: str | None, other: str | None) -> bool:
    return one is None or other is None or one == other


def base_language(code: str | None) -> str:
    """The language of ``code`` alone (``pt_BR`` -> ``pt``, ``zh-Hant`` -> ``zh``, ``deu_Latn`` -> ``de``); ``""``
    when ``code`` is empty or not a language tag."""
    tag = LanguageTag.read(code)
    return tag.base if tag else ""


def pair_readings(text: str) -> list[tuple[LanguageTag, LanguageTag]]:
    """Every way ``text`` reads as a language pair ``SOURCE-TARGET`` (``en-de``, ``en_de``, ``eng_Latn-deu_Latn``):
    each cut at a separator that leaves a tag on both sides. More than one reading is ambiguous (``pt-BR-en``:
    ``pt-BR`` into ``en``, or ``pt`` into Breton in region EN)."""
    text = text.strip()
    readings = []
    for cut in _SEPARATOR.finditer(text):
        source, target = LanguageTag.read(text[: cut.start()]), LanguageTag.read(text[cut.end() :])
        if source is not None and target is not None:
            readings.append((source, target))
    return readings
