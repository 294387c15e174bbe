"""The held-out validation split: stratified by language and gender, counterfactual pairs kept together, seeded;
on synthetic rows and on MT-GenEval (../shared/data/mt-geneval) read back against its files; gendered words held out
with every unit that holds them."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from datasets import Dataset
from hypothesis import assume, given
from hypothesis import strategies as st
from pair_tables import PROPERTY, TABLES, ids_of, table
from testing_utils import MTGENEVAL

from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel, table_rows
from mtkit.data.heldout import heldout_split, word_holdout
from mtkit.data.pairs import unit_words
from mtkit.errors import UserError

LANGS = ["de", "es", "fr", "it", "pt"]
GENDERS = ["feminine", "masculine"]
needs_mtgeneval = pytest.mark.skipif(not MTGENEVAL.is_dir(), reason="../shared/data/mt-geneval is not there")


def unpaired(sizes: dict[tuple[str, str], int]) -> Dataset:
    """Gendered rows without counterfactuals, ``sizes[(lang, gender)]`` of each, interleaved."""
    rows = [(lang, g, k) for (lang, g), n in sizes.items() for k in range(n)]
    rows.sort(key=lambda r: (r[2], r[0], r[1]))  # interleave the strata, so no stratum is one block
    return Dataset.from_dict(
        {
            "source": [f"{lang} {g} {k}" for lang, g, k in rows],
            "target": [f"t {lang} {g} {k}" for lang, g, k in rows],
            "lang": [lang for lang, _, _ in rows],
            "gender": [g for _, g, _ in rows],
            "pair_id": [""] * len(rows),
            "counterfactual": [""] * len(rows),
        }
    )


def raw(gender: str, lang: str, side: str, split: str = "dev") -> list[str]:
    path = MTGENEVAL / "sentences" / split / f"geneval-sentences-{gender}-{split}.en_{lang}.{side}"
    return path.read_text(encoding="utf-8").splitlines()


def test_each_language_and_gender_keeps_its_share_on_both_sides():
    sizes = {("de", "feminine"): 37, ("de", "masculine"): 13, ("es", "feminine"): 8, ("es", "masculine"): 22}
    train, valid = heldout_split(unpaired(sizes), 0.2, seed=5)
    held, kept = Counter(zip(valid["lang"], valid["gender"])), Counter(zip(train["lang"], train["gender"]))
    for stratum, n in sizes.items():
        assert held[stratum] + kept[stratum] == n
        assert math.floor(0.2 * n) <= held[stratum] <= math.ceil(0.2 * n)  # within one row of the share
        assert held[stratum] >= 1 and kept[stratum] >= 1
    assert sorted([*train["source"], *valid["source"]]) == sorted(unpaired(sizes)["source"])  # a partition


def test_pairs_stay_together_and_unpaired_rows_are_drawn_alone():
    n_pairs, n_single = 30, 10
    rows = [(f"de:{i}", g) for i in range(n_pairs) for g in GENDERS] + [("", GENDERS[i % 2]) for i in range(n_single)]
    data = Dataset.from_dict(
        {
            "source": [f"s{i}" for i in range(len(rows))],
            "target": [f"t{i}" for i in range(len(rows))],
            "lang": ["de"] * len(rows),
            "gender": [g for _, g in rows],
            "pair_id": [p for p, _ in rows],
            "counterfactual": [""] * len(rows),
        }
    )
    train, valid = heldout_split(data, 0.3, seed=1)
    valid_pairs = Counter(p for p in valid["pair_id"] if p)
    assert set(valid_pairs.values()) == {2}  # both rows of every held-out pair
    assert not set(valid_pairs) & set(train["pair_id"])
    assert len(valid_pairs) == round(0.3 * n_pairs)
    assert len(train) + len(valid) == len(data)


@PROPERTY
@given(TABLES, st.integers(0, 2**16))
def test_no_id_is_split_across_tuning_selection_and_verdict(rows, seed):
    """A mitigation's cut of a random table (verdict held out, then selection): every row of an id, whatever its rows
    (a pair, one row, a duplicate, three), lies in one part, and the parts hold every row once."""
    data = table_rows(table(rows))
    try:
        rest, verdict = heldout_split(data, 0.4, seed)
        tuning, selection = heldout_split(rest, 0.2, seed + 1)
    except UserError as err:
        assert "leaves an empty split" in str(err)
        assume(False)  # too few units for three parts
    part = {int(source[1:]): name for name, rows_of in (("tuning", tuning), ("selection", selection),
            ("verdict", verdict)) for source in rows_of["source"]}  # fmt: skip
    assert sorted(part) == list(range(len(rows)))  # source s<i> is row i: every row in exactly one part
    for key, idx in ids_of(rows).items():
        assert len({part[i] for i in idx}) == 1, f"{key} split across {sorted({part[i] for i in idx})}"


def test_same_seed_same_split_other_seed_other_split_and_languages_independent():
    sizes = {(lang, g): 40 for lang in ("de", "it") for g in GENDERS}
    data = unpaired(sizes)
    first = list(heldout_split(data, 0.25, seed=11)[1]["source"])
    assert list(heldout_split(data, 0.25, seed=11)[1]["source"]) == first
    assert list(heldout_split(data, 0.25, seed=12)[1]["source"]) != first
    german = data.filter(lambda r: r["lang"] == "de")
    assert list(heldout_split(german, 0.25, seed=11)[1]["source"]) == [s for s in first if s.startswith("de ")]


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_fraction_outside_the_open_interval_is_refused(fraction):
    with pytest.raises(UserError, match=r"^--validation_fraction: must be between 0 and 1") as err:
        heldout_split(unpaired({("de", "feminine"): 10}), fraction, seed=1)
    assert "\n" not in str(err.value)


def test_too_little_data_for_two_sides_is_an_error():
    with pytest.raises(UserError, match=r"^--validation_fraction 0.1: leaves an empty split of 1 training pairs$"):
        heldout_split(unpaired({("de", "feminine"): 1}), 0.1, seed=1)


@needs_mtgeneval
def test_mtgeneval_split_against_the_files():
    cfg = DataConfig(mtgeneval_dir=str(MTGENEVAL), target_langs=",".join(LANGS), validation_fraction=0.25)
    data = load_parallel(cfg, seed=7)
    train, valid = data["train"], data["validation"]
    held, kept = Counter(zip(valid["lang"], valid["gender"])), Counter(zip(train["lang"], train["gender"]))
    for lang in LANGS:
        n = len(raw("feminine", lang, "en"))
        assert n == len(raw("masculine", lang, "en"))
        for g in GENDERS:
            assert held[(lang, g)] + kept[(lang, g)] == n and abs(held[(lang, g)] - 0.25 * n) <= 1 and kept[(lang, g)]
    assert not set(train["pair_id"]) & set(valid["pair_id"])
    files = {(lang, g): raw(g, lang, lang) for lang in LANGS for g in GENDERS}
    sources = {(lang, g): raw(g, lang, "en") for lang in LANGS for g in GENDERS}
    for row in valid.to_list():  # line i of its files, line i of the other gender as counterfactual
        lang, i = row["pair_id"].split(":")
        other = GENDERS[1 - GENDERS.index(row["gender"])]
        assert lang == row["lang"]
        assert row["source"] == sources[(lang, row["gender"])][int(i)]
        assert (row["target"], row["counterfactual"]) == (
            files[(lang, row["gender"])][int(i)],
            files[(lang, other)][int(i)],
        )
    capped = load_parallel(DataConfig(**{**vars(cfg), "max_train_samples": 100}), seed=7)
    assert len(capped["train"]) == 100  # capped after the split, which is unchanged
    assert list(capped["validation"]["pair_id"]) == list(valid["pair_id"])


@pytest.fixture(scope="module")
def two_splits(tmp_path_factory) -> Path:
    """MT-GenEval with the real dev files of de/it and a ``test`` split holding only German (first 30 lines)."""
    root = tmp_path_factory.mktemp("mtgeneval")
    (root / "sentences" / "dev").mkdir(parents=True)
    (root / "sentences" / "test").mkdir()
    for lang in ("de", "it"):
        for g in GENDERS:
            for side in ("en", lang):
                name = f"geneval-sentences-{g}-dev.en_{lang}.{side}"
                (root / "sentences" / "dev" / name).symlink_to(MTGENEVAL / "sentences" / "dev" / name)
                if lang == "de":
                    test_name = name.replace("-dev.", "-test.")
                    (root / "sentences" / "test" / test_name).write_text("\n".join(raw(g, lang, side)[:30]) + "\n")
    (root / "sentences" / "broken").mkdir()  # a split without one complete language
    return root


@needs_mtgeneval
def test_test_split_of_mtgeneval_is_loaded_when_present(two_splits):
    data = load_parallel(DataConfig(mtgeneval_dir=str(two_splits), target_langs="de", test_split="test"))
    assert len(data["train"]) + len(data["validation"]) == 2 * len(raw("feminine", "de", "en"))
    test = data["test"]
    assert len(test) == 60 and Counter(test["gender"]) == {"feminine": 30, "masculine": 30}
    assert test["target"][:30] == raw("feminine", "de", "de")[:30]
    assert test["counterfactual"][:30] == raw("masculine", "de", "de")[:30]
    for split in ("dev", "missing", None):  # the training split itself, or none there: no test split, no error
        assert "test" not in load_parallel(DataConfig(mtgeneval_dir=str(two_splits), test_split=split))
    with pytest.raises(UserError, match=r"^--target_langs: language 'it' not present for split test"):
        load_parallel(DataConfig(mtgeneval_dir=str(two_splits), target_langs="de,it", test_split="test"))
    with pytest.raises(UserError, match=r"^--test_split: .*broken holds no complete language$"):
        load_parallel(DataConfig(mtgeneval_dir=str(two_splits), test_split="broken"))


@needs_mtgeneval
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"target_lang": "kl"}, r"^--target_lang: language 'kl' not present for split dev"),
        ({"target_langs": "de,kl"}, r"^--target_langs: language 'kl' not present for split dev"),
        ({"target_lang": "xx"}, r"^--target_lang: 'xx' is not a language code"),
        ({"mtgeneval_split": "test"}, r"^--mtgeneval_split: split 'test' not present"),
        ({"validation_fraction": 0.0}, r"^--validation_fraction: must be between 0 and 1"),
        ({"mtgeneval_dir": "/nonexistent/mtgeneval"}, r"^--mtgeneval_dir: /nonexistent/mtgeneval is not a directory$"),
        ({"train_file": "x.csv"}, r"^data: give exactly one of .*--mtgeneval_dir$"),
    ],
)
def test_mtgeneval_errors_name_the_flag_in_one_line(kw, message):
    with pytest.raises(UserError, match=message) as err:
        load_parallel(DataConfig(**{"mtgeneval_dir": str(MTGENEVAL), **kw}))
    assert "\n" not in str(err.value)


# -- gendered words held out -----------------------------------------------------------------------------------------

VOCABULARY = [f"w{i}" for i in range(12)]


@given(
    units=st.lists(
        st.tuples(st.sets(st.sampled_from(VOCABULARY), max_size=3), st.sets(st.sampled_from(VOCABULARY), max_size=5)),
        min_size=1,
        max_size=30,
    ),
    fraction=st.floats(0.0, 0.9),
    seed=st.integers(0, 2**16),
)
def test_held_out_words_are_in_no_unit_that_is_kept(units, fraction, seed) -> None:
    """Every unit is kept or withheld (never both: an ID stays on one side), at most ``fraction`` of them withheld,
    and no held-out word occurs anywhere in a kept unit's references (an unseen word never reaches the tuning pairs);
    each withheld unit holds a held-out word; the same seed holds out the same words."""
    found = {f"u{i}": (frozenset(g), frozenset(g | t)) for i, (g, t) in enumerate(units)}
    words, withheld = word_holdout(found, fraction, seed)
    assert withheld <= set(found) and len(withheld) <= fraction * len(found) + 1e-9
    assert words <= set().union(*(g for g, _ in found.values()))
    for unit, (_, text) in found.items():
        assert (unit in withheld) == bool(text & words)
    assert word_holdout(found, fraction, seed) == (words, withheld)
    cheapest = min((sum(w in t for _, t in found.values()) for g, _ in found.values() for w in g), default=math.inf)
    assert words or cheapest > fraction * len(found)  # a word whose units fit the budget is always taken


def test_a_held_out_span_of_a_language_without_spaces_is_in_no_kept_unit() -> None:
    """Thai and Chinese pairs: the held-out words are the spans that differ in a pair (Thai ครับ/ค่ะ, Chinese 他/她),
    and a unit is withheld when any of its references holds one anywhere in its text (no spaces to split on)."""
    rows = [
        {"pair_id": "th:1", "lang": "th", "target": "ผมเป็นหมอครับ", "counterfactual": "ฉันเป็นหมอค่ะ"},
        {"pair_id": "th:2", "lang": "th", "target": "เขาเป็นครูครับ", "counterfactual": "เขาเป็นครูค่ะ"},
        {"pair_id": "zh:1", "lang": "zh", "target": "他是医生", "counterfactual": "她是医生"},
        {"pair_id": "zh:2", "lang": "zh", "target": "我的朋友是律师", "counterfactual": "我的朋友是律师"},
    ]
    units = unit_words(rows)
    assert units["zh:1"][0] == {"他"} and "医生" in units["zh:1"][1] and "他" not in units["zh:2"][1]
    words, withheld = word_holdout(units, 0.5, 0, candidates=["他"])
    assert (words, withheld) == ({"他"}, {"zh:1"})
    words, withheld = word_holdout(units, 0.5, 0, candidates=["ครับ"])
    assert (words, withheld) == ({"ครับ"}, {"th:1", "th:2"})
