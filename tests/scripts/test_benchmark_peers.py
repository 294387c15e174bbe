"""scripts/benchmark.py peers at its smallest setting (two updates per toolkit, eight test sentences): the toolkit's
side always; eole's side when its environment (``.peers/eole-venv``, made by the benchmark's first full run) is
there, otherwise skipped with one message. Speeds are outputs, not asserted; counts, scores and settings are."""

import json
import statistics
from pathlib import Path

import pytest
import sacrebleu
from testing_utils import REPO, script_in_process

from mtkit.allocator import tcmalloc_library
from mtkit.model.presets import PRESETS

EOLE_ENV = REPO / ".peers" / "eole-venv"
UPDATES, SENTENCES, PRESET, VOCAB = 2, 8, "transformer-tiny", 500
TCMALLOC = tcmalloc_library()  # what --allocator tcmalloc preloads


def benchmark(*args: str):
    """``scripts/benchmark.py ARGS`` by its ``main`` in this process (each toolkit's runs are its own processes)."""
    from benchmark import main

    return script_in_process(main, *args)


def bart_parameters(preset: str, vocab: int, positions: int = 1026) -> int:
    """A post-norm BART's weights, counted from its shapes: one embedding shared by both stacks and the output,
    learned positions per stack, an embedding layer norm per stack."""
    shape = PRESETS[preset]
    layers, d, f = shape["encoder_layers"], shape["d_model"], shape["encoder_ffn_dim"]
    attention, norm, ffn = 4 * (d * d + d), 2 * d, d * f + f + f * d + d
    encoder = layers * (attention + norm + ffn + norm)
    decoder = layers * (2 * attention + 3 * norm + ffn)
    return vocab * d + 2 * (positions * d + norm) + encoder + decoder


def mean(cell: str) -> float:
    """The mean of a ``mean [min, max]`` table cell."""
    return float(cell.split()[0])


