"""Bad input, across the scripts: each case ends with one ``error:`` line naming the file or flag and what is
wrong, a non-zero status, no traceback, and nothing written or changed (the inputs and the finished run they use are
hashed before and after). The cases come in categories (:data:`CATEGORIES`, listed in docs/troubleshooting.md,
"When things go wrong"). The scripts' entry points run in this process (as ``cli_entry`` wraps them) to keep the
suite fast; tests/scripts/ runs each script for real."""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import NamedTuple

import benchmark
import pytest
from testing_utils import FAST_RUN, REPO
from transformers import BertConfig, BertModel

from mtkit.cli.average_checkpoints import main as average_main
from mtkit.cli.bias_report import main as bias_report_main
from mtkit.cli.bias_study import main as study_main
from mtkit.cli.compare_reports import main as compare_main
from mtkit.cli.demo_corpus import main as demo_corpus_main
from mtkit.cli.export_ct2 import main as export_ct2_main
from mtkit.cli.export_model import main as export_main
from mtkit.cli.prepare_text import main as prepare_text_main
from mtkit.cli.preprocess import main as preprocess_main
from mtkit.cli.push_to_hub import main as push_main
from mtkit.cli.train import main as train_main
from mtkit.cli.translate import main as translate_main
from mtkit.errors import cli_entry

SCRIPTS = {
    "train": train_main,
    "preprocess": preprocess_main,
    "translate": lambda argv: cli_entry(translate_main)(argv),
    "bias_report": bias_report_main,
    "export": lambda argv: cli_entry(export_main)(argv),
    "average": lambda argv: cli_entry(average_main)(argv),
    "export_ct2": lambda argv: cli_entry(export_ct2_main)(argv),
    "demo_corpus": lambda argv: cli_entry(demo_corpus_main)(argv),
    "benchmark": benchmark.main,
    "push": push_main,
    "compare": compare_main,
    "study": study_main,
    "prepare_text": lambda argv: cli_entry(prepare_text_main)(argv),
}

#: what the cases are about, each with at least this many cases
CATEGORIES = {"recipes": 10, "data": 20, "models and checkpoints": 12, "flags": 25, "output": 12}


class Case(NamedTuple):
    category: str
    name: str
    script: str
    argv: list[str]
    expected: str  # in the error line
    refusing: str | None = None  # a folder of the inputs whose file system refuses writes: "full" or "readonly"


def files(root: Path) -> dict[str, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    made = {
        "ok/train.en": b"a small cat\nthe dog\n", "ok/train.de": b"eine Katze\nder Hund\n",
        "ok/val.en": b"a cat\n", "ok/val.de": b"eine Katze\n",
        "uneven/train.en": b"a\nb\n", "uneven/train.de": b"x\n",
        "utf/train.en": b"caf\xe9\n", "utf/train.de": b"x\n",
        "nul/train.en": b"a\x00b\n", "nul/train.de": b"x\n",
        "empty/train.en": b"", "empty/train.de": b"x\n",
        "gap/train.en": b"a\n\nc\n", "gap/train.de": b"x\ny\nz\n",
        "blank/train.en": b" \n\n", "blank/train.de": b"x\ny\n",
        "rows.csv": b"source,target\n", "cols.csv": b"foo,bar\n1,2\n",
        "gender.csv": b"ID,input_to_translate,label,gender,language_pair\n1,a,b,neutral,en-de\n",
        "typo.yaml": b"max_step: 5\n", "type.yaml": b"learning_rate: fast\n", "broken.yaml": b"a: [\n",
        "ds_broken.json": b'{"zero_optimization": ', "ds_list.json": b"[1, 2]",
        "noconfig/weights.bin": b"", "badconfig/config.json": b"{}", "text.txt": b"Hello.\n",
        "lines.jsonl": b'{"source": "a", "target": "b"}\n{"source": \n',
        "section.yaml": b"optimizer:\n  learning_rate: 0.001\n", "notmap.yaml": b"train: 5\n",
        "placed.yaml": b"model:\n  max_steps: 5\n", "list.yaml": b"- max_steps\n- 5\n",
        "bool.yaml": b"max_steps: yes\n", "null.yaml": b"max_steps:\n", "choice.yaml": b"metric_for_best_model: blue\n",
        "utf16.yaml": "max_steps: 5\n".encode("utf-16"), "range.yaml": b"learning_rate: -1\n",
        "u16le/train.en": "a\n".encode("utf-16"), "u16le/train.de": b"x\n",
        "u16be/train.en": b"\xfe\xff" + "a\n".encode("utf-16-be"), "u16be/train.de": b"x\n",
        "u32/train.en": "a\n".encode("utf-32"), "u32/train.de": b"x\n",
        "gzname/train.en": gzip.compress(b"a\n", mtime=0), "gzname/train.de": b"x\n",
        "xzname/train.en": lzma.compress(b"a\n"), "xzname/train.de": b"x\n",
        "spaces/train.en": b"a\n \t \nc\n", "spaces/train.de": b"x\ny\nz\n",
        "long/train.en": b"a\nb\n" + b"w " * 600_000 + b"\n", "long/train.de": b"x\ny\nz\n",
        "cr/train.en": b"a b\r" * 300_000, "cr/train.de": b"x\n",
        "notarget.jsonl": b'{"source": "a"}\n{"source": "b"}\n',
        "ru/train.en": b"a small cat\nthe dog\n", "ru/train.ru": "маленькая кошка\nсобака\n".encode(),
        "ru/val.en": b"a cat\n", "ru/val.ru": "кошка\n".encode(),
        "ru.csv": "ID,input_to_translate,label,gender,language_pair\n1,She sings.,Она поёт.,f,en_ru\n"
                  "1,He sings.,Он поёт.,m,en_ru\n".encode(),
        "geneval/sentences/dev/geneval-sentences-feminine-dev.en_de.en": b"She is a nurse.\nShe sings.\n",
        "geneval/sentences/dev/geneval-sentences-feminine-dev.en_de.de": b"Sie ist Pflegerin.\nSie singt.\n",
        "geneval/sentences/dev/geneval-sentences-masculine-dev.en_de.en": b"He is a nurse.\nHe sings.\n",
        "geneval/sentences/dev/geneval-sentences-masculine-dev.en_de.de": b"Er ist Pfleger.\n",
        "adapter/adapter_config.json": b'{"peft_type": "LORA", "base_model_name_or_path": "/nowhere/base"}',
        "adapter/adapter_model.safetensors": b"", "full/.keep": b"", "readonly/.keep": b"",
        "filling/.keep": b"", "hyps/.keep": b"",
        "ragged.csv": b"source,target\na,b\nc\n", "wide.csv": b"source,target\na,b\nc,d,e\n",
        "ragged_gender.csv": b"ID,input_to_translate,label,gender,language_pair\n1,a,b,f,en-de\n2,a,b,m\n",
        "quoted.tsv": b'source\ttarget\n"a\tb\nc\td\n"e\tf"\tg\n',
        "disagree.csv": b"source,target,lang,language_pair\na,b,de,en-de\nc,d,de,en-es\n",
        "region.csv": b"source,target,lang\na,b,de\nc,d,us\n", "pt.csv": b"source,target,lang\na,b,pt-BR\nc,d,pt\n",
        "newline_gender.csv": b'ID,input_to_translate,label,gender,language_pair\n1,a,"b\nc",f,en-de\n1,a,b,m,en-de\n',
    }  # fmt: skip
    for name, data in made.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "gz").mkdir(exist_ok=True)
    (root / "gz" / "train.en.gz").write_bytes(b"not gzip")
    (root / "gz" / "train.de").write_bytes(b"x\n")
    (root / "taken").mkdir(exist_ok=True)
    (root / "taken" / "x").write_text("")
    if not (root / "alias.txt").is_symlink():
        (root / "alias.txt").symlink_to("text.txt")  # text.txt by another name
    return made


