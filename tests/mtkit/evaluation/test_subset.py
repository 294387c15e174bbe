"""bias_report.py --max_samples: a quick look at MT-GenEval in whole feminine/masculine pairs, languages in turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from geneval_helpers import geneval_file, read_plain

from mtkit.cli.bias_report import main
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.errors import UserError
from mtkit.evaluation.subset import gendered_subset


def test_whole_pairs_balanced_across_languages(small_geneval: Path) -> None:
    data = load_mtgeneval(small_geneval, "test", ["de", "es"])
    subset = gendered_subset(data, 10)
    kept = {lang: len(ld.feminine.sources) for lang, ld in subset.languages.items()}
    assert sum(kept.values()) * 2 == 10 and abs(kept["de"] - kept["es"]) <= 1  # 5 pairs: 3 and 2
    for lang, m in kept.items():
        ld = subset.languages[lang]
        assert subset.languages[lang].paired and len(ld.masculine.sources) == m
        for gender in ("feminine", "masculine"):  # the first m lines of each file: line i with its counterpart i
            sources = read_plain(geneval_file(small_geneval, lang, gender, "en", "test"))[:m]
            references = read_plain(geneval_file(small_geneval, lang, gender, lang, "test"))[:m]
            assert ld.side(gender).sources == sources and ld.side(gender).references == references
        assert ld.feminine.counterfactuals == ld.masculine.references  # the pairs still line up
    assert gendered_subset(data, None) is data and gendered_subset(data, 10_000) is data
    with pytest.raises(UserError, match=r"^--max_samples 3: fewer than one feminine and one masculine sentence per"):
        gendered_subset(data, 3)


def test_the_flag_needs_a_model_and_a_count(small_geneval: Path, tmp_path: Path, capsys) -> None:
    hyps = tmp_path / "hyps"
    hyps.mkdir()
    for gender in ("feminine", "masculine"):  # every sentence: --hyp_dir files hold them all
        lines = read_plain(geneval_file(small_geneval, "de", gender, "de", "test"))
        (hyps / f"de.{gender}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "de", "--hyp_dir", str(hyps)]
    with pytest.raises(SystemExit) as end:
        main([*args, "--out", str(tmp_path / "o"), "--max_samples", "6"])
    assert end.value.code == 2 and capsys.readouterr().err.strip() == "error: --max_samples: only used with --model"
    with pytest.raises(SystemExit) as end:
        main([*args, "--out", str(tmp_path / "o"), "--max_samples", "0"])
    assert end.value.code == 2 and "--max_samples: must be > 0, got 0" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
