"""scripts/preprocess.py prepares tokenizer and tokenized splits once; train.py then reuses them as they are."""

from testing_utils import FAST_RUN, run_script, script_in_process, train_in_process

from mtkit.cli.preprocess import main as preprocess_main


def snapshot(out) -> dict:
    files = [*(out / "cache").glob("*.arrow"), out / "tokenizer" / "tokenizer.json"]
    return {p.name: p.stat().st_mtime_ns for p in files}


def test_train_reuses_what_preprocess_wrote(multi30k_small, tmp_path):
    out = tmp_path / "run"
    flags = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_train_samples", "500",
        "--preprocessing_num_workers", "2",
    ]  # fmt: skip
    res = run_script("preprocess.py", *flags)  # the script's own process (its smoke run); train.py's: in this one
    assert res.returncode == 0, res.stderr[-2000:]
    assert "preprocessed train 500, validation 64, test 48 pairs" in res.stdout
    before = snapshot(out)
    assert len(before) == 7  # 2 shards (one per worker) of train, validation and test, and the tokenizer
    res = train_in_process(*flags, "--max_steps", "2", "--eval_steps", "2", "--test_split", "none")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "tokenizing" not in res.stderr  # nothing tokenized again
    assert snapshot(out) == before


def test_bad_input_is_one_line(tmp_path):
    res = script_in_process(
        preprocess_main, "--data_dir", str(tmp_path / "missing"), "--output_dir", str(tmp_path / "out")
    )
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [f"error: --data_dir {tmp_path / 'missing'}: not a folder"]
    assert not (tmp_path / "out").exists()
