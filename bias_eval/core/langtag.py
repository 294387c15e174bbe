"""Language tags read one way, against the IANA language subtag registry (the ``langcodes`` package): a language,
then optionally a script (four letters: ``Hant``) and a region (two letters or three digits: ``BR``, ``419``), as BCP
47 orders them. ``_`` and ``-`` both separate subtags, and case does not matter: ``PT_br``, ``pt-BR`` and ``pt_BR``
are one tag. The language is written in its one BCP 47 form: the ISO 639-1 code where there is one, for ISO
639-2/B, ISO 639-3, withdrawn and macrolanguage-member codes alike (``ger``, ``deu`` -> ``de``; ``chi``, ``cmn`` ->
``zh``; ``nob`` -> ``nb``; ``iw`` -> ``he``), and a language the registry does not have (``xx``), a private-use code
(``qaa``..``qtz``) or a code that names no language (``und``, ``mul``, ``zxx``, ``mis``) is refused. Every layer reads
language codes through :class:`LanguageTag`, once, and carries the tag ``str()`` writes from then on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import langcodes

from bias_eval.core.errors import UserError

#: Registered codes that name no language: undetermined, multiple, no linguistic content, uncoded.
NO_LANGUAGE = frozenset({"und", "mul", "zxx", "mis"})
#: What a language tag looks like, for messages.
FORMS = "a registered ISO 639 language, optionally with a script and/or region: de, deu, ger, pt-BR, zh_Hant, yue"
_SHAPE = re.compile(r"([A-Za-z]{2,3})(?:[_-]([A-Za-z]{4}))?(?:[_-]([A-Za-z]{2}|[0-9]{3}))?")
_SEPARATOR = re.compile(r"[_-]")
#: BCP 47's private-use subtags: languages qaa..qtz, scripts Qaaa..Qabx, regions AA, QM..QZ, XA..XZ, ZZ
_PRIVATE = tuple(re.compile(p) for p in (r"q[a-t][a-z]", r"qa[a-b][a-x]", r"aa|q[m-z]|x[a-z]|zz"))


@functools.cache
def _read(text: str) -> tuple[str, str | None, str | None] | None:
    """``(language, script, region)`` of a tag spelled ``text`` (stripped), or ``None``; cached: tables and
    per-sentence tokenizer choices read the same few tags many times."""
    shape = _SHAPE.fullmatch(text)
    if shape is None:
        return None
    base, script, region = shape.groups()
    if any(part and private.fullmatch(part.lower()) for part, private in zip((base, script, region), _PRIVATE)):
        return None
    try:
        language = langcodes.Language.get(base, normalize=True).prefer_macrolanguage()
    except langcodes.LanguageTagError:
        return None
    if not language.is_valid() or language.language in (None, *NO_LANGUAGE) or language.variants:
        return None
    script = script.title() if script else language.script  # a deprecated code's own script (sh -> sr-Latn)
    if script is not None and not langcodes.Language.make(script=script).is_valid():
        return None
    if region is not None and not langcodes.Language.make(territory=region.upper()).is_valid():
        return None
    return language.language, script, region.upper() if region else language.territory  # prs -> fa-AF


@dataclass(frozen=True)
class LanguageTag:
    """One language tag: ``base`` (the language's BCP 47 code: ISO 639-1 where there is one, ``deu`` -> ``de``;
    else ISO 639-3, lower case), ``script`` (title case, ``Hant``) and ``region`` (upper case, ``BR``), each ``None``
    when not given. ``str()`` writes it as BCP 47 does (``zh-Hant-TW``), the one spelling every layer carries."""

    base: str
    script: str | None = None
    region: str | None = None

    @classmethod
    def read(cls, text: object) -> LanguageTag | None:
        """The tag ``text`` spells (surrounding spaces ignored), or ``None`` when it is not a language tag."""
        if not isinstance(text, str) or not text.strip().isascii():
            return None
        found = _read(text.strip())
        return None if found is None else cls(*found)

    @classmethod
    def parse(cls, text: object, where: str = "language") -> LanguageTag:
        """:meth:`read`, or a one-line :class:`UserError` naming ``where`` (a flag, a file and line)."""
        tag = cls.read(text)
        if tag is None:
            raise UserError(f"{where}: {text!r} is not a language code ({FORMS})")
        return tag

    def __str__(self) -> str:
        return "-".join(part for part in (self.base, self.script, self.region) if part)

    @property
    def written_script(self) -> str:
        """The script the tag names, else the one its language (and region) is most likely written in, by CLDR's
        likely subtags (``yue`` -> ``Hant``, ``zh`` -> ``Hans``, ``zh-TW`` -> ``Hant``, ``ja`` -> ``Jpan``)."""
        return self.script or _likely_script(self.base, self.region)

    @property
    def spaced(self) -> bool:
        """Whether its script separates words with spaces (not Chinese, Japanese, Thai, Lao, Khmer, Burmese, ...)."""
        return self.written_script not in UNSPACED_SCRIPTS

    def covers(self, other: LanguageTag) -> bool:
        """Whether ``other`` is this tag or a variant of it: the same language, and the script and region this tag
        names, if it names them (``pt`` covers ``pt-BR``; ``pt-BR`` covers neither ``pt`` nor ``pt-PT``)."""
        return self.base == other.base and self.script in (None, other.script) and self.region in (None, other.region)

    def overlaps(self, other: LanguageTag) -> bool:
        """Whether some tag is covered by both (``pt`` and ``pt-BR``; ``zh-Hant`` and ``zh-TW``)."""
        return self.base == other.base and _agree(self.script, other.script) and _agree(self.region, other.region)


#: ISO 15924 scripts written without spaces between words: Han (simplified, traditional), Japanese (and its kana),
#: Thai, Lao, Khmer, Burmese, Tibetan and the other scripts of Unicode's "complex context" line breaking.
UNSPACED_SCRIPTS = frozenset(
    "Hani Hans Hant Jpan Hira Kana Hrkt Thai Laoo Khmr Mymr Tibt Lana Tavt Talu Bali Java".split()
)


@functools.cache
def _likely_script(base: str, region: str | None) -> str:
    return langcodes.Language.make(language=base, territory=region).maximize().script or "Zyyy"


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
