"""The splits of a mitigation run from MT-GenEval's layout: whole counterfactual pairs in exactly one of tuning,
selection and verdict, the verdict from a split of its own or held out, gendered words held out of tuning and
selection, the replay share (alone in the control arm), and the refusals."""

from dataclasses import replace

import pytest
from datasets import Dataset, DatasetDict
from testing_utils import MTGENEVAL

from mtkit.config import parse_config
from mtkit.data.mitigation_data import mitigation_splits, replay, write_pairs_layout
from mtkit.errors import UserError
from mtkit.evaluation.unseen import tuned_words, unseen_units

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
    both = dev + (MTGENEVAL / "sentences/dev/geneval-sentences-masculine-dev.en_es.en").read_text().splitlines()
    repeated = {x for x in both if both.count(x) > 1}  # MT-GenEval has 2 pairs twice, under other IDs
    assert set(raw["train"]["source"]) & (set(selection["source"]) | set(verdict["source"])) <= repeated


def test_the_verdict_split_of_its_own_is_never_tuned_on(tmp_path) -> None:
    for split, lines in (("dev", slice(0, 60)), ("test", slice(60, 90))):  # a layout with both splits
        for gender in ("feminine", "masculine"):
            for side in ("en", "es"):
                name = f"geneval-sentences-{gender}-{{}}.en_es.{side}"
                text = (MTGENEVAL / "sentences/dev" / name.format("dev")).read_text().splitlines()[lines]
                folder = tmp_path / "sentences" / split
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name.format(split)).write_text("".join(t + "\n" for t in text))
    cfg = config("--replay_ratio", "0", "--control", "none", "--gender_data", str(tmp_path), "--unseen_fraction", "0")
    raw = mitigation_splits(cfg, general())
    test = (tmp_path / "sentences/test/geneval-sentences-feminine-test.en_es.en").read_text().splitlines()
    assert set(raw["verdict"]["source"]) >= set(test) and len(raw["verdict"]) == 2 * len(test) == 60
    assert len(raw["train"]) == len(raw["tuning"]) and len(raw["tuning"]) + len(raw["validation"]) == 120


def test_held_out_words_are_in_no_tuning_or_selection_pair_and_the_control_trains_on_the_replay_alone() -> None:
    """MT-GenEval's marked words: about --unseen_fraction of the pairs hold a word held out; they are in the verdict,
    no tuning or selection reference holds that word, and every ID is in one part; the control arm's replay is the
    mitigated arm's, the same rows."""
    cfg = config("--verdict_split", "none", "--target_lang", "de")
    raw = mitigation_splits(cfg, general())
    parts = [set(raw[name]["pair_id"]) for name in ("tuning", "validation", "verdict")]
    assert not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
    seen = tuned_words(raw["tuning"].to_list() + raw["validation"].to_list())
    unseen = unseen_units(raw["verdict"].to_list(), seen)
    assert 0.1 < len(unseen) / sum(len(p) for p in parts) and raw["verdict"]["words"][0]  # the marks, read
    control = replay(replace(cfg, mitigation=replace(cfg.mitigation, tuning_pairs=False)), general()["train"],
                     len(raw["tuning"]))  # fmt: skip
    assert control["source"] == raw["train"]["source"][len(raw["tuning"]) :]  # the control arm's: the same rows


def test_refusals() -> None:
    cfg = parse_config(["--train_file", "x.jsonl", "--target_lang", "es", "--gender_data", str(MTGENEVAL)])
    with pytest.raises(UserError, match="--model_name_or_path"):
        mitigation_splits(cfg, general())
    with pytest.raises(UserError, match="--gender_data .*: no such file"):
        mitigation_splits(config("--gender_data", "nowhere.jsonl"), general())
    with pytest.raises(UserError, match="--replay_ratio"):
        config("--replay_ratio", "1")


def test_a_control_without_replay_and_more_unseen_than_verdict_pairs_are_refused(tmp_path) -> None:
    path = gendered_table(tmp_path / "pairs.csv", {str(i): "fm" for i in range(20)})
    with pytest.raises(UserError, match="--replay_ratio 0: --control replay trains a control on the replay alone"):
        mitigation_splits(config("--gender_data", path, "--replay_ratio", "0"), general())
    with pytest.raises(UserError, match="--unseen_fraction 0.4: must be below --verdict_fraction 0.4"):
        mitigation_splits(config("--gender_data", path, "--unseen_fraction", "0.4"), general())