def data_args(folder: Path, *extra: str) -> list[str]:
    base = [a for a in FAST_RUN if a not in ("--validation_split", "val", "--test_split", "test_2016_flickr")]
    return ["--data_dir", str(folder), *base, "--validation_split", "none", "--test_split", "none", *extra]


def cases(d: Path, run: Path) -> list[Case]:
    """Every case; ``d`` holds the inputs of :func:`files` (and, made by the test, ``noweights/`` and ``otherrun/``),
    ``run`` is a finished tiny run (resumed, exported, translated with; never changed)."""
    final, recipe = run / "final", ["--config", str(run / "config.yaml"), "--output_dir", str(run)]
    ok_args = ["--data_dir", str(d / "ok"), *FAST_RUN]  # good data: these cases are about the flags
    text = ["--model", str(final), "--text", "Hi."]
    report = ["--data", str(d / "gender.csv"), "--hyp_dir", str(d / "hyps"), "--out", str(d / "report")]
    bench = ["translate", "--model", str(final), "--source", str(d / "text.txt"), "--reference", str(d / "text.txt")]
    geneval = str(d / "geneval")
    found = [
        Case("recipes", "recipe missing", "train", ["--config", str(d / "no.yaml")], "no.yaml: file not found"),
        Case("recipes", "recipe typo", "train", ["--config", str(d / "typo.yaml")], "did you mean 'max_steps'?"),
        Case("recipes", "recipe type", "train", ["--config", str(d / "type.yaml")], "'learning_rate' expects float"),
        Case("recipes", "recipe YAML", "train", ["--config", str(d / "broken.yaml")], "malformed YAML at line 2"),
        Case("recipes", "unknown section", "train", ["--config", str(d / "section.yaml")], "unknown key 'optimizer'"),
        Case("recipes", "section not a mapping", "train", ["--config", str(d / "notmap.yaml")],
             "section 'train' must be a mapping"),
        Case("recipes", "key in another section", "train", ["--config", str(d / "placed.yaml")],
             "key 'max_steps' belongs in section 'train', not 'model'"),
        Case("recipes", "recipe a list", "train", ["--config", str(d / "list.yaml")], "expected a mapping"),
        Case("recipes", "yes for a number", "train", ["--config", str(d / "bool.yaml")], "'max_steps' expects int"),
        Case("recipes", "empty value", "train", ["--config", str(d / "null.yaml")], "'max_steps' may not be empty"),
        Case("recipes", "recipe choice", "train", ["--config", str(d / "choice.yaml")],
             "'metric_for_best_model' must be one of"),
        Case("recipes", "recipe a folder", "train", ["--config", str(d / "ok")], "ok: cannot read (Is a directory)"),
        Case("recipes", "recipe in UTF-16", "train", ["--config", str(d / "utf16.yaml")], "cannot read (not UTF-8"),
        Case("recipes", "recipe out of range", "train", ["--config", str(d / "range.yaml")],
             "--learning_rate: must be > 0"),
        Case("data", "data_dir missing", "train", data_args(d / "nowhere"), "--data_dir"),
        Case("data", "data_dir is a file", "train", data_args(d / "text.txt"), "not a folder"),
        Case("data", "line counts differ", "train", data_args(d / "uneven"), "2 source lines but 1 target lines"),
        Case("data", "invalid UTF-8", "train", data_args(d / "utf"), "invalid UTF-8 at line 1"),
        Case("data", "NUL byte", "train", data_args(d / "nul"), "NUL byte at line 1"),
        Case("data", "UTF-16 LE with BOM", "train", data_args(d / "u16le"), "train.en: UTF-16 (byte-order mark)"),
        Case("data", "UTF-16 BE with BOM", "train", data_args(d / "u16be"), "train.en: UTF-16 (byte-order mark)"),
        Case("data", "UTF-32 with BOM", "train", data_args(d / "u32"), "train.en: UTF-32 (byte-order mark)"),
        Case("data", "empty file", "train", data_args(d / "empty"), "file is empty"),
        Case("data", "not gzip", "train", data_args(d / "gz"), "train.en.gz: cannot read"),
        Case("data", "gzip without .gz", "train", data_args(d / "gzname"), "train.en: gzip-compressed, not UTF-8"),
        Case("data", "xz without its ending", "train", data_args(d / "xzname"), "train.en: xz-compressed"),
        Case("data", "empty line", "train", data_args(d / "gap"), "empty source sentence at line 2"),
        Case("data", "whitespace-only line", "train", data_args(d / "spaces"), "empty source sentence at line 2"),
        Case("data", "nothing usable", "train", data_args(d / "blank", "--skip_empty_pairs"), "no usable sentence"),
        Case("data", "very long line", "train", data_args(d / "long"), "train.en: line 3 has 1,200,000 characters"),
        Case("data", "lines ending in CR", "train", data_args(d / "cr"), "train.en: line 1 has "),
        Case("data", "language the data lacks", "train", [*ok_args, "--target_lang", "fr"], "no file train.fr"),
        Case("data", "train_file missing", "train", ["--train_file", str(d / "no.csv"), *FAST_RUN], "no.csv: file not"),
        Case("data", "train_file a folder", "train", ["--train_file", str(d / "ok"), *FAST_RUN], "is a directory"),
        Case("data", "CSV without rows", "train", ["--train_file", str(d / "rows.csv"), *FAST_RUN], "no rows"),
        Case("data", "CSV columns", "train", ["--train_file", str(d / "cols.csv"), *FAST_RUN], "no source/target"),
        Case("data", "JSONL without target", "train", ["--train_file", str(d / "notarget.jsonl"), *FAST_RUN],
             "notarget.jsonl: no source/target columns"),
        Case("data", "JSONL line", "train", ["--train_file", str(d / "lines.jsonl"), *FAST_RUN], "line 2 is not valid"),
        Case("data", "gender value", "train", ["--train_file", str(d / "gender.csv"), *FAST_RUN], "gender 'neutral'"),
        Case("data", "MT-GenEval f/m counts", "train", ["--mtgeneval_dir", geneval, "--target_langs", "de",
             *FAST_RUN], "masculine-dev.en_de.de: 1 lines, but "),
        Case("data", "MT-GenEval f/m counts, report", "bias_report", ["--mtgeneval_dir", geneval, "--hyp_dir",
             str(d / "hyps"), "--out", str(d / "report")], "masculine-dev.en_de.de: 1 lines, but "),
        Case("data", "report gender value", "bias_report", ["--data", str(d / "gender.csv"), "--model",
             str(final), "--out", str(d / "report")], "gender.csv: line 2: gender 'neutral'"),
        Case("data", "preprocess data", "preprocess", data_args(d / "uneven"), "2 source lines but 1 target lines"),
        Case("data", "report data", "bias_report", ["--mtgeneval_dir", str(d / "nowhere"), "--hyp_dir", str(d / "hyps"),
             "--out", str(d / "report")], "--mtgeneval_dir"),
        Case("data", "translate input", "translate", ["--model", str(final), "--input", str(d / "no.txt")], "no.txt"),
        Case("models and checkpoints", "model folder missing", "train",
             [*ok_args, "--model_name_or_path", str(d / "nomodel")], "no such folder"),
        Case("models and checkpoints", "model without config", "train",
             [*ok_args, "--model_name_or_path", str(d / "noconfig")], "no config.json"),
        Case("models and checkpoints", "model config empty", "train",
             [*ok_args, "--model_name_or_path", str(d / "badconfig")], "--model_name_or_path"),
        Case("models and checkpoints", "weights missing", "train",
             [*ok_args, "--model_name_or_path", str(d / "noweights")], "noweights: no weights (model.safetensors"),
        Case("models and checkpoints", "translate weights missing", "translate",
             ["--model", str(d / "noweights"), "--text", "Hi."], "noweights: no weights (model.safetensors"),
        Case("models and checkpoints", "adapter without base", "train",
             [*ok_args, "--model_name_or_path", str(d / "adapter")], "a LoRA adapter without its base model"),
        Case("models and checkpoints", "translate an adapter", "translate", ["--model", str(d / "adapter"), "--text",
             "Hi."], "adapter: a LoRA adapter without its base model; give the merged model"),
        Case("models and checkpoints", "translate model", "translate", ["--model", str(d / "nomodel"), "--text", "Hi."],
             "--model"),
        Case("models and checkpoints", "resume another preset", "train", [*recipe, "--model", "transformer-small"],
             "model 'transformer-tiny' -> 'transformer-small'"),
        Case("models and checkpoints", "resume another vocabulary", "train", [*recipe, "--vocab_size", "900"],
             "vocab_size 1000 -> 900"),
        Case("models and checkpoints", "resume another tokenizer", "train", [*recipe, "--tokenizer_type", "unigram"],
             "tokenizer_type 'bpe' -> 'unigram'"),
        Case("models and checkpoints", "resume another model", "train", [*recipe, "--model_name_or_path",
             str(d / "noweights")], f"model_name_or_path None -> '{d / 'noweights'}'"),
        Case("models and checkpoints", "resume another learning rate", "train", [*recipe, "--learning_rate", "1e-3"],
             "learning_rate 0.002 -> 0.001"),
        Case("models and checkpoints", "export checkpoint", "export", [str(d / "nowhere"), str(d / "exported")],
             "CHECKPOINT"),
        Case("models and checkpoints", "export no checkpoint", "export", [str(d / "noconfig"), str(d / "exported")],
             "not a checkpoint of a run"),
        Case("models and checkpoints", "another model's checkpoint", "export",
             [str(run / "checkpoints" / "checkpoint_last"), str(d / "exported"), "--run_dir", str(d / "otherrun")],
             "the weights do not fit the run's model"),
        Case("models and checkpoints", "average more than kept", "average", [str(run), str(d / "avg"), "--last", "5"],
             "5 asked for"),
        Case("models and checkpoints", "push folder", "push", [str(d / "nowhere"), "me/x"], "no such folder"),
        Case("models and checkpoints", "push no model", "push", [str(d / "noconfig"), "me/x"], "not a model folder"),
        Case("models and checkpoints", "push no card", "push", [str(d / "badconfig"), "me/x"], "no README.md"),
        Case("models and checkpoints", "tokenizer cannot write the target", "train",
             ["--data_dir", str(d / "ru"), *FAST_RUN, "--target_lang", "ru", "--test_split", "none",
              "--model_name_or_path", str(final)],
             "of the ru training target characters"),
        Case("models and checkpoints", "tokenizer cannot write the target, translation", "translate",
             [*text, "--target_lang", "ru"], "of the letters of ru"),
        Case("models and checkpoints", "tokenizer cannot write the target, report", "bias_report",
             ["--data", str(d / "ru.csv"), "--model", str(final), "--out", str(d / "report")],
             "of the ru reference characters"),
        Case("flags", "flag typo", "train", [*ok_args, "--max_step", "3"], "unknown key 'max_step'; did you mean"),
        Case("flags", "flag type", "train", [*ok_args, "--max_steps", "many"], "--max_steps"),
        Case("flags", "negative lr", "train", [*ok_args, "--learning_rate", "-1"], "--learning_rate: must be > 0"),
        Case("flags", "zero budget", "train", [*ok_args, "--max_tokens", "0"], "--max_tokens: must be > 0"),
        Case("flags", "eval_steps 0", "train", [*ok_args, "--eval_steps", "0"], "--eval_steps: must be > 0"),
        Case("flags", "smoothing", "train", [*ok_args, "--label_smoothing", "1.5"], "--label_smoothing: must be in"),
        Case("flags", "fraction", "train", ["--train_file", str(d / "gender.csv"), *FAST_RUN,
             "--validation_fraction", "1"], "--validation_fraction"),
        Case("flags", "preset", "train", [*ok_args, "--model", "transformer-huge"], "--model: unknown preset"),
        Case("flags", "layout no class has", "train", [*ok_args, "--normalize_before", "true", "--share_embeddings",
             "none"], "--share_embeddings none with --normalize_before True and --positions learned: no transformers"),
        Case("flags", "train num_beams 0", "train", [*ok_args, "--num_beams", "0"], "--num_beams: must be > 0, got 0"),
        Case("flags", "train length_penalty nan", "train", [*ok_args, "--length_penalty", "nan"],
             "--length_penalty: must be finite, got nan"),
        Case("flags", "train metric", "train", [*ok_args, "--metric_for_best_model", "blue"],
             "--metric_for_best_model: invalid choice"),
        Case("flags", "paper_bleu selection unscored", "train", [*ok_args, "--metric_for_best_model", "paper_bleu"],
             "--metric_for_best_model paper_bleu: needs --paper_bleu (moses-lc, moses or tokenized)"),
        Case("flags", "train precision", "train", [*ok_args, "--mixed_precision", "fp8"], "--mixed_precision"),
        Case("flags", "train CTranslate2 type", "train", [*ok_args, "--export_ct2", "int3"], "--export_ct2: 'int3'"),
        Case("flags", "bias report without data", "train", [*ok_args, "--bias_report_split", "dev"],
             "--bias_report_split dev: needs --mtgeneval_dir"),
        Case("flags", "WinoMT folder missing", "train", [*ok_args, "--winomt_dir", str(d / "nowhere")],
             "--winomt_dir " + str(d / "nowhere") + ": not a folder"),
        Case("flags", "WinoMT folder without its files", "train", [*ok_args, "--winomt_dir", str(d / "ok")], "en.txt"),
        Case("flags", "hub id alone", "train", [*ok_args, "--hub_model_id", "me/x"], "--hub_model_id: only used with"),
        Case("flags", "hub id", "train", [*ok_args, "--push_to_hub", "--hub_model_id", "me/a b"],
             "--hub_model_id: 'me/a b'"),
        Case("flags", "push repo id", "push", [str(final), "me/x/y"], "REPO_ID: 'me/x/y' is not a hub repository id"),
        Case("flags", "translate num_beams 0", "translate", [*text, "--num_beams", "0"], "--num_beams: must be > 0"),
        Case("flags", "translate max_new_tokens 0", "translate", [*text, "--max_new_tokens", "0"],
             "--max_new_tokens: must be > 0, got 0"),
        Case("flags", "translate batch_size 0", "translate", [*text, "--batch_size", "0"], "--batch_size: must be > 0"),
        Case("flags", "translate length_penalty", "translate", [*text, "--length_penalty", "inf"],
             "--length_penalty: must be finite"),
        Case("flags", "translate max_len_b", "translate", [*text, "--max_len_b=-1"], "--max_len_b: must be >= 0"),
        Case("flags", "translate engine", "translate", [*text, "--engine", "fast"], "--engine: invalid choice: 'fast'"),
        Case("flags", "translate dtype", "translate", [*text, "--dtype", "fp8"], "--dtype: invalid choice: 'fp8'"),
        Case("flags", "translate output", "translate", ["--model", str(final), "--output", str(d / "o.txt")],
             "--output"),
        Case("flags", "translate MBR setting alone", "translate", [*text, "--mbr_samples", "4"],
             "--mbr_samples: only used with --decoding mbr"),
        Case("flags", "translate epsilon with ct2", "translate", [*text, "--decoding", "mbr", "--engine", "ct2",
             "--epsilon", "0.1"], "--epsilon: CTranslate2 has no epsilon sampling; with --engine ct2 use --top_p"),
        Case("flags", "translate decoding", "translate", [*text, "--decoding", "greedy"], "--decoding: invalid choice"),
        Case("flags", "report top_p 0", "bias_report", [*report, "--top_p", "0"], "--top_p: must be in (0, 1]"),
        Case("flags", "report MBR without a model", "bias_report", [*report, "--decoding", "mbr"],
             "--decoding: only used with --model"),
        Case("flags", "train mbr_samples 0", "train", [*ok_args, "--mbr_samples", "0"], "--mbr_samples: must be > 0"),
        Case("flags", "train epsilon 1", "train", [*ok_args, "--epsilon", "1"], "--epsilon: must be in [0, 1)"),
        Case("flags", "report num_beams 0", "bias_report", [*report, "--num_beams", "0"], "--num_beams: must be > 0"),
        Case("flags", "report max_len_a", "bias_report", [*report, "--max_len_a=-0.5"], "--max_len_a: must be >= 0"),
        Case("flags", "report split", "bias_report", [*report, "--split", "train"], "--split: invalid choice"),
        Case("flags", "report bootstrap", "bias_report", [*report, "--bootstrap_samples=-1"], "--bootstrap_samples"),
        Case("flags", "benchmark num_beams 0", "benchmark", [*bench, "--num_beams", "0"], "--num_beams: must be > 0"),
        Case("flags", "benchmark threads 0", "benchmark", [*bench, "--threads", "0"], "--threads: must be > 0"),
        Case("flags", "CTranslate2 type", "export_ct2", [str(final), str(d / "ct2"), "--quantization", "int3"],
             "int3"),
        Case("flags", "demo corpus size", "demo_corpus", [str(d / "corpus"), "--n_train=-1"], "--n_train"),
        Case("flags", "average none", "average", [str(run), str(d / "avg"), "--last", "0"], "--last: must be >= 1"),
        Case("output", "output_dir a file", "train", [*ok_args, "--output_dir", str(d / "text.txt")],
             "exists and is not a folder"),
        Case("output", "output_dir in a file", "train", [*ok_args, "--output_dir", str(d / "text.txt" / "run")],
             "text.txt is a file, not a folder"),
        Case("output", "output_dir on a full disk", "train", [*ok_args, "--output_dir", str(d / "full" / "run")],
             "(No space left on device)", "full"),
        Case("output", "output_dir read-only", "train", [*ok_args, "--output_dir", str(d / "readonly" / "run")],
             "(Read-only file system)", "readonly"),
        Case("output", "preprocess on a full disk", "preprocess", [*ok_args, "--output_dir", str(d / "full" / "p")],
             "(No space left on device)", "full"),
        Case("output", "translation into a file", "translate", ["--model", str(final), "--input", str(d / "text.txt"),
             "--output", str(d / "text.txt" / "o.txt")], "o.txt: " + str(d / "text.txt") + " is a file, not a folder"),
        Case("output", "translation into a folder", "translate", ["--model", str(final), "--input",
             str(d / "text.txt"), "--output", str(d / "ok")], "is a folder"),
        Case("output", "translation read-only", "translate", ["--model", str(final), "--input", str(d / "text.txt"),
             "--output", str(d / "readonly" / "o.txt")], "(Read-only file system)", "readonly"),
        Case("output", "report out a file", "bias_report", [*report[:-1], str(d / "text.txt")],
             "exists and is not a folder"),
        Case("output", "report on a full disk", "bias_report", [*report[:-1], str(d / "full" / "r")],
             "(No space left on device)", "full"),
        Case("output", "demo corpus read-only", "demo_corpus", [str(d / "readonly" / "corpus")],
             "(Read-only file system)", "readonly"),
        Case("output", "demo corpus into a file", "demo_corpus", [str(d / "text.txt")], "exists and is not a folder"),
        Case("output", "export out taken", "export", [str(run), str(d / "taken")], "OUT"),
        Case("output", "export on a full disk", "export", [str(run), str(d / "full" / "exported")],
             "(No space left on device)", "full"),
        Case("data", "prepare a missing input", "prepare_text", [str(d / "missing"), str(d / "lc")],
             f"INPUT {d / 'missing'}: no such file or folder"),
        Case("data", "prepare a file of no language", "prepare_text", [str(d / "text.txt"), str(d / "lc")],
             "text.txt: its name ends in no language code Moses knows"),
        Case("flags", "prepare an unknown way", "prepare_text", [str(d / "ok"), str(d / "lc"), "--how", "spm"],
             "--how: invalid choice: 'spm'"),
        Case("output", "prepared copy over its input", "prepare_text", [str(d / "ok"), str(d / "ok")],
             f"OUTPUT {d / 'ok'}: exists and is not empty"),
        Case("output", "prepared copy inside its input", "prepare_text", [str(d / "ok"), str(d / "ok" / "lc")],
             "lc: lies inside the input INPUT"),
        Case("output", "prepared copy read-only", "prepare_text", [str(d / "ok"), str(d / "readonly" / "lc")],
             "(Read-only file system)", "readonly"),
        Case("output", "average read-only", "average", [str(run), str(d / "readonly" / "avg"), "--last", "1"],
             "(Read-only file system)", "readonly"),
        Case("output", "translation over its input", "translate", ["--model", str(final), "--input",
             str(d / "text.txt"), "--output", str(d / "text.txt")], f"{d / 'text.txt'}: is the input --input"),
        Case("output", "translation over its input by a link", "translate", ["--model", str(final), "--input",
             str(d / "text.txt"), "--output", str(d / "alias.txt")], f"{d / 'alias.txt'}: is the input --input"),
        Case("output", "translation into the model", "translate", ["--model", str(final), "--input",
             str(d / "text.txt"), "--output", str(final / "hyps.txt")], "hyps.txt: lies inside the input --model"),
        Case("output", "output_dir is the data", "train", [*ok_args, "--output_dir", str(d / "ok")],
             f"--output_dir {d / 'ok'}: is the input --data_dir"),
        Case("output", "output_dir inside the data", "train", [*ok_args, "--output_dir", str(d / "ok" / "run")],
             "run: lies inside the input --data_dir"),
        Case("output", "output_dir holds the model", "train", [*ok_args, "--model_name_or_path", str(final),
             "--output_dir", str(run)], f"--output_dir {run}: contains the input --model_name_or_path"),
        Case("output", "preprocess into the data", "preprocess", [*ok_args, "--output_dir", str(d / "ok" / "p")],
             "p: lies inside the input --data_dir"),
        Case("output", "report into the model", "bias_report", ["--data", str(d / "gender.csv"), "--model",
             str(final), "--out", str(final / "report")], "report: lies inside the input --model"),
        Case("output", "report over its hypotheses", "bias_report", ["--data", str(d / "gender.csv"), "--hyp_dir",
             str(d / "ok"), "--out", str(d / "ok")], f"--out {d / 'ok'}: is the input --hyp_dir"),
        Case("output", "export into the checkpoints", "export", [str(run), str(run / "checkpoints" / "exported")],
             "exported: lies inside the input CHECKPOINT's run"),
        Case("output", "average into the checkpoints", "average", [str(run), str(run / "checkpoints" / "avg"),
             "--last", "1"], "avg: lies inside the input RUN"),
        Case("output", "CTranslate2 over its model", "export_ct2", [str(final), str(final)],
             f"OUT {final}: is the input MODEL"),
        Case("output", "CTranslate2 into its model", "export_ct2", [str(final), str(final / "ct2")],
             "ct2: lies inside the input MODEL"),
        Case("output", "comparison into a report", "compare", [str(d / "ok"), str(d / "taken"), "--out",
             str(d / "ok")], f"--out {d / 'ok'}: is the input BEFORE"),
        Case("output", "benchmark record over its source", "benchmark", [*bench, "--json", str(d / "text.txt")],
             f"--json {d / 'text.txt'}: is the input --source"),
        Case("output", "preprocess over the data", "preprocess", [*ok_args, "--output_dir", str(d / "ok")],
             f"--output_dir {d / 'ok'}: is the input --data_dir"),
        Case("output", "export over its run", "export", [str(run), str(run)], f"OUT {run}: exists and is not empty"),
        Case("output", "average over its run", "average", [str(run), str(run), "--last", "1"],
             f"OUT {run}: exists and is not empty"),
        Case("output", "benchmark record into the model", "benchmark", [*bench, "--json", str(final / "b.json")],
             "b.json: lies inside the input --model"),
        Case("output", "comparison inside a report", "compare", [str(d / "ok"), str(d / "taken"), "--out",
             str(d / "ok" / "cmp")], "cmp: lies inside the input BEFORE"),
        Case("output", "study over a system", "study", ["--systems", f"a={d / 'ok'},b={d / 'hyps'}", "--langs", "de",
             "--out", str(d / "ok")], f"--out {d / 'ok'}: is the input --systems a"),
        Case("output", "study inside a system", "study", ["--systems", f"a={d / 'ok'},b={d / 'hyps'}", "--langs",
             "de", "--out", str(d / "hyps" / "study")], "study: lies inside the input --systems b"),
        Case("output", "output_dir in use", "train", [*ok_args, "--output_dir", str(d / "held")],
             "in use by another run (host "),
        Case("output", "preprocess beside a run", "preprocess", [*ok_args, "--output_dir", str(d / "held")],
             "in use by another run (host "),
        Case("output", "disk full while setting up", "train", [*ok_args, "--output_dir", str(d / "filling" / "run")],
             "config.yaml: cannot write (No space left on device)", "filling"),
        Case("models and checkpoints", "translate an encoder-only model", "translate", ["--model", str(d / "bert"),
             "--text", "Hi."], "config.json: not a sequence-to-sequence model: bert"),
        Case("models and checkpoints", "train from an encoder-only model", "train",
             [*ok_args, "--model_name_or_path", str(d / "bert")], "not a sequence-to-sequence model: bert"),
        Case("models and checkpoints", "translate truncated weights", "translate", ["--model", str(d / "cut"),
             "--text", "Hi."], f"--model {d / 'cut'}: model.safetensors is truncated or corrupt: header"),
        Case("models and checkpoints", "report truncated weights", "bias_report", ["--data", str(d / "ru.csv"),
             "--model", str(d / "cut"), "--out", str(d / "report")], "model.safetensors is truncated or corrupt"),
        Case("models and checkpoints", "train from truncated weights", "train",
             [*ok_args, "--model_name_or_path", str(d / "cut")], "model.safetensors is truncated or corrupt"),
        Case("models and checkpoints", "CTranslate2 of truncated weights", "export_ct2", [str(d / "cut"),
             str(d / "ct2")], f"MODEL {d / 'cut'}: model.safetensors is truncated or corrupt"),
        Case("models and checkpoints", "CTranslate2 of no model", "export_ct2", [str(d / "noconfig"), str(d / "ct2")],
             "no config.json"),
        Case("models and checkpoints", "report model missing", "bias_report", ["--data", str(d / "ru.csv"),
             "--model", str(d / "nomodel"), "--out", str(d / "report")], f"--model {d / 'nomodel'}: no such folder"),
        Case("flags", "train stray word", "train", [*ok_args, "--max_steps", "3", "4"],
             "command line: unexpected '4' after --max_steps 3"),
        Case("flags", "translate stray word", "translate", [*text, "extra"], "unrecognized arguments: extra"),
        Case("flags", "report stray word", "bias_report", [*report, "extra"], "unrecognized arguments: extra"),
        Case("flags", "export stray word", "export", [str(run), str(d / "exported"), "extra"],
             "unrecognized arguments: extra"),
        Case("flags", "translate abbreviation", "translate", [*text, "--num_beam", "2"],
             "unrecognized arguments: --num_beam 2"),
        Case("flags", "train seed past numpy's", "train", [*ok_args, "--seed", str(2**32)],
             "--seed: must be in [0, 4294967295]"),
        Case("flags", "translate seed negative", "translate", [*text, "--seed=-1"], "--seed: must be in [0,"),
        Case("flags", "demo corpus seed", "demo_corpus", [str(d / "corpus"), "--seed", str(2**32)], "--seed: must"),
        Case("flags", "vocabulary below the special tokens", "train", [*ok_args, "--vocab_size", "4"],
             "--vocab_size: must be > 4"),
        Case("flags", "benchmark minutes", "benchmark", ["quality", "--minutes", "0"], "--minutes: must be > 0"),
        Case("flags", "translate device the machine lacks", "translate", [*text, "--device", "cuda:99"],
             "--device cuda:99: this machine has no such CUDA device; it has cpu"),
        Case("flags", "CTranslate2 device the machine lacks", "translate", ["--model", str(run / "final_ct2"),
             "--engine", "ct2", "--text", "Hi.", "--device", "cuda:99"], "no such CUDA device; it has cpu"),
        Case("flags", "report device the machine lacks", "bias_report", ["--data", str(d / "gender.csv"), "--model",
             str(final), "--out", str(d / "report"), "--device", "cuda:99"], "no such CUDA device"),
        Case("flags", "translate no device", "translate", [*text, "--device", "gpu"], "--device gpu: not a device"),
        Case("data", "ragged CSV row", "train", ["--train_file", str(d / "ragged.csv"), *FAST_RUN],
             "ragged.csv: line 3 has 1 field, its header line 2"),
        Case("data", "CSV row with a field too many", "train", ["--train_file", str(d / "wide.csv"), *FAST_RUN],
             "wide.csv: line 3 has 3 fields, its header line 2"),
        Case("data", "ragged report row", "bias_report", ["--data", str(d / "ragged_gender.csv"), "--hyp_dir",
             str(d / "hyps"), "--out", str(d / "report")], "ragged_gender.csv: line 3 has 4 fields, its header line 5"),
        Case("data", "TSV row whose quotes hide a tab", "train", ["--train_file", str(d / "quoted.tsv"), *FAST_RUN],
             "quoted.tsv: line 4 has 3 fields, its header line 2"),
        Case("data", "language columns that disagree", "train", ["--train_file", str(d / "disagree.csv"),
             "--target_langs", "de,es", *FAST_RUN],
             "disagree.csv: line 3: the language columns disagree (lang 'de', language_pair 'en-es')"),
        Case("data", "a region as a language", "train", ["--train_file", str(d / "region.csv"), "--target_langs",
             "de,en", *FAST_RUN], "region.csv: line 3: lang 'us' is not a language code"),
        Case("data", "overlapping languages asked", "train", ["--train_file", str(d / "pt.csv"), "--target_langs",
             "pt,pt_BR", *FAST_RUN], "--target_langs: pt and pt_BR overlap (a pt-BR row would be both)"),
        Case("data", "line break in a report table's cell", "bias_report", ["--data", str(d / "newline_gender.csv"),
             "--hyp_dir", str(d / "hyps"), "--out", str(d / "report")],
             "newline_gender.csv: line 2, column 'label': a line break (U+000A) in the cell"),
    ]  # fmt: skip
    return found


