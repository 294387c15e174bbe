"""Files a team can share: everything a run writes (weights, card, results, checkpoints, the CTranslate2 copy) has
the mode an ordinary write gives under the umask, atomic writes through a temporary file included."""

from __future__ import annotations

import os
import stat

from testing_utils import FAST_RUN, train_in_process


def test_a_run_under_umask_022_leaves_files_0644_and_folders_0755(multi30k_small, tmp_path):
    run = tmp_path / "run"
    args = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(run), "--max_steps", "2"]
    args += ["--eval_steps", "2", "--save_steps", "2", "--max_train_samples", "200", "--export_ct2", "float32"]
    umask = os.umask(0o022)  # the run in this process: the mask is the process's, as a shell's umask sets it
    try:
        res = train_in_process(*args)
    finally:
        os.umask(umask)
    assert res.returncode == 0, res.stderr[-3000:]
    for name in ("model.safetensors", "README.md", "config.json", "generation_config.json", "tokenizer.json"):
        assert (run / "final" / name).is_file(), name
    assert (run / "results.json").is_file() and (run / "final_ct2").is_dir()
    wrong = []
    for path in [run, *run.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode != (0o755 if path.is_dir() else 0o644):
            wrong.append(f"{oct(mode)} {path.relative_to(run)}")
    assert not wrong, "modes other than an ordinary write's under umask 022:\n" + "\n".join(sorted(wrong))


def test_the_mode_check_above_can_fail(tmp_path):
    """A file made private the way tempfile makes it is what the check above finds."""
    import tempfile

    fd, name = tempfile.mkstemp(dir=tmp_path)
    os.close(fd)
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600


def test_a_new_bias_report_folder_follows_the_umask(tmp_path):
    """``write_report`` stages a new report folder with ``mkdtemp`` (private) and renames it into place."""
    from bias_eval.core.files import write_report

    old = os.umask(0o022)
    try:
        write_report(tmp_path / "report", {"report.md": b"# r\n", "figures/gap.svg": b"<svg/>"})
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [tmp_path / "report", *(tmp_path / "report").rglob("*")]}
    assert modes == {"report": 0o755, "figures": 0o755, "report.md": 0o644, "gap.svg": 0o644}


def test_a_report_written_into_an_existing_folder_keeps_its_files_modes(tmp_path):
    """A file a new report writes over keeps its mode (as ``open(path, "w")`` and ``atomic_write`` keep it); a new
    one gets the umask's."""
    from bias_eval.core.files import write_report

    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.md").write_bytes(b"old")
    os.chmod(tmp_path / "report" / "report.md", 0o640)
    old = os.umask(0o022)
    try:
        write_report(tmp_path / "report", {"report.md": b"# r\n", "metrics.json": b"{}"})
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "report").iterdir()}
    assert modes == {"report.md": 0o640, "metrics.json": 0o644}
