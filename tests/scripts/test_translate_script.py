"""scripts/translate.py in its three modes, on the model trained by the ``tiny_run`` fixture."""

from testing_utils import run_script

from mtkit.translate import Translator

SENTENCES = ["A man is riding a bike.", "Two dogs play in the snow.", "A woman sings."]
FAST = ["--max_new_tokens", "12", "--num_beams", "2"]


def test_text_mode_matches_the_library(tiny_run):
    final = str(tiny_run / "final")
    res = run_script("translate.py", "--model", final, *FAST, *[a for s in SENTENCES for a in ("--text", s)])
    assert res.returncode == 0, res.stderr[-2000:]
    expected = Translator(final).translate(SENTENCES, beam_size=2, max_new_tokens=12)
    assert res.stdout.splitlines() == expected
    assert any(expected)  # 40 updates are enough for some output


def test_file_mode_is_batched_and_in_order(tiny_run, tmp_path):
    final = str(tiny_run / "final")
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SENTENCES * 3) + "\n", encoding="utf-8")
    out = tmp_path / "sub" / "out.txt"
    args = ["--model", final, *FAST, "--input", str(src), "--output", str(out), "--batch_size", "2"]
    res = run_script("translate.py", *args)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9 and lines[:3] == lines[3:6] == lines[6:]
    assert lines[:3] == Translator(final).translate(SENTENCES, beam_size=2, max_new_tokens=12)


def test_interactive_mode_until_q(tiny_run):
    res = run_script("translate.py", "--model", str(tiny_run / "final"), *FAST, stdin="A woman sings.\n\nq\nnot read\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines() == Translator(str(tiny_run / "final")).translate(
        ["A woman sings."], beam_size=2, max_new_tokens=12
    )


def test_bad_input(tiny_run, tmp_path):
    final = str(tiny_run / "final")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    out = tmp_path / "out.txt"
    cases = [
        (["--model", str(tmp_path / "nope")], "not a model directory"),
        (["--model", final, "--input", str(tmp_path / "missing.txt")], "missing.txt: file not found"),
        (["--model", final, "--input", str(bad), "--output", str(out)], "bad.txt: invalid UTF-8 at line 2"),
        (["--model", final, "--input", str(empty)], "empty.txt: file is empty"),
        (["--model", final, "--text", "x", "--prompt", "no placeholder"], "--prompt"),
    ]
    for args, message in cases:
        res = run_script("translate.py", *args)
        assert res.returncode == 2, (args, res.stderr[-1500:])
        assert res.stderr.strip().splitlines()[-1].startswith("error: ") and message in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    assert not out.exists()
