"""scripts/benchmark.py translate end to end on the ``tiny_run`` model (speed figures are outputs, not asserted)."""

import json

import pytest
import sacrebleu
from testing_utils import FAST_RUN, MULTI30K, read_gz_lines, run_script, script_in_process, system_library
from transformers import GenerationConfig

from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings


def benchmark(*args: str):
    """``scripts/benchmark.py ARGS`` by its ``main`` in this process; the script's own process (and the children it
    starts): test_allocator_benchmark_times_each_installed_allocator_in_its_own_process."""
    from benchmark import main

    return script_in_process(main, *args)


# slow (45 s on 2 cores): the default tier keeps the decoding benchmark's run (the same harness and engines, with
# BLEU and the gender figures) and the step benchmark's; this adds the translation systems' speed table
@pytest.mark.slow
def test_translate_benchmark_reports_every_system(tiny_run, tmp_path):
    final, report = tiny_run / "final", tmp_path / "bench.json"
    src, ref = MULTI30K / "test_2016_flickr.en.gz", MULTI30K / "test_2016_flickr.de.gz"
    res = run_script(
        "benchmark.py", "translate", "--model", str(final), "--source", str(src), "--reference", str(ref),
        "--max_sentences", "24", "--batch_size", "8", "--beam_size", "2", "--max_new_tokens", "20",
        "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    record = json.loads(report.read_text())
    systems = {r["system"]: r for r in record["systems"]}
    assert list(systems) == [
        "hf generate, no bound (20 tokens)", "hf generate", "ctranslate2 float32", "ctranslate2 int8"
    ]  # fmt: skip
    assert systems["hf generate"]["speedup"] == 1.0 and record["settings"]["sentences"] == 24
    for r in systems.values():
        assert r["sent_s"] == pytest.approx(24 / r["seconds"])
        assert r["speedup"] == pytest.approx(systems["hf generate"]["seconds"] / r["seconds"])
    # the baseline's BLEU is sacreBLEU of the library's own translations with those settings
    penalty = GenerationConfig.from_pretrained(final).length_penalty
    settings = DecodingSettings(num_beams=2, batch_size=8, max_new_tokens=20, length_penalty=penalty)
    hyps = Translator(final, device="cpu").translate(read_gz_lines(src, 24), settings)
    assert systems["hf generate"]["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [read_gz_lines(ref, 24)]).score)
    assert res.stdout.splitlines()[0].startswith("| system | s | sent/s |")


def test_mismatched_files_are_one_line(tiny_run, tmp_path):
    (tmp_path / "src.txt").write_text("a\nb\n")
    (tmp_path / "ref.txt").write_text("a\n")
    res = benchmark(
        "translate", "--model", str(tiny_run / "final"),
        "--source", str(tmp_path / "src.txt"), "--reference", str(tmp_path / "ref.txt"),
    )  # fmt: skip
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == ["error: --reference: 1 lines, --source has 2"]
    (tmp_path / "ref.txt").write_text("a\nb\n")  # as many lines, but no language to tokenize BLEU for
    args = ["translate", "--model", str(tiny_run / "final"), "--source", str(tmp_path / "src.txt"), "--reference"]
    res = benchmark(*args, str(tmp_path / "ref.txt"), "--json", str(tmp_path / "b.json"))
    assert res.returncode == 2 and not (tmp_path / "b.json").exists()
    assert res.stderr.splitlines() == [f"error: --target_lang: required, --reference {tmp_path / 'ref.txt'} does not "
                                       "end in a language code"]  # fmt: skip


@pytest.mark.slow  # three fresh processes, ~70 s
def test_train_benchmark_runs_the_three_systems_on_equal_batches(multi30k_small, tmp_path):
    report = tmp_path / "train.json"
    res = run_script(
        "benchmark.py", "train", "--data_dir", str(multi30k_small), "--source_lang", "en", "--target_lang", "de",
        "--validation_split", "val", "--test_split", "none", "--model", "transformer-tiny", "--vocab_size", "1000",
        "--max_tokens", "1024", "--max_train_samples", "600", "--output_dir", str(tmp_path / "run"),
        "--steps", "2", "--warmup", "1", "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    systems = {r["system"]: r for r in json.loads(report.read_text())["systems"]}
    assert list(systems) == ["mtkit", "seq2seqtrainer", "seq2seqtrainer-grouped"]
    ours = systems["mtkit"]
    for r in systems.values():
        assert r["tgt_tok_s"] == pytest.approx(r["tgt_tokens_per_update"] * 2 / r["seconds"])
        assert r["mtkit_speedup"] == pytest.approx(ours["tgt_tok_s"] / r["tgt_tok_s"])
        assert 0 <= r["padding"] < 1 and r["peak_mem_gb"] > 0
    assert systems["seq2seqtrainer"]["sentences_per_update"] == round(ours["sentences_per_update"])


def test_train_benchmark_bad_flag_is_one_line():
    res = benchmark("train", "--steps", "0")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == ["error: --steps: must be >= 1, got 0"]


@pytest.mark.slow  # four fresh processes, ~90 s
def test_quality_benchmark_trains_both_for_the_budget_and_scores_the_test_split(multi30k_small, tmp_path):
    report = tmp_path / "quality.json"
    res = run_script(
        "benchmark.py", "quality", "--data_dir", str(multi30k_small), "--source_lang", "en", "--target_lang", "de",
        "--validation_split", "val", "--test_split", "test_2016_flickr", "--model", "transformer-tiny",
        "--vocab_size", "1000", "--max_tokens", "1024", "--max_train_samples", "600", "--num_beams", "2",
        "--max_new_tokens", "12", "--output_dir", str(tmp_path / "run"), "--minutes", "0.1", "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    systems = {r["system"]: r for r in json.loads(report.read_text())["systems"]}
    assert list(systems) == ["mtkit", "seq2seqtrainer-grouped"]
    references = (multi30k_small / "test_2016_flickr.de").read_text(encoding="utf-8").splitlines()
    for r in systems.values():
        assert r["updates"] >= 1 and r["train_s"] >= 6  # 0.1 minutes, checked after each update
        hyps = open(r["translations"], encoding="utf-8").read().splitlines()
        assert len(hyps) == len(references) == 48
        assert r["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [references]).score)


def test_decoding_benchmark_scores_beam_and_mbr_and_their_gender_figures(tiny_run, small_geneval, tmp_path):
    final, report, work = tiny_run / "final", tmp_path / "decoding.json", tmp_path / "work"
    src, ref = MULTI30K / "test_2016_flickr.en.gz", MULTI30K / "test_2016_flickr.de.gz"
    res = benchmark(
        "decoding", "--model", str(final), "--source", str(src), "--reference", str(ref),
        "--max_sentences", "10", "--batch_size", "5", "--samples", "2,3", "--threads", "1", "--json", str(report),
        "--mtgeneval_dir", str(small_geneval), "--mtgeneval_split", "test", "--work", str(work),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    record = json.loads(report.read_text())
    systems = {r["system"]: r for r in record["systems"]}
    assert list(systems) == ["beam", "MBR chrF, N=2 (epsilon 0.02)", "MBR chrF, N=3 (epsilon 0.02)"]
    refs, sources = read_gz_lines(ref, 10), read_gz_lines(src, 10)
    gen = GenerationConfig.from_pretrained(final)
    options = {"num_beams": 4, "batch_size": 5, "length_penalty": gen.length_penalty}
    options |= {"max_new_tokens": gen.max_new_tokens, "max_len_a": gen.max_len_a, "max_len_b": gen.max_len_b}
    translator = Translator(final, device="cpu")
    beam = translator.translate(sources, DecodingSettings(**options))
    mbr = translator.translate(sources, DecodingSettings(**options, decoding="mbr", mbr_samples=3, seed=0))
    for name, hyps in (("beam", beam), ("MBR chrF, N=3 (epsilon 0.02)", mbr)):
        assert systems[name]["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
        assert systems[name]["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    for r in systems.values():
        for metric in ("bleu", "chrf"):
            assert r[f"{metric}_delta"] == pytest.approx(r[metric] - systems["beam"][metric])
            low, high = r[f"{metric}_delta_ci95"]
            assert low <= high
        assert r["slowdown"] == pytest.approx(r["seconds"] / systems["beam"]["seconds"])
    # the gender rows are the two bias reports' figures, the second one decoded with MBR
    rows = record["settings"]["mtgeneval"]
    assert [row["system"] for row in rows] == ["beam", "MBR chrF, N=3"]
    for folder, row in (("beam", rows[0]), ("mbr", rows[1])):
        metrics = json.loads((work / folder / "metrics.json").read_text())
        de = metrics["languages"]["de"]
        assert row["bleu_gap"].startswith(f"{de['bleu_gap']:.1f} [")
        assert row["accuracy_pair"].startswith(f"{100 * de['accuracy_pair']:.1f}")
    generation = json.loads((work / "mbr" / "metrics.json").read_text())["config"]["hypotheses"]["generation"]
    assert generation["mbr"]["samples"] == 3 and generation["mbr"]["candidates"] == "sample"


def test_translate_benchmark_runs_transformers_on_the_gpu_where_there_is_one():
    from benchmarks.translation import hf_settings

    assert hf_settings(cuda=True) == ("cuda", "bf16") and hf_settings(cuda=False) == ("cpu", "fp32")


@pytest.mark.slow  # a training process per allocator; tests/mtkit/test_allocator.py keeps the restart on tcmalloc
def test_allocator_benchmark_times_each_installed_allocator_in_its_own_process(multi30k_small, tmp_path):
    report = tmp_path / "alloc.json"
    res = run_script(
        "benchmark.py", "allocator", "--data_dir", str(multi30k_small), *FAST_RUN, "--steps", "2", "--warmup", "1",
        "--max_train_samples", "400", "--work", str(tmp_path / "work"), "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    rows = json.loads(report.read_text())["systems"]
    names = [row["allocator"] for row in rows]  # each child's own memory map, checked by the benchmark
    tcmalloc = system_library("libtcmalloc_minimal.so.4") or system_library("libtcmalloc.so.4")
    assert names[0] == "glibc" and ("tcmalloc" in names) == (tcmalloc is not None)
    assert rows[0]["speedup"] == 1 and all(row["steps"] == 2 and row["peak_rss_gb"] > 0.1 for row in rows)
