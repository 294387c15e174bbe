"""The splits of a mitigation run from MT-GenEval's layout: whole counterfactual pairs in exactly one of tuning,
selection and verdict, the verdict from a split of its own or held out, the replay share, and the refusals."""

import pytest
from datasets import Dataset, DatasetDict
from testing_utils import MTGENEVAL

from mtkit.config import parse_config
from mtkit.data.mitigation_data import mitigation_splits
from mtkit.errors import UserError

pytestmark = pytest.mark.skipif(not MTGENEVAL.is_dir(), reason="../shared/data/mt-geneval is not there")


def general(n: int = 3000) -> DatasetDict:
    rows = {"source": [f"a {i}" for i in range(n)], "target": [f"b {i}" for i in range(n)], "lang": ["es"] * n}
    return DatasetDict({"train": Dataset.from_dict(rows), "validation": Dataset.from_dict(rows).select(range(5))})


def config(*extra: str):
    return parse_config(["--train_file", "x.jsonl", "--target_lang", "es", "--model_name_or_path", "m",
                         "--gender_data", str(MTGENEVAL), *extra])  # fmt: skip


def units(rows: Dataset) -> set[str]:
    return {f"{r['source']}|{r['pair_id']}" for r in rows}


def test_pairs_go_whole_into_one_part_and_replay_keeps_its_share() -> None:
    raw = mitigation_splits(config("--verdict_split", "none", "--replay_ratio", "0.25"), general())
    tuning, selection, verdict = raw["tuning"], raw["validation"], raw["verdict"]
    pair_ids = [set(part["pair_id"]) for part in (tuning, selection, verdict)]
    assert not (pair_ids[0] & pair_ids[1] or pair_ids[0] & pair_ids[2] or pair_ids[1] & pair_ids[2])
    for part in (tuning, selection, verdict):  # both genders of every pair on the same side
        assert sorted(part["gender"]).count("feminine") == sorted(part["gender"]).count("masculine")
    dev = (MTGENEVAL / "sentences/dev/geneval-sentences-feminine-dev.en_es.en").read_text().splitlines()
    assert len(tuning) + len(selection) + len(verdict) == 2 * len(dev)
    assert abs(len(verdict) / (2 * len(dev)) - 0.4) < 0.01  # --verdict_fraction's default
    assert len(raw["train"]) - len(tuning) == round(0.25 / 0.75 * len(tuning))
    assert set(raw["train"]["source"]) >= set(tuning["source"])
    assert not set(raw["train"]["source"]) & (set(selection["source"]) | set(verdict["source"]))


def test_the_verdict_split_of_its_own_is_never_tuned_on(tmp_path) -> None:
    for split, lines in (("dev", slice(0, 60)), ("test", slice(60, 90))):  # a layout with both splits
        for gender in ("feminine", "masculine"):
            for side in ("en", "es"):
                name = f"geneval-sentences-{gender}-{{}}.en_es.{side}"
                text = (MTGENEVAL / "sentences/dev" / name.format("dev")).read_text().splitlines()[lines]
                folder = tmp_path / "sentences" / split
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name.format(split)).write_text("".join(t + "\n" for t in text))
    cfg = config("--replay_ratio", "0", "--gender_data", str(tmp_path))  # gender_split dev, verdict_split test
    raw = mitigation_splits(cfg, general())
    test = (tmp_path / "sentences/test/geneval-sentences-feminine-test.en_es.en").read_text().splitlines()
    assert set(raw["verdict"]["source"]) >= set(test) and len(raw["verdict"]) == 2 * len(test) == 60
    assert len(raw["train"]) == len(raw["tuning"]) and len(raw["tuning"]) + len(raw["validation"]) == 120


def test_refusals() -> None:
    cfg = parse_config(["--train_file", "x.jsonl", "--target_lang", "es", "--gender_data", str(MTGENEVAL)])
    with pytest.raises(UserError, match="--model_name_or_path"):
        mitigation_splits(cfg, general())
    with pytest.raises(UserError, match="--gender_data .*: no such file"):
        mitigation_splits(config("--gender_data", "nowhere.jsonl"), general())
    with pytest.raises(UserError, match="--replay_ratio"):
        config("--replay_ratio", "1")
