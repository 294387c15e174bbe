"""Counterfactual pairs of gendered rows, found one way for training, its validation and the bias report.

Two rows are a counterfactual pair when they share an id and a target language and one is feminine, the other
masculine. A pair's rows carry one ``pair_id`` (``<lang>:<id>``) and each the other's reference as its
``counterfactual`` when no column gives one; a row in no pair keeps ``<lang>:row<i>`` to itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from mtkit.data.gendered import GENDERS, LanguageData, Side


def table_pairs(table) -> tuple[list[str], list[str]]:
    """Each row's pair id and counterfactual reference of a gendered :class:`~mtkit.data.tables.Table`
    (:func:`pair_rows` on its columns; rows without an id column pair by nothing but their own)."""
    return pair_rows(table.lang, table.gender, table.ids or [""] * len(table.lang), table.target, table.counterfactual)


def pair_rows(
    langs: Sequence[str],
    genders: Sequence[str],
    ids: Sequence[str],
    targets: Sequence[str],
    counterfactuals: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """``(pair_ids, counterfactuals)`` of rows given by their languages, genders, ids (``""``: none), references and
    counterfactual references (``""`` or ``None``: none given)."""
    given = list(counterfactuals) if counterfactuals is not None else [""] * len(langs)
    members: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (lang, row_id) in enumerate(zip(langs, ids)):
        if row_id:
            members[(lang, row_id)].append(i)
    pair_ids = [f"{lang}:row{i}" for i, lang in enumerate(langs)]
    out = [value or "" for value in given]
    for (lang, row_id), idx in members.items():
        if len(idx) == 2 and {genders[i] for i in idx} == set(GENDERS):
            for i, j in (idx, idx[::-1]):
                pair_ids[i] = f"{lang}:{row_id}"
                out[i] = out[i] or targets[j]
    return pair_ids, out


def language_data(
    lang: str, rows: Sequence[Mapping[str, str]], origin: str
) -> tuple[LanguageData, dict[str, list[int]]]:
    """One language's gendered rows (``source``, ``target``, ``gender``, ``pair_id``, ``counterfactual``) as
    ``bias_eval`` data, and which rows make each gender's side, in order.

    When every row is in a complete pair (one ``pair_id``, both genders), the sides are paired: line ``i`` of each
    is one pair, in the order of the feminine rows. Otherwise each side holds its gender's rows in their order.
    Counterfactuals are kept when every row of a side has one."""
    by_pair: dict[str, dict[str, int]] = defaultdict(dict)
    for i, row in enumerate(rows):
        by_pair[row.get("pair_id") or f"row{i}"][row["gender"]] = i
    complete = sorted((p for p in by_pair.values() if len(p) == 2), key=lambda p: p["feminine"])
    paired = bool(complete) and len(complete) * 2 == len(rows)
    if paired:
        order = {g: [p[g] for p in complete] for g in GENDERS}
    else:
        order = {g: [i for i, r in enumerate(rows) if r["gender"] == g] for g in GENDERS}

    def side(g: str) -> Side:
        idx = order[g]
        counterfactuals = [rows[i].get("counterfactual") or "" for i in idx]
        return Side(
            sources=[rows[i]["source"] for i in idx],
            references=[rows[i]["target"] for i in idx],
            counterfactuals=counterfactuals if all(counterfactuals) else None,
            keywords=None,
            origin=f"{origin} ({lang}, {g})",
        )

    return LanguageData(lang, feminine=side("feminine"), masculine=side("masculine"), paired=paired), order
