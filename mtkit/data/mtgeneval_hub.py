"""The hub copy of MT-GenEval (``gsarti/mt_geneval``: configs ``sentences_en_<lang>``, ``context_en_<lang>``),
read with ``datasets.load_dataset`` and converted to :class:`~bias_eval.mtgeneval.gendered.GenderedData`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bias_eval.core.textio import normal_lines
from bias_eval.mtgeneval.gendered import GENDERS, SEP, ContextSet, GenderedData, LanguageData, Side, annotated_keywords
from mtkit.errors import UserError

HUB_ID = "gsarti/mt_geneval"
HUB_SPLITS = {"dev": "train", "test": "test"}  # the hub copy calls the dev split "train"
HUB_LANGS = ("ar", "de", "es", "fr", "hi", "it", "pt", "ru")


def language_from_hub_records(
    lang: str,
    records: Iterable[Mapping[str, str]],
    context_records: Iterable[Mapping[str, str]] | None,
    origin: str,
) -> LanguageData:
    """A :class:`LanguageData` from rows of the hub configs ``sentences_en_<lang>``, ``context_en_<lang>``."""
    rows = list(records)
    if not rows:
        raise UserError(f"{origin}: no rows for {lang}")
    try:
        src = {g: normal_lines(r[f"source_{g}"] for r in rows) for g in GENDERS}
        ref = {g: normal_lines(r[f"reference_{g}"] for r in rows) for g in GENDERS}
        ann = {g: [r.get(f"reference_{g}_annotated") for r in rows] for g in GENDERS}
    except KeyError as err:
        raise UserError(f"{origin}: rows lack the column {err.args[0]!r}") from None
    keywords: dict[str, list[list[str]] | None] = {}
    for g in GENDERS:
        complete = all(isinstance(a, str) for a in ann[g])
        keywords[g] = [annotated_keywords(a) for a in ann[g]] if complete else None
    other = {"feminine": "masculine", "masculine": "feminine"}
    sides = {g: Side(src[g], ref[g], ref[other[g]], keywords[g], f"{origin} reference_{g}") for g in GENDERS}
    ctx = None
    if context_records is not None:
        crow = list(context_records)
        try:
            ctx = ContextSet(
                sources=[f"{r['context']} {SEP} {r['source']}" for r in crow],
                original=normal_lines(r["reference_original"] for r in crow),
                flipped=normal_lines(r["reference_flipped"] for r in crow),
                origin=f"{origin} context_en_{lang}",
            )
        except KeyError as err:
            raise UserError(f"{origin}: context rows lack the column {err.args[0]!r}") from None
    return LanguageData(lang, sides["feminine"], sides["masculine"], paired=True, context=ctx)


def _hub_rows(hub_id: str, config: str, split: str) -> list[dict[str, str]]:
    """Rows of one hub config; tries the dataset itself, then its auto-converted parquet branch."""
    from datasets import load_dataset

    errors = []
    for kwargs in ({"name": config}, {"data_dir": config, "revision": "refs/convert/parquet"}):
        try:
            return [dict(row) for row in load_dataset(hub_id, split=split, **kwargs)]
        except Exception as err:  # noqa: BLE001 - any hub failure (offline, removed script) is reported below
            errors.append(str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__)
    raise UserError(f"--hub: cannot load {hub_id} config {config} split {split}: {errors[0]}")


def load_hub(
    split: str, langs: Sequence[str] | None = None, context: bool = False, hub_id: str = HUB_ID
) -> GenderedData:
    """Load the hub copy of MT-GenEval (configs ``sentences_en_<lang>``, ``context_en_<lang>``)."""
    if split not in HUB_SPLITS:
        raise UserError(f"--split: {split!r} is not one of {', '.join(HUB_SPLITS)}")
    wanted = sorted(set(langs)) if langs else list(HUB_LANGS)
    for lang in wanted:
        if lang not in HUB_LANGS:
            raise UserError(f"--target_langs: language {lang!r} not in {hub_id} (available: {' '.join(HUB_LANGS)})")
    languages = {}
    for lang in wanted:
        rows = _hub_rows(hub_id, f"sentences_en_{lang}", HUB_SPLITS[split])
        crow = _hub_rows(hub_id, f"context_en_{lang}", HUB_SPLITS[split]) if context else None
        languages[lang] = language_from_hub_records(lang, rows, crow, f"{hub_id}:sentences_en_{lang}")
    return GenderedData(name=f"MT-GenEval {split} ({hub_id})", split=split, languages=languages)
