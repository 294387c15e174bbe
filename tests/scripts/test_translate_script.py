"""scripts/translate.py in its three modes, on the model trained by the ``tiny_run`` fixture."""

import shutil

import pytest
from testing_utils import run_script, script_in_process
from transformers import GenerationConfig

from mtkit.cli.translate import main
from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings
from mtkit.errors import UserError, cli_entry

SENTENCES = ["A man is riding a bike.", "Two dogs play in the snow.", "A woman sings."]
FAST = ["--max_new_tokens", "12", "--num_beams", "2"]


def translate(*args: str):
    """``scripts/translate.py ARGS`` by its ``main`` in this process, wrapped as the script wraps it (the script's own
    process, fed on standard input: test_interactive_mode_until_q)."""
    return script_in_process(cli_entry(main), *args)


def saved(final) -> dict:
    """What the command line takes from the model's generation config when no flag says otherwise."""
    gen = GenerationConfig.from_pretrained(final)
    return {"length_penalty": gen.length_penalty, "max_len_a": gen.max_len_a, "max_len_b": gen.max_len_b}


def test_text_mode_matches_the_library(tiny_run):
    final = str(tiny_run / "final")
    texts = [a for s in SENTENCES for a in ("--text", s)]
    res = translate("--model", final, *FAST, *texts)
    assert res.returncode == 0, res.stderr[-2000:]
    assert saved(final)["length_penalty"] == 0.6  # the run's --length_penalty default, saved with the model
    expected = Translator(final).translate(SENTENCES, DecodingSettings(num_beams=2, max_new_tokens=12, **saved(final)))
    assert res.stdout.splitlines() == expected
    assert any(expected)  # 40 updates are enough for some output
    # a flag wins over the saved value
    res = translate("--model", final, *FAST, "--length_penalty", "2.0", *texts)
    options = saved(final) | {"length_penalty": 2.0}
    assert res.stdout.splitlines() == Translator(final).translate(
        SENTENCES, DecodingSettings(num_beams=2, max_new_tokens=12, **options)
    )


def test_the_saved_output_bound_is_used(tiny_run, tmp_path):
    """``max_len_a``/``max_len_b`` saved in ``generation_config.json`` bound the translations (here to 2 tokens)."""
    final = tmp_path / "final"
    shutil.copytree(tiny_run / "final", final)
    gen = GenerationConfig.from_pretrained(final)
    gen.max_len_a, gen.max_len_b = 0.0, 2
    gen.save_pretrained(final)
    res = translate("--model", str(final), *FAST, *[a for s in SENTENCES for a in ("--text", s)])
    assert res.returncode == 0, res.stderr[-2000:]
    options = {"num_beams": 2, "max_new_tokens": 12, "length_penalty": 0.6}
    expected = Translator(final).translate(SENTENCES, DecodingSettings(**options, max_len_a=0.0, max_len_b=2))
    assert res.stdout.splitlines() == expected
    assert expected != Translator(final).translate(SENTENCES, DecodingSettings(**options))


def test_file_mode_is_batched_and_in_order(tiny_run, tmp_path):
    final = str(tiny_run / "final")
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SENTENCES * 3) + "\n", encoding="utf-8")
    out = tmp_path / "sub" / "out.txt"
    args = ["--model", final, *FAST, "--input", str(src), "--output", str(out), "--batch_size", "2"]
    res = translate(*args)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9 and lines[:3] == lines[3:6] == lines[6:]
    assert lines[:3] == Translator(final).translate(
        SENTENCES, DecodingSettings(num_beams=2, max_new_tokens=12, **saved(final))
    )


def test_interactive_mode_until_q(tiny_run):
    res = run_script("translate.py", "--model", str(tiny_run / "final"), *FAST, stdin="A woman sings.\n\nq\nnot read\n")
    assert res.returncode == 0, res.stderr[-2000:]
    final = str(tiny_run / "final")
    expected = Translator(final).translate(
        ["A woman sings."], DecodingSettings(num_beams=2, max_new_tokens=12, **saved(final))
    )
    assert res.stdout.splitlines() == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "{tmp}/missing.txt"], "missing.txt: file not found"),
        (["--input", "{tmp}/bad.txt", "--output", "{tmp}/out.txt"], "bad.txt: invalid UTF-8 at line 2"),
        (["--input", "{tmp}/empty.txt"], "empty.txt: file is empty"),
        (["--text", "x", "--prompt", "no placeholder"], "--prompt"),
        (["--text", "x", "--output", "{tmp}/out.txt"], "--output: only used with --input"),
        (["--text", "x", "--dtype", "fp8"], "--dtype"),
        (["--text", "x", "--max_len_a", "-1"], "--max_len_a: must be >= 0"),
    ],
)
def test_bad_input(tiny_run, tmp_path, args, message):
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\n")
    (tmp_path / "empty.txt").write_text("")
    args = [a.format(tmp=tmp_path) for a in args]
    with pytest.raises(UserError, match=message):
        main(["--model", str(tiny_run / "final"), *FAST, *args])
    assert not (tmp_path / "out.txt").exists()


def test_bad_model_is_one_line_and_exit_2(tmp_path):
    res = translate("--model", str(tmp_path / "nope"), "--text", "x")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"error: --model {tmp_path / 'nope'}: no such folder (and not a hub id like google/flan-t5-base)"
    ]


def test_mbr_decoding_chooses_the_candidate_of_highest_expected_chrf(tiny_run):
    """``--decoding mbr``: each output is the candidate (seeded epsilon samples, with the model's saved bounds)
    whose mean sentence chrF against all candidates is highest, computed here with sacreBLEU."""
    import numpy as np
    import sacrebleu

    final = str(tiny_run / "final")
    texts = [a for s in SENTENCES for a in ("--text", s)]
    mbr = ["--decoding", "mbr", "--mbr_samples", "5", "--epsilon", "0", "--seed", "7"]
    res = translate("--model", final, *FAST, *mbr, *texts)
    assert res.returncode == 0, res.stderr[-2000:]
    mbr_settings = {"decoding": "mbr", "mbr_samples": 5, "epsilon": 0.0, "seed": 7}
    settings = DecodingSettings(num_beams=2, max_new_tokens=12, **mbr_settings, **saved(final))
    groups = Translator(final).candidates(SENTENCES, settings)
    means = [[np.mean([sacrebleu.sentence_chrf(h, [r]).score for r in g]) for h in g] for g in groups]
    assert res.stdout.splitlines() == [g[int(np.argmax(m))] for g, m in zip(groups, means)]
    assert all(len(set(g)) > 1 for g in groups)


def test_the_target_language_is_read_in_any_spelling(family_dir):
    """``--target_lang DE`` and ``ger`` are German: the same forced token, the same translation as ``de``."""
    nllb = str(family_dir("nllb"))
    codes = ("de", "DE", "ger")
    outputs = [translate("--model", nllb, "--text", "Hi.", *FAST, "--target_lang", code) for code in codes]
    assert all(res.returncode == 0 for res in outputs), [res.stderr[-300:] for res in outputs]
    assert outputs[0].stdout and outputs[1].stdout == outputs[0].stdout == outputs[2].stdout
