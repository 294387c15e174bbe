"""Random gendered tables for the property tests of pairing (:mod:`mtkit.data.pairs`): ids drawn from a few, so
that pairs, singletons, duplicates and triples all occur, in several languages, some rows without an id; and what
their pairs are, counted directly."""

from __future__ import annotations

from collections import Counter, defaultdict

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mtkit.data.tables import Table

GENDERS = ("feminine", "masculine")
#: a row of a random table: (target language, id or "" for none, gender)
ROW = st.tuples(
    st.sampled_from(["de", "es", "fr"]), st.sampled_from(["", *map(str, range(8))]), st.sampled_from(GENDERS)
)
TABLES = st.lists(ROW, min_size=1, max_size=40)
#: no example database written into the working tree; no deadline on two shared cores
PROPERTY = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

Row = tuple[str, str, str]


def table(rows: list[Row]) -> Table:
    """The rows as the table reader returns them: row ``i`` has source ``s<i>`` and reference ``t<i>``."""
    return Table(
        where="random.csv",
        lines=[i + 2 for i in range(len(rows))],
        source=[f"s{i}" for i in range(len(rows))],
        target=[f"t{i}" for i in range(len(rows))],
        lang=[lang for lang, _, _ in rows],
        gender=[gender for _, _, gender in rows],
        ids=[row_id for _, row_id, _ in rows],
    )


def ids_of(rows: list[Row]) -> dict[str, list[int]]:
    """``<lang>:<id>`` -> its rows, in order of their first row; rows without an id are in none."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, (lang, row_id, _) in enumerate(rows):
        if row_id:
            out[f"{lang}:{row_id}"].append(i)
    return out


def complete_ids(rows: list[Row]) -> set[str]:
    """The ids of exactly one feminine and one masculine row."""
    one_each = Counter(GENDERS)
    return {key for key, idx in ids_of(rows).items() if Counter(rows[i][2] for i in idx) == one_each}
