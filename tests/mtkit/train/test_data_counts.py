"""What a run trains on is what it says: one table trained, validated and bias-reported gives one count per language
in the log, ``data_counts.json`` beside ``config.yaml``, the model card and the report."""

from __future__ import annotations

import csv
import json

from testing_utils import train_in_process

from mtkit.cli.bias_report import main as report_main

PAIRS = {  # lang -> feminine and masculine reference of pair i, and the pairs
    "de": ("Die Lehrerin {i} kam.", "Der Lehrer {i} kam.", 5),
    "es": ("La doctora {i} llegó.", "El doctor {i} llegó.", 3),
    "fr": ("La médecin {i} est venue.", "Le médecin {i} est venu.", 2),  # in the file, not in the run
}


def test_one_table_gives_one_count_per_language_everywhere(family_dir, tmp_path):
    table = tmp_path / "gendered.tsv"
    with table.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["ID", "input_to_translate", "label", "gender", "language_pair"])
        for lang, (feminine, masculine, n) in PAIRS.items():
            for i in range(n):
                writer.writerow([i, f"The doctor {i} came, she said.", feminine.format(i=i), "f", f"en_{lang}"])
                writer.writerow([i, f"The doctor {i} came, he said.", masculine.format(i=i), "m", f"en_{lang}"])
    expected = {"de": 10, "es": 6}  # both genders of each pair
    out = tmp_path / "run"
    res = train_in_process(
        "--train_file", str(table), "--validation_file", str(table), "--target_langs", "de,es",
        "--model_name_or_path", str(family_dir("nllb")), "--output_dir", str(out), "--max_steps", "1",
        "--max_tokens", "512", "--eval_steps", "1", "--num_beams", "1", "--max_new_tokens", "4",
        "--test_split", "none", "--mixed_precision", "no", "--report_to", "none", "--disable_tqdm",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    counts = json.loads((out / "data_counts.json").read_text(encoding="utf-8"))
    assert counts == {"train": expected, "validation": expected, "left_out": {str(table): {"fr": 4}}}
    said = "train: de 10, es 6; validation: de 10, es 6; left out of " + f"{table}: fr 4"
    assert f"16 training pairs ({said})" in res.stdout
    assert said in (out / "final" / "README.md").read_text(encoding="utf-8")

    hyps = tmp_path / "hyps"
    hyps.mkdir()
    for lang, (feminine, masculine, n) in PAIRS.items():
        for gender, reference in (("feminine", feminine), ("masculine", masculine)):
            lines = "".join(reference.format(i=i) + "\n" for i in range(n))
            (hyps / f"{lang}.{gender}.txt").write_text(lines, encoding="utf-8")
    argv = ["--data", str(table), "--target_langs", "de", "es", "--hyp_dir", str(hyps), "--out", str(tmp_path / "r")]
    assert report_main([*argv, "--bootstrap_samples", "0"]) == 0
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text(encoding="utf-8"))
    assert {lang: m["n"] for lang, m in metrics["languages"].items()} == expected