#: folder -> errno: the file system under each folder refuses writes (:func:`refuse_writes`)
REFUSING: dict[Path, int] = {}
FAULTS = {"full": errno.ENOSPC, "readonly": errno.EROFS, "filling": errno.ENOSPC}
#: folders whose disk fills up once a run has started: its first probe, folders and lock fit, nothing after them
FILLING: set[Path] = set()
WRITES = ("open", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.truncate")


def refuse_writes(event: str, args: tuple) -> None:
    """An audit hook: a write under a folder of :data:`REFUSING` fails with that file system's OSError (no space,
    read-only), raised by the very open/mkdir/rename call the code under test makes. The tests run as root, whom
    permissions do not stop, and mounting a full or read-only file system needs privileges a runner lacks."""
    if not REFUSING or event not in WRITES:
        return
    if event == "open" and not (args[2] or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND):
        return
    for target in args[:2] if event == "os.rename" else args[:1]:
        if isinstance(target, (str, bytes, os.PathLike)):
            path = Path(os.fsdecode(target)).absolute()
            for folder, code in REFUSING.items():
                if path == folder or folder in path.parents:
                    if folder in FILLING and (event in ("os.mkdir", "os.remove", "os.rmdir") or path.name in
                                              ("train.lock",) or path.name.startswith(".mtkit-probe-")):  # fmt: skip
                        continue
                    raise OSError(code, os.strerror(code), str(path))


sys.addaudithook(refuse_writes)  # inert while REFUSING is empty


def digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_bad_input_is_one_clear_line(tiny_run, tmp_path):
    d = tmp_path / "in"
    files(d)
    shutil.copytree(tiny_run / "final", d / "noweights", ignore=shutil.ignore_patterns("model.safetensors"))
    shutil.copytree(tiny_run / "final", d / "cut")  # its weights cut short, as by a full disk or a broken copy
    weights = (d / "cut" / "model.safetensors").read_bytes()
    (d / "cut" / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    bert = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(bert).save_pretrained(d / "bert")  # an encoder alone: no translation model
    holder = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(), "id": "test"}
    (d / "held").mkdir()
    (d / "held" / "train.lock").write_text(json.dumps(holder))  # a run in progress (this live process) holds it
    (d / "otherrun").mkdir()  # the tiny run's folder, but of the next preset up
    config = (tiny_run / "config.yaml").read_text().replace("transformer-tiny", "transformer-small")
    (d / "otherrun" / "config.yaml").write_text(config)
    shutil.copytree(tiny_run / "tokenizer", d / "otherrun" / "tokenizer")
    before, run_before = digest(tmp_path), digest(tiny_run)
    found = cases(d, tiny_run)
    problems = []
    for case in found:
        out, argv = tmp_path / "out" / re.sub(r"\W+", "_", case.name), case.argv
        if case.script in ("train", "preprocess") and "--output_dir" not in argv:
            argv = [*argv, "--output_dir", str(out)]
        if case.refusing:
            REFUSING[(d / case.refusing).absolute()] = FAULTS[case.refusing]
            FILLING.update([(d / case.refusing).absolute()] if case.refusing == "filling" else [])
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    code = SCRIPTS[case.script](argv)
                except SystemExit as exit_:
                    code = exit_.code
        finally:
            REFUSING.clear()
            FILLING.clear()
        errors = [line for line in err.getvalue().splitlines() if line.startswith("error")]
        if code != 2 or "Traceback" in err.getvalue() or len(errors) != 1 or case.expected not in errors[0]:
            problems.append(f"{case.name}: status {code}, {errors or err.getvalue()[-300:]!r}")
        elif not re.search(r"--\w|/|\b[A-Z_]{3,}\b|key '\w+'", errors[0]):  # a flag, path, argument or key
            problems.append(f"{case.name}: names no file or flag: {errors[0]!r}")
    assert not problems, "\n".join(problems)
    assert digest(tmp_path) == before  # nothing written, no input changed
    assert digest(tiny_run) == run_before  # the run resumed, exported and translated with is untouched
    counts = {category: sum(c.category == category for c in found) for category in CATEGORIES}
    assert {c.category for c in found} == set(CATEGORIES) and len(found) >= 60
    assert all(counts[category] >= least for category, least in CATEGORIES.items()), counts


#: the scripts with no output that could be one of their inputs, and why
APART_EXEMPT = {
    "demo_corpus.py": "reads no input: it writes a corpus from its seed",
    "push_to_hub.py": "writes nothing here: it uploads",
    "benchmark_batching.py": "writes nothing: it prints its table",
    "benchmark_step.py": "train.py's flags and check (check_run_apart): train.py's cases stand for it",
    "gpu_report.py": "checks --out against --data with check_apart; a GPU host's report, not run here",
    "gpu_levers.py": "reads no input: it measures on a synthetic corpus it makes itself",
}
#: the script behind each name of :data:`SCRIPTS` (and the developer scripts whose checks are tested elsewhere)
SCRIPT_FILES = {
    "train": "train.py", "preprocess": "preprocess.py", "translate": "translate.py", "export": "export_model.py",
    "average": "average_checkpoints.py", "export_ct2": "export_ct2.py", "bias_report": "bias_report.py",
    "compare": "compare_reports.py", "benchmark": "benchmark.py", "prepare_text": "prepare_text.py",
    "study": "bias_study.py",
}  # fmt: skip


def test_every_script_refuses_an_output_that_is_or_lies_inside_an_input(tmp_path):
    """Each script that writes is run (by :func:`test_every_bad_input_is_one_clear_line`) with an output that is one
    of its inputs and with one inside an input (or holding it), and refuses both with the inputs unchanged."""
    found = cases(tmp_path / "in", tmp_path / "run")
    same = ("is the input", "exists and is not empty")  # export and average refuse any OUT with files in it
    inside = ("lies inside the input", "contains the input")
    missing = []
    for script in sorted(p.name for p in (REPO / "scripts").glob("*.py")):
        expected = [c.expected for c in found if SCRIPT_FILES.get(c.script) == script and c.category == "output"]
        if script in APART_EXEMPT:
            continue
        for relation in (same, inside):
            if not any(how in text for text in expected for how in relation):
                missing.append(f"{script}: no case whose output {relation[0].split()[0]} an input")
    assert missing == []
    assert set(SCRIPT_FILES.values()) | set(APART_EXEMPT) == {p.name for p in (REPO / "scripts").glob("*.py")}


def test_the_docs_list_the_categories_and_their_counts(tmp_path):
    page = REPO / "docs" / "troubleshooting.md"
    readme = page.read_text(encoding="utf-8").split("## When things go wrong")[1].split("\n## ")[0]
    found = cases(tmp_path, tmp_path / "run")
    assert f"holds {len(found)} such cases" in readme
    for category in CATEGORIES:
        assert f"{category} ({sum(c.category == category for c in found)}:" in readme, category


def in_process(script: str, argv: list[str]) -> tuple[object, str]:
    """``SCRIPTS[script](argv)`` run in this process: its exit status and what it wrote to stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = SCRIPTS[script](argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, err.getvalue()


def one_line_problem(code: object, stderr: str, expected: str) -> str | None:
    """What is wrong with a refusal (status 2, one ``error`` line holding ``expected``, no traceback); ``None``."""
    errors = [line for line in stderr.splitlines() if line.startswith("error")]
    if code != 2 or "Traceback" in stderr or len(errors) != 1 or expected not in errors[0]:
        return f"status {code}, {errors or stderr[-300:]!r}"
    return None


def test_a_ds_config_that_is_not_json_is_one_line(multi30k_small, tmp_path, monkeypatch):
    files(tmp_path / "in")
    for name, expected in (("ds_broken.json", "malformed JSON at line 1"), ("ds_list.json", "a JSON object")):
        monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
        monkeypatch.setenv("ACCELERATE_DEEPSPEED_CONFIG_FILE", str(tmp_path / "in" / name))
        out = tmp_path / name
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
            SCRIPTS["train"](["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out)])
        assert exit_.value.code == 2 and not out.exists()
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: deepspeed_config_file {tmp_path / 'in' / name}: ")
        assert expected in lines[0]


def test_languages_a_model_cannot_write_are_one_line(family_dir, multi30k_small, tmp_path):
    """A language a family has no code for, another target for a one-target model (opus-mt-en-de), and a value that
    is no language code: one error line naming the flag, the model and the codes it has, before anything is
    written."""
    from testing_utils import MTGENEVAL

    nllb, marian, t5 = (str(family_dir(family)) for family in ("nllb", "marian", "flan_t5"))
    table = tmp_path / "gender.jsonl"
    table.write_text(
        "".join(
            f'{{"source": "The doctor is {p}.", "reference": "x", "gender": "{g}", "language": "es"}}\n'
            for p, g in (("she", "feminine"), ("he", "masculine"))
        )
    )
    report = ["--data", str(table), "--out", str(tmp_path / "report")]
    run = ["--output_dir", str(tmp_path / "run")]
    found = [
        ("translate", ["--model", nllb, "--text", "Hi.", "--target_lang", "kl"],
         f"--target_lang: {nllb} has no language code for 'kl' (NLLB-200 codes: af (afr_Latn)"),
        ("translate", ["--model", marian, "--text", "Hi.", "--target_lang", "es"],
         f"--target_lang: {marian} is a single-target model (it translates into de only); it cannot write es"),
        ("translate", ["--model", t5, "--text", "Hi.", "--target_lang", "spanish"],
         "--target_lang: 'spanish' is not a language code"),
        ("translate", ["--model", nllb, "--text", "Hi."], f"--target_lang: required for {nllb}, which writes several"),
        ("bias_report", [*report, "--model", marian], "--target_langs: " + marian + " is a single-target model"),
        ("bias_report", [*report, "--model", nllb, "--target_langs", "spanish"],
         "--target_langs: 'spanish' is not a language code"),
        ("train", ["--data_dir", str(multi30k_small), *FAST_RUN, "--model_name_or_path", marian, "--target_lang", "fr",
                   *run], f"--target_lang: {marian} is a single-target model"),
        ("train", ["--data_dir", str(multi30k_small), *FAST_RUN, "--target_lang", "spanish", *run],
         "--target_lang: 'spanish' is not a language code"),
        ("train", ["--mtgeneval_dir", str(MTGENEVAL), "--target_langs", "de,kl",
                   "--model_name_or_path", nllb, *run], f"--target_langs: {nllb} has no language code for 'kl'"),
    ]  # fmt: skip
    before = digest(tmp_path)
    for script, argv, expected in found:
        problem = one_line_problem(*in_process(script, argv), expected)
        assert problem is None, (script, argv, problem)
    assert digest(tmp_path) == before


def test_reports_comparisons_and_decoding_refuse_bad_input_in_one_line(tiny_t5, tmp_path):
    """The newest paths (a report on hypothesis files or a model, a comparison, decoding): an output folder holding
    another benchmark's report, a flag the chosen input ignores, sizes no machine could allocate, an ``--out`` that
    cannot be made, a language code that names no language: each one error line naming the flag, status 2, before
    anything is written (every file under the test's folder unchanged)."""
    d = tmp_path / "in"
    d.mkdir()
    rows = [("1", "She sings.", "Ella canta.", "f"), ("1", "He sings.", "Él canta.", "m")]
    (d / "pairs.csv").write_text("ID,source,target,gender,lang\n" + "".join(",".join(r) + ",es\n" for r in rows))
    (d / "hyps").mkdir()
    for gender, line in (("feminine", "Ella canta."), ("masculine", "Él canta.")):
        (d / "hyps" / f"es.{gender}.txt").write_text(line + "\n", encoding="utf-8")
    (d / "twice").mkdir()
    for name in ("es.feminine.txt", "spa.feminine.txt", "es.masculine.txt"):
        (d / "twice" / name).write_text("Ella canta.\n", encoding="utf-8")
    (d / "winomt").mkdir()
    (d / "winomt" / "metrics.json").write_text('{"benchmark": "winomt", "language": "de"}\n', encoding="utf-8")
    (d / "broken").mkdir()
    (d / "broken" / "metrics.json").write_text("not json\n", encoding="utf-8")
    (d / "file.txt").write_text("x\n", encoding="utf-8")
    hyps = ["--data", str(d / "pairs.csv"), "--hyp_dir", str(d / "hyps")]
    model = ["--data", str(d / "pairs.csv"), "--model", str(tiny_t5), "--out", str(tmp_path / "out")]
    report = [*hyps, "--out", str(tmp_path / "out")]
    plain_run = ["--train_file", str(d / "pairs.csv"), *FAST_RUN, "--output_dir", str(tmp_path / "out")]
    huge = str(10**9)
    found = [
        ("bias_report", [*hyps, "--out", str(d / "winomt")], f"--out {d / 'winomt'}: holds a winomt report"),
        ("bias_report", [*hyps, "--out", str(d / "broken")], "holds a metrics.json that is no report"),
        ("bias_report", [*report, "--bootstrap_samples", str(10**12)], f"--bootstrap_samples {10**12}: "),
        ("bias_report", [*report, "--num_beams", "4"], "--num_beams: only used with --model"),
        ("bias_report", [*report, "--batch_size", "8"], "--batch_size: only used with --model"),
        ("bias_report", [*report, "--device", "cuda:99"], "--device: only used with --model"),
        ("bias_report", [*report, "--engine", "ct2"], "--engine: only used with --model"),
        ("bias_report", [*report, "--dtype", "fp16"], "--dtype: only used with --model"),
        ("bias_report", [*report, "--force"], "--force: only used with --model"),
        ("bias_report", [*report, "--decoding", "mbr"], "--decoding: only used with --model"),
        ("bias_report", [*report, "--update_card"], "--update_card: only used with --model a local model folder"),
        ("bias_report", [*report, "--target_langs", "und"], "--target_langs: 'und' is not a language code"),
        ("bias_report", [*report, "--target_langs", "qaa"], "--target_langs: 'qaa' is not a language code"),
        ("bias_report", ["--data", str(d / "pairs.csv"), "--hyp_dir", str(d / "twice"), "--out",
                         str(tmp_path / "out")], "es.feminine.txt and spa.feminine.txt, two files"),
        ("bias_report", [*hyps, "--out", str(d / "file.txt" / "r")], f"{d / 'file.txt'} is a file, not a folder"),
        ("bias_report", [*model, "--num_beams", huge], f"--num_beams {huge}: a batch of 32 sentences x {huge}"),
        ("bias_report", [*model, "--decoding", "mbr", "--mbr_samples", huge], f"--mbr_samples {huge}: a batch of"),
        ("bias_report", [*model, "--mbr_samples", "4"], "--mbr_samples: only used with --decoding mbr"),
        ("translate", ["--model", str(tiny_t5), "--text", "Hi.", "--num_beams", huge], f"--num_beams {huge}: "),
        ("compare", [str(d / "hyps"), str(d / "winomt"), "--out", str(d / "file.txt" / "c")],
         f"--out {d / 'file.txt' / 'c'}: {d / 'file.txt'} is a file, not a folder"),
        ("train", [*plain_run, "--replay_ratio", "0.3"], "--replay_ratio: only used with --gender_data"),
        ("train", [*plain_run, "--no_tuning_pairs"], "--tuning_pairs: only used with --gender_data"),
        ("train", [*plain_run, "--gender_data", str(d / "pairs.csv"), "--target_langs", "qaa"],
         "--target_langs: 'qaa' is not a language code"),
    ]  # fmt: skip
    before = digest(tmp_path)
    problems = [(script, argv[-2:], one_line_problem(*in_process(script, argv), expected)) for script, argv, expected
                in found]  # fmt: skip
    assert not [p for p in problems if p[2]], "\n".join(str(p) for p in problems if p[2])
    assert digest(tmp_path) == before and not (tmp_path / "out").exists()