def gendered_table(path, units: dict[str, str]) -> str:
    """A Spanish CSV with an ``ID`` column: each id's rows, one a letter of its genders (``"fm"``: a pair)."""
    lines = ["ID,source,target,gender"]
    lines += [f"{i},s {i} {k},t {i} {k},{g}" for i, genders in units.items() for k, g in enumerate(genders)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_ids_that_are_no_pair_stay_whole_are_named_and_never_judged(tmp_path, capsys) -> None:
    units = {str(i): "fm" for i in range(40)} | {f"x{i}": ("ffm", "m", "mm", "fmf")[i % 4] for i in range(12)}
    path = gendered_table(tmp_path / "pairs.csv", units)
    raw = mitigation_splits(
        config("--gender_data", path, "--verdict_split", "none", "--replay_ratio", "0", "--control", "none"), general()
    )
    notes = [line for line in capsys.readouterr().err.splitlines() if "not exactly one feminine" in line]
    assert notes == [
        f"note: {path}: 12 ID(s) not exactly one feminine and one masculine row (27 rows: es:x0, es:x1, es:x2, es:x3, "
        "es:x4, ...): in no pair, out of the paired figures; each ID's rows kept together in every split"
    ]
    parts = {name: {s.split()[1] for s in raw[name]["source"]} for name in ("tuning", "validation", "verdict")}
    assert sum(len(raw[name]) for name in parts) == sum(len(g) for g in units.values())
    for i, genders in units.items():  # every row of an id in one part
        holders = [name for name, ids in parts.items() if i in ids]
        assert len(holders) == 1
        assert sum(s.split()[1] == i for s in raw[holders[0]]["source"]) == len(genders)
    layout = tmp_path / "layout"
    order = write_pairs_layout(raw["verdict"], layout)  # what the verdict reports on: its complete pairs alone
    verdict_pairs = sorted(i for i in parts["verdict"] if units[i] == "fm")
    assert list(order) == ["es"] and verdict_pairs
    written = (layout / "sentences/test/geneval-sentences-feminine-test.en_es.en").read_text().splitlines()
    assert sorted(s.split()[1] for s in written) == verdict_pairs
    assert [unit.removeprefix("es:") for unit in order["es"]] == [s.split()[1] for s in written]  # line by line


def test_a_table_without_a_complete_pair_is_refused_before_training(tmp_path) -> None:
    path = gendered_table(tmp_path / "odd.csv", {"1": "ffm", "2": "m", "3": "mm", "4": "f", "5": "ff"})
    with pytest.raises(UserError) as err:
        mitigation_splits(config("--gender_data", path, "--replay_ratio", "0", "--control", "none"), general())
    assert str(err.value) == (
        f"--gender_data {path}: no complete pair (a feminine and a masculine row sharing an ID, and no other row)"
    )
    one = gendered_table(tmp_path / "one.csv", {"1": "fm", "2": "ffm", "3": "m", "4": "mm", "5": "f", "6": "ff"})
    with pytest.raises(UserError, match=r"^--(verdict|selection)_fraction 0\.\d+: no complete pair of --gender_data "):
        mitigation_splits(
            config("--gender_data", one, "--replay_ratio", "0", "--control", "none"), general()
        )  # one pair: not in both


@pytest.mark.parametrize("asked", ["pt-BR", "pt_br", "zh-Hant", "ZH_hant"])
def test_a_region_or_script_tagged_language_reads_back_the_pairs_it_wrote(tmp_path, asked) -> None:
    """The verdict pairs of a language with a region or a script are written under the name the verdict's report
    then reads (MT-GenEval's layout, read by ``load_mtgeneval``), however the language was spelled."""
    from mtkit.data.mtgeneval import load_mtgeneval

    lang = asked.replace("_", "-")
    lines = ["ID,source,target,gender,lang"]
    lines += [f"{i},s {i} {g},t {i} {g},{g},{lang}" for i in range(40) for g in ("f", "m")]
    (tmp_path / "pairs.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cfg = parse_config(["--train_file", "x.jsonl", "--target_langs", asked, "--model_name_or_path", "m",
                        "--gender_data", str(tmp_path / "pairs.csv"), "--verdict_split", "none", "--replay_ratio", "0",
                        "--control", "none"])  # fmt: skip
    raw = mitigation_splits(cfg, general())
    order = write_pairs_layout(raw["verdict"], tmp_path / "layout")
    data = load_mtgeneval(tmp_path / "layout", "test", list(order))  # what the verdict's reports load
    tag = {"pt": "pt-BR", "zh": "zh-Hant"}[asked[:2].lower()]
    assert list(order) == list(data.languages) == [tag]
    written = [s.split()[1] for s in data.languages[tag].feminine.sources]
    assert written == [unit.split(":")[-1] for unit in order[tag]]  # line by line, as the verdict reads them