@pytest.fixture(scope="module")
def peers(multi30k_small, tmp_path_factory):
    work = tmp_path_factory.mktemp("peers")
    report = work / "peers.json"
    res = benchmark(  # the script's own process: tests/scripts/test_benchmark_script.py (the allocator benchmark)
        "peers", "--data_dir", str(multi30k_small), "--model", PRESET, "--minutes", "",
        "--updates", str(UPDATES), "--base_updates", "0", "--repeats", "1", "--warmup_updates", "1",
        "--max_sentences", str(SENTENCES), "--vocab_size", str(VOCAB), "--max_tokens", "1024", "--max_train_samples",
        "1000",
        "--work", str(work / "runs"), "--eole_env", str(EOLE_ENV), "--no_install", "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    record = json.loads(report.read_text())
    raw = json.loads(Path(record["settings"]["raw"]).read_text())
    return res, {r["system"]: r for r in record["systems"]}, raw, record["settings"]


@pytest.mark.slow  # a run of both toolkits; the benchmark's refusals stay in the default tier
def test_our_figures_match_the_run_log_and_the_saved_translations(peers, multi30k_small):
    res, table, raw, _ = peers
    (ours,) = raw["mtkit"]
    rows = -(-VOCAB // 64) * 64  # the vocabulary rounded up to 64 rows, as eole's vocab_size_multiple 64 rounds it
    assert ours["params"] == bart_parameters(PRESET, rows)
    assert ours["config"]["vocab"] == rows and ours["config"]["max_tokens"] == 1024
    # --allocator tcmalloc (the default): the run reads tcmalloc in its own memory map where it is installed
    assert ours["config"]["allocator"] == ("tcmalloc" if TCMALLOC else "glibc")
    ends, tokens = ours["update_ends"], ours["update_tokens"]
    assert len(ends) == len(tokens) == UPDATES and all(0 < t <= 1024 for t in tokens)
    speed = f"train tgt tok/s, {PRESET}"
    assert mean(table[speed]["mtkit"]) == pytest.approx(tokens[1] / (ends[1] - ends[0]), rel=0.01)
    assert mean(table[f"tgt tokens/update, {PRESET}"]["mtkit"]) == pytest.approx(statistics.mean(tokens), abs=0.01)
    assert table[f"updates at {UPDATES} updates"]["mtkit"].startswith(f"{UPDATES}.00")
    refs = (multi30k_small / "test_2016_flickr.de").read_text(encoding="utf-8").splitlines()[:SENTENCES]
    snapshot = Path(ours["snapshots"][f"{UPDATES}u"]["path"])
    hyps = (snapshot / "ct2-test.txt").read_text(encoding="utf-8").splitlines()
    assert len(hyps) == SENTENCES and (snapshot / "generate-test.txt").is_file()
    bleu = sacrebleu.corpus_bleu(hyps, [refs]).score
    assert mean(table[f"test bleu at {UPDATES} updates, mtkit ct2 vs eole's translator"]["mtkit"]) == pytest.approx(
        bleu, abs=0.01
    )
    if not (EOLE_ENV / "bin" / "python").is_file():
        assert f"eole: no environment in {EOLE_ENV}" in res.stdout
        assert all(row["eole"] == "n/a" for row in table.values())


@pytest.mark.slow  # a run of both toolkits; the benchmark's refusals stay in the default tier
def test_eole_runs_the_same_model_on_the_same_pieces(peers):
    if not (EOLE_ENV / "bin" / "python").is_file():
        pytest.skip(f"eole's environment {EOLE_ENV} is absent: `python scripts/benchmark.py peers` creates it")
    res, table, raw, settings = peers
    (ours,), (eole,) = raw["mtkit"], raw["eole"]
    assert abs(eole["params"] - ours["params"]) <= 0.01 * ours["params"]
    same = ("layers", "d_model", "heads", "ffn", "vocab", "positions", "dropout", "max_tokens", "threads", "allocator")
    for key in same:
        assert eole["config"][key] == ours["config"][key], key
    assert {r["setting"] for r in settings["settings_side_by_side"]} >= {f"{PRESET}: parameters"}
    assert "| setting | mtkit | eole |" in res.stdout
    assert len(eole["update_ends"]) == UPDATES and all(0 < t <= 1024 for t in eole["update_tokens"])
    cell = table[f"train tgt tok/s, {PRESET}"]
    ratio = mean(cell["mtkit"]) / mean(cell["eole"])
    assert mean(cell["mtkit vs eole"]) == pytest.approx(ratio, rel=0.01)


@pytest.mark.slow  # a run of both toolkits; the benchmark's refusals stay in the default tier
def test_eole_via_ctranslate2_is_scored_from_its_own_translations(peers, multi30k_small):
    if not (EOLE_ENV / "bin" / "python").is_file():
        pytest.skip(f"eole's environment {EOLE_ENV} is absent: `python scripts/benchmark.py peers` creates it")
    _, table, raw, _ = peers
    (eole,) = raw["eole"]
    snapshot = Path(eole["snapshots"][f"{UPDATES}u"]["path"])
    assert (snapshot / "ct2" / "model.bin").is_file()  # converted by CTranslate2's eole converter
    refs = (multi30k_small / "test_2016_flickr.de").read_text(encoding="utf-8").splitlines()[:SENTENCES]
    for engine, label in (("eole_ct2", "eole via CTranslate2"), ("eole", "eole's translator")):
        hyps = (snapshot / f"{engine}-test.txt").read_text(encoding="utf-8").splitlines()
        assert len(hyps) == SENTENCES
        bleu = sacrebleu.corpus_bleu(hyps, [refs]).score
        row = table[f"test bleu at {UPDATES} updates, mtkit ct2 vs {label}"]
        assert mean(row["eole"]) == pytest.approx(bleu, abs=0.01)
        assert mean(table[f"test sent/s at {UPDATES} updates, mtkit ct2 vs {label}"]["eole"]) > 0
    # the converted model is eole's model: the same beam search starts the same way (the two stop at other bounds)
    own, converted = ((snapshot / f"{e}-test.txt").read_text().splitlines() for e in ("eole", "eole_ct2"))
    assert [h.split()[:5] for h in own] == [h.split()[:5] for h in converted]


def test_bad_budget_is_one_line():
    res = benchmark("peers", "--minutes", "3,x")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == ["error: --minutes: expected comma-separated numbers, got '3,x'"]


def test_runs_on_different_allocators_are_refused_unless_each_runs_its_own(monkeypatch):
    from benchmarks.peers import allocator_env, check_equal

    config = {"layers": [1, 1], "d_model": 8, "heads": 2, "ffn": 16, "vocab": 50, "positions": 10, "dropout": 0.1,
              "max_tokens": 64, "label_smoothing": 0.1, "allocator": "tcmalloc"}  # fmt: skip
    ours, theirs = {"config": config, "params": 1000}, {"config": config | {"allocator": "glibc"}, "params": 1000}
    with pytest.raises(RuntimeError, match=r"settings differ: \['allocator'\]"):
        check_equal(ours, theirs, PRESET, "tcmalloc")
    assert {"setting": f"{PRESET}: allocator", "mtkit": "tcmalloc", "eole": "glibc"} in check_equal(
        ours, theirs, PRESET, "own"
    )
    # glibc for both: nothing preloaded, this toolkit's own restart on tcmalloc turned off; own: eole gets nothing,
    # this toolkit restarts by itself whatever this process's environment says
    plain = allocator_env("mtkit", "glibc")
    assert "LD_PRELOAD" not in plain and plain["MTKIT_TCMALLOC"] == "0"
    monkeypatch.setenv("MTKIT_TCMALLOC", "0")  # this process's own markers are not passed on
    monkeypatch.setenv("MTKIT_TCMALLOC_RESTARTED", "1")
    own = allocator_env("mtkit", "own")
    assert "LD_PRELOAD" not in allocator_env("eole", "own")
    assert not {"LD_PRELOAD", "MTKIT_TCMALLOC", "MTKIT_TCMALLOC_RESTARTED"} & set(own)
    if TCMALLOC:
        assert all("tcmalloc" in allocator_env(system, "tcmalloc")["LD_PRELOAD"] for system in ("mtkit", "eole"))
