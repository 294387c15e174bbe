"""Training data straight from MT-GenEval's layout (../shared/data/mt-geneval), and the held-out split."""

from collections import Counter

import pytest
from testing_utils import MTGENEVAL

from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel
from mtkit.errors import UserError

LANGS = ["de", "es", "fr", "it", "pt"]
pytestmark = pytest.mark.skipif(not MTGENEVAL.is_dir(), reason="../shared/data/mt-geneval is not there")


def raw(gender: str, lang: str, side: str) -> list[str]:
    path = MTGENEVAL / "sentences" / "dev" / f"geneval-sentences-{gender}-dev.en_{lang}.{side}"
    return path.read_text(encoding="utf-8").splitlines()


def load(seed: int = 1, **kw):
    return load_parallel(DataConfig(mtgeneval_dir=str(MTGENEVAL), target_langs=",".join(LANGS), **kw), seed=seed)


def test_every_language_and_gender_with_pairs_and_counterfactuals():
    data = load()
    rows = [*data["train"], *data["validation"]]
    expected = {(lang, g): len(raw(g, lang, "en")) for lang in LANGS for g in ("feminine", "masculine")}
    assert Counter((r["lang"], r["gender"]) for r in rows) == expected
    assert len(rows) == sum(expected.values()) == 12000
    fem, masc = raw("feminine", "it", "it"), raw("masculine", "it", "it")
    row = next(r for r in rows if r["pair_id"] == "it:17" and r["gender"] == "feminine")
    assert (row["source"], row["target"], row["counterfactual"]) == (raw("feminine", "it", "en")[17], fem[17], masc[17])
    assert "test" not in data  # only the dev split is there


def test_held_out_split_is_stratified_pair_preserving_and_seeded():
    data = load(validation_fraction=0.1)
    train, valid = data["train"], data["validation"]
    assert not set(train["pair_id"]) & set(valid["pair_id"])  # no counterfactual leaks across
    counts = Counter(zip(valid["lang"], valid["gender"]))
    for lang in LANGS:
        n_pairs = len(raw("feminine", lang, "en"))
        assert counts[(lang, "feminine")] == counts[(lang, "masculine")] == round(0.1 * n_pairs)
    assert load(validation_fraction=0.1)["validation"]["pair_id"] == valid["pair_id"]
    assert load(seed=2, validation_fraction=0.1)["validation"]["pair_id"] != valid["pair_id"]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"target_langs": "de,kl"}, "^--target_langs: language 'kl' not present"),
        ({"target_langs": "de,xx"}, "^--target_langs: 'xx' is not a language code"),
        ({"mtgeneval_split": "train"}, "^--mtgeneval_split: split 'train' not present"),
        ({"validation_fraction": 1.5}, "^--validation_fraction: must be between 0 and 1"),
    ],
)
def test_bad_flags_are_named(kw, message):
    args = {"mtgeneval_dir": str(MTGENEVAL), "target_langs": "de", **kw}
    with pytest.raises(UserError, match=message):
        load_parallel(DataConfig(**args))
