"""The model card (``README.md`` in the hub's format) of every model folder a run leaves: ``final/``, a checkpoint
exported by ``scripts/export_model.py``, an average of checkpoints. Written from what the run recorded: its
``config.yaml`` (a :class:`RunConfig`), its record (:class:`~mtkit.train.record.RunRecord`: test scores, data sizes,
launcher and hardware), ``metrics.jsonl`` (validation scores, tokens and time per logging interval) and the model
folder itself (weights, ``generation_config.json``, ``prompt.json``). The metadata block is built with
``huggingface_hub``'s :class:`~huggingface_hub.ModelCardData` (``model-index`` results the hub renders: BLEU/chrF per
test set and language); the gender-bias sections are added by :mod:`mtkit.export.card_bias`.
"""

from __future__ import annotations

import json
import math
import platform
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from bias_eval.core.markdown import table
from bias_eval.core.textio import atomic_write
from mtkit.config import RunConfig
from mtkit.data.corpus import describe_counts
from mtkit.data.languages import ModelLanguages
from mtkit.data.origin import DEMO_ID, DEMO_NAME, demo_corpus_root
from mtkit.data.prompts import Prompt
from mtkit.evaluation.scores import scoring
from mtkit.model.folders import index_shards
from mtkit.model.layouts import SHAPE_KEYS
from mtkit.train.record import RunRecord
from mtkit.train.tracking import read_metrics, validation_records

CARD = "README.md"
MTKIT_TAG = "mtkit"
#: the accelerate config in accelerate_configs/ of each strategy, for the command that reproduces a run
LAUNCHERS = {"MULTI_CPU": "cpu_ddp", "MULTI_GPU": "multi_gpu", "FSDP": "fsdp", "DEEPSPEED": "deepspeed_zero{stage}"}
STRATEGIES = {"NO": "no distribution", "MULTI_CPU": "DDP on CPUs", "MULTI_GPU": "DDP", "DEEPSPEED": "DeepSpeed"}
LICENSE_NOTE = (
    "Not set: `license: other` above is a placeholder. Replace it with the license the training data (and the base "
    "model, when fine-tuned) allow before sharing the model."
)


@dataclass(frozen=True)
class Weights:
    """Which weights of the run a model folder holds."""

    what: str  # e.g. "the best checkpoint by validation bleu (update 40)"
    trained_to: int  # the updates behind them: tokens and time are counted up to here
    valid_step: int | None  # the update whose validation scores are theirs (None: not evaluated, e.g. averaged)
    test: bool  # whether results.json's test scores are theirs (final/)
    command: str = ""  # the command that made the folder from the run, when not the run itself


def final_weights(cfg: RunConfig, results: dict[str, Any]) -> Weights:
    """What ``final/`` holds, as :meth:`mtkit.train.trainer.Trainer.export` chose it: the mean of the last epoch
    checkpoints with ``--average_last_epochs``, the best checkpoint by ``--metric_for_best_model`` with
    ``--load_best_model_at_end`` when it is not the last, else the last update."""
    step, best = results["step"], results.get("best_step")
    if results.get("averaged_steps"):  # --average_last_epochs
        steps = results["averaged_steps"]
        what = f"the mean of the last {len(steps)} epoch checkpoints (updates {', '.join(map(str, steps))} of {step})"
        return Weights(what, max(steps), None, test=True)
    if cfg.train.load_best_model_at_end and best is not None and best != step:
        what = f"the best checkpoint by validation {results['metric_for_best_model']} (update {best} of {step})"
        return Weights(what, best, best, test=True)
    return Weights(f"the last update ({step})", step, step, test=True)


def environment(accelerator, zero_stage: int | None, splits: dict[str, int]) -> dict[str, Any]:
    """What the card says about how a run ran: strategy, processes, precision, device, data sizes."""
    device = accelerator.device
    name = platform.processor() or platform.machine()
    if device.type == "cuda":
        import torch

        name = torch.cuda.get_device_name(device)
    elif Path("/proc/cpuinfo").is_file():
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        name = found.group(1).strip() if found else name
    return {
        "distributed_type": accelerator.distributed_type.value,
        "num_processes": accelerator.num_processes,
        "zero_stage": zero_stage,
        "mixed_precision": accelerator.mixed_precision,
        "device": device.type,
        "device_name": name,
        "pairs": dict(splits),
    }


def parameter_count(model_dir: Path) -> int | None:
    """Weights stored in ``model_dir``'s safetensors files (a tied tensor once), from their headers alone."""
    from safetensors import safe_open

    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        files = index_shards(index)
    else:
        files = ["model.safetensors"] if (model_dir / "model.safetensors").is_file() else []
    total = 0
    for name in files:
        with safe_open(str(model_dir / name), framework="pt") as f:
            for key in f.keys():
                shape = f.get_slice(key).get_shape()
                total += math.prod(shape)
    return total or None


def training_log(run_dir: Path, up_to: int) -> dict[str, Any]:
    """From ``metrics.jsonl``: target tokens and seconds of the updates up to ``up_to`` (the sum over logging
    intervals of ``tgt_tok_s x elapsed_s`` and of ``elapsed_s``), and the validation records by update."""
    rows = read_metrics(run_dir)
    trained = [r for r in rows if "elapsed_s" in r and r["step"] <= up_to]
    return {
        "tokens": round(sum(r["tgt_tok_s"] * r["elapsed_s"] for r in trained)),
        "seconds": sum(r["elapsed_s"] for r in trained),
        "valid": validation_records(rows),
    }


def scores(record: dict[str, Any], prefix: str, langs: list[str]) -> dict[str, dict[str, float]]:
    """``{lang: {"bleu": .., "chrf": ..}}`` from a record with ``<prefix>_bleu`` (one language) or
    ``<prefix>_<lang>_bleu`` (several)."""
    found: dict[str, dict[str, float]] = {}
    for lang in langs:
        key = f"{prefix}_{lang}" if len(langs) > 1 else prefix
        if record.get(f"{key}_bleu") is not None:
            found[lang] = {"bleu": record[f"{key}_bleu"], "chrf": record.get(f"{key}_chrf")}
            found[lang]["paper_bleu"] = record.get(f"{key}_paper_bleu")
    return found


def data_source(cfg: RunConfig) -> tuple[str, str, list[str]]:
    """``(dataset type, description, hub datasets)`` of the run's data, as it is: a hub id where there is one,
    MT-GenEval only when the data is MT-GenEval, the toolkit's demo corpus as such, else the local folder or file
    named as local files."""
    d = cfg.data
    if d.dataset_name:
        config = f" ({d.dataset_config_name})" if d.dataset_config_name else ""
        return d.dataset_name, f"hub dataset `{d.dataset_name}`{config}", [d.dataset_name]
    local = d.mtgeneval_dir or d.data_dir or d.train_file
    if demo_corpus_root(local) is not None:
        return DEMO_ID, f"{DEMO_NAME} in `{Path(local).name}/` (generated by `scripts/demo_corpus.py`)", []
    if d.mtgeneval_dir:
        from mtkit.data.mtgeneval_hub import HUB_ID

        return HUB_ID, f"MT-GenEval ({d.mtgeneval_split} split, counterfactual pairs)", [HUB_ID]
    if d.data_dir:
        name = Path(d.data_dir).name
        return name, f"local parallel files in `{name}/` (`--data_dir`)", []
    name = Path(d.train_file or "data").name
    return Path(name).stem, f"the local file `{name}` (`--train_file`)", []


def reproduce(cfg: RunConfig, env: dict[str, Any]) -> str:
    """The command that trains the run again: every key that differs from its default, under its launcher."""
    defaults = RunConfig().flat()
    flags = {k: v for k, v in cfg.flat().items() if v != defaults[k]}
    if env.get("mixed_precision"):
        flags["mixed_precision"] = env["mixed_precision"]  # what ran, whatever the launcher config said
    parts = ["scripts/train.py"]
    for key, value in flags.items():
        parts += [f"--{key}", str(value).lower() if isinstance(value, bool | None) else str(value)]  # None: none
    strategy, n = env.get("distributed_type", "NO"), env.get("num_processes", 1)
    if strategy == "NO" and n == 1:
        return shlex.join(["python", *parts])
    config = LAUNCHERS.get(strategy, "multi_gpu").format(stage=env.get("zero_stage") or 2)
    launcher = ["accelerate", "launch", "--config_file", f"accelerate_configs/{config}.yaml", "--num_processes"]
    return shlex.join([*launcher, str(n), *parts])


def _eval_results(cfg: RunConfig, split: str, found: dict[str, dict[str, float]]) -> list[EvalResult]:
    dataset_type, _, _ = data_source(cfg)
    name = dataset_type.rpartition("/")[2] if dataset_type != DEMO_ID else "mtkit demo corpus"
    results = []
    for lang, values in found.items():
        for metric, title in (("bleu", "BLEU"), ("chrf", "chrF")):
            if values.get(metric) is not None:
                results.append(EvalResult(
                    task_type="translation", task_name="Translation", dataset_type=dataset_type,
                    dataset_name=f"{name} ({split})", dataset_config=f"{cfg.data.source_lang}-{lang}",
                    dataset_split=split, metric_type=metric, metric_name=title, metric_value=round(values[metric], 2),
                ))  # fmt: skip
    return results


def metadata(cfg: RunConfig, model_name: str, model_type: str, results: list[EvalResult]) -> ModelCardData:
    """The YAML block: languages, license placeholder, pipeline tag, tags, datasets, base model, model-index."""
    base = cfg.model.model_name_or_path
    _, _, datasets = data_source(cfg)
    tags = ["translation", MTKIT_TAG, model_type] + (["lora"] if cfg.model.lora_r else [])
    return ModelCardData(
        language=[cfg.data.source_lang, *cfg.data.languages()],
        license="other",
        library_name="transformers",
        pipeline_tag="translation",
        tags=tags,
        datasets=datasets or None,
        base_model=base if base and not Path(base).exists() else None,  # a hub id; a local folder means nothing there
        metrics=["bleu", "chrf"],
        model_name=model_name if results else None,
        eval_results=results or None,
    )


def training_card(model_dir: Path, cfg: RunConfig, run_dir: Path, weights: Weights, record: RunRecord) -> ModelCard:
    """The card of ``model_dir``, a model of the run in ``run_dir`` whose record is ``record``."""
    results, env = record.results, record.results.get("environment", {})
    if record.counts:  # rows per language, as the run counted them at its start
        env = {**env, "languages": record.counts}
    log = training_log(run_dir, weights.trained_to)
    langs = cfg.data.languages()
    model_config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    generation_file = model_dir / "generation_config.json"
    generation = json.loads(generation_file.read_text(encoding="utf-8")) if generation_file.is_file() else {}
    prompt = Prompt.load(model_dir)
    name = run_dir.name
    valid = scores(log["valid"].get(weights.valid_step, {}), "valid", langs) if weights.valid_step else {}
    test = scores(results, "test", langs) if weights.test else {}
    evals = _eval_results(cfg, cfg.data.test_split or "test", test)
    if not evals:
        evals = _eval_results(cfg, cfg.data.validation_split, valid)
    data = metadata(cfg, name, model_config.get("model_type", "seq2seq"), evals)
    body = render_body(name, cfg, weights, env, log, model_dir, generation, prompt, valid, test, results)
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n{body}")


#: the line of the card's usage example naming the model (the hub repository id once pushed)
MODEL_LINE = re.compile(r'^model_id = ".*"$', re.M)
EXAMPLE = "The doctor said that she was tired."


def usage(model_id: str, prompt: Prompt | None, lang: str, languages: ModelLanguages | None = None) -> list[str]:
    """The card's example: transformers alone, the prompt and a source-side language code (``>>es<<``, ``<2es>``:
    ``languages``) applied by hand."""
    source = prompt.render(EXAMPLE, lang) if prompt else EXAMPLE
    source = languages.source_text(source, lang) if languages is not None else source
    return [
        "```python",
        "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer",
        "",
        f"model_id = {json.dumps(model_id)}",
        "tokenizer = AutoTokenizer.from_pretrained(model_id)",
        "model = AutoModelForSeq2SeqLM.from_pretrained(model_id)  # generation_config.json: beam, length penalty",
        f'inputs = tokenizer({json.dumps(source)}, return_tensors="pt")',
        "print(tokenizer.decode(model.generate(**inputs)[0], skip_special_tokens=True))",
        "```",
        "",
    ]


def choosing_language(languages: ModelLanguages, langs: list[str]) -> list[str]:
    """How to choose among several target languages of a family that marks them (a forced token, a source code)."""
    if languages.family is None or len(langs) < 2:
        return []
    codes = ", ".join(f"{lang} `{languages.token(lang)}`" for lang in langs)
    how = (
        'pass `forced_bos_token_id=tokenizer.convert_tokens_to_ids("CODE")` to `generate`'
        if languages.forces_target
        else 'start the source with the code (`"CODE " + text`)'
    )
    return [f"This model writes {len(langs)} languages; to choose one, {how} with its {languages.family.name} code "
            f"({codes}), or give `scripts/translate.py` `--target_lang`.", ""]  # fmt: skip


def _paper_cell(values: dict, shown: bool) -> list[str]:
    value = values.get("paper_bleu")
    return [] if not shown else [f"{value:.2f}" if value is not None else ""]


def scoring_lines(cfg: RunConfig) -> list[str]:
    """What each score of the results table is (:func:`mtkit.evaluation.scores.scoring`)."""
    what = scoring(cfg.data.languages(), cfg.eval.paper_bleu)
    lines = [f"BLEU and chrF: sacreBLEU on the detokenized translations, decoded as below (BLEU `{what['bleu']}`, "
             f"chrF `{what['chrf']}`)."]  # fmt: skip
    if what["paper_bleu"]:
        lines[0] += f" paper BLEU: {what['paper_bleu']}; not comparable with sacreBLEU."
    return lines


def render_body(name, cfg, weights, env, log, model_dir, generation, prompt, valid, test, results) -> str:
    """The markdown of the card below its metadata."""
    d, m, o, t = cfg.data, cfg.model, cfg.optim, cfg.train
    pair = f"{d.source_lang} → {', '.join(d.languages())}"
    n = parameter_count(model_dir)
    params = f"{n / 1e6:.1f}M parameters" if n else "parameters not counted (no safetensors weights)"
    if m.model_name_or_path:
        origin = f"fine-tuned from `{m.model_name_or_path}`" + (f" with LoRA (r={m.lora_r})" if m.lora_r else "")
    else:
        shape = ", ".join(f"{k} {getattr(m, k)}" for k in SHAPE_KEYS if getattr(m, k) is not None)
        origin = f"trained from scratch (architecture preset `{m.model}`{', ' + shape if shape else ''})"
    kind, source, _ = data_source(cfg)
    sizes = env.get("pairs", {})
    counted = ", ".join(f"{split} {count:,} pairs" for split, count in sizes.items()) or "sizes not recorded"
    per_language = env.get("languages") or {}
    langs = {lang for name, split in per_language.items() if name != "left_out" for lang in split}
    if len(langs) > 1 or "left_out" in per_language:  # one language: the languages row says it
        counted += f" ({describe_counts(per_language)})"
    tokenizer = cfg.tokenizer.tokenizer_name or ("the base model's" if m.model_name_or_path else None)
    tokenizer = tokenizer or f"{cfg.tokenizer.tokenizer_type} {cfg.tokenizer.vocab_size:,} (trained on the data)"
    processes = env.get("num_processes", 1)
    strategy = STRATEGIES.get(env.get("distributed_type", "NO"), env.get("distributed_type"))
    stage = f" ZeRO-{env['zero_stage']}" if env.get("zero_stage") else ""
    per_update = t.max_tokens * processes * t.gradient_accumulation_steps
    rows = [
        ("model", f"{origin}; {params}"),
        ("weights", weights.what),
        ("languages", pair),
        ("data", f"{source}: {counted}"),
        ("tokenizer", tokenizer),
        ("recipe", f"learning rate {o.learning_rate:g} ({o.lr_scheduler_type}, {o.warmup_steps} warm-up updates), "
                   f"label smoothing {o.label_smoothing:g}, dropout {m.dropout if m.dropout is not None else 'preset'}"
                   f", up to {per_update:,} padded tokens per update ({t.max_tokens:,} per batch x {processes} "
                   f"process(es) x {t.gradient_accumulation_steps}), seed {t.seed}"),
        ("launcher", f"{strategy}{stage}, {processes} process(es), precision {env.get('mixed_precision', '?')}"),
        ("updates", f"{weights.trained_to:,} of --max_steps {t.max_steps:,}"),
        ("tokens seen", f"{log['tokens']:,} target tokens (non-padding)"),
        ("training time", f"{log['seconds']:.0f} s of updates (evaluation and checkpoints left out)"),
        ("hardware", f"{processes} x {env.get('device', '?')} ({env.get('device_name') or 'unknown'})"),
    ]  # fmt: skip
    out = [f"# {name}", "", f"A translation model ({pair}) trained with mtkit: {origin}.", ""]
    out += ["## Training", "", *table(["", ""], rows), ""]
    paper = cfg.eval.paper_bleu != "none"
    scores = []
    for split, found in ((f"validation ({d.validation_split}, update {weights.valid_step})", valid),
                         (f"test ({d.test_split})", test)):  # fmt: skip
        scores += [[split, lang, f"{v['bleu']:.2f}", f"{v['chrf']:.2f}", *_paper_cell(v, paper)]
                   for lang, v in found.items()]  # fmt: skip
    if not valid and not test:
        scores.append(["not evaluated", "", "", "", *_paper_cell({}, paper)])
    out += ["## Results", "", *table(["split", "language", "BLEU", "chrF", *(["paper BLEU"] if paper else [])],
                                     scores, right_from=2)]  # fmt: skip
    out += ["", *scoring_lines(cfg), ""]
    if cfg.eval.eval_max_samples:
        out += [f"Validation scores are over at most {cfg.eval.eval_max_samples} sentences (`--eval_max_samples`).", ""]
    out += ["<!-- mtkit:gender-bias -->", "<!-- /mtkit:gender-bias -->", ""]
    beam, penalty = generation.get("num_beams", 1), generation.get("length_penalty", 1.0)
    bounds = f"{generation.get('max_len_a', '?')} x source + {generation.get('max_len_b', '?')} tokens"
    shown = f"`{prompt.template}`" if prompt else "none (the sources as they are)"
    saved = [f"`{name}`" for name in ("generation_config.json", "prompt.json") if (model_dir / name).is_file()]
    scripts = "`scripts/translate.py` and `scripts/bias_report.py`"
    kept = f"Saved in {' and '.join(saved)}, so {scripts} decode this way by default." if saved else (
        f"Not saved with the model: give them to {scripts} as flags.")  # fmt: skip
    out += [
        "## Decoding",
        "",
        f"Beam {beam}, length penalty {penalty}, at most {generation.get('max_new_tokens')} "
        f"new tokens and {bounds} per batch, prompt {shown}. {kept}",
        "",
    ]
    languages = ModelLanguages.load(model_dir)
    out += usage(str(model_dir), prompt, d.languages()[0], languages)
    out += choosing_language(languages, d.languages())
    if results.get("ct2_model"):
        ct2 = Path(results["ct2_model"])
        out += [f"A CTranslate2 conversion sits beside it (`{ct2.name}/`; `ctranslate2/` in its hub repository): "
                f"`python scripts/translate.py --engine ct2 --model {ct2}`.", ""]  # fmt: skip
    out += intended_use(cfg, sizes)
    out += ["## Reproduce", "", "```bash", reproduce(cfg, env)]
    out += [weights.command] if weights.command else []
    out += ["```", "", "## License", "", LICENSE_NOTE, ""]
    return "\n".join(out)


def intended_use(cfg: RunConfig, sizes: dict[str, int]) -> list[str]:
    """The card's Intended use and limitations: what the model is for, and what its data and size leave out."""
    kind, source, _ = data_source(cfg)
    d = cfg.data
    pair = f"{d.source_lang} → {', '.join(d.languages())}"
    trained = f"{sizes['train']:,} sentence pairs" if sizes.get("train") else "its training data"
    out = ["## Intended use and limitations", ""]
    out += [f"For research and teaching: studying translation ({pair}) and measuring gender bias with mtkit's "
            "reports. It is not meant for translating text that people rely on without review.", ""]  # fmt: skip
    facts = [f"It learned from {trained} ({source}) and translates text like them best; other domains, registers "
             "and sentence lengths are not measured here."]  # fmt: skip
    if kind == DEMO_ID:
        facts.append("Its data is synthetic: template sentences with a small vocabulary and a gender skew built in "
                     "on purpose, so the model translates little beyond them.")  # fmt: skip
    out += [" ".join(facts), ""]
    return out


def save_card(model_dir: Path, card: ModelCard) -> Path:
    """Write ``card`` to ``model_dir/README.md`` atomically."""
    path = Path(model_dir) / CARD
    text = str(card)
    atomic_write(path, (text if text.endswith("\n") else text + "\n").encode("utf-8"))
    return path


def write_card(model_dir: Path, cfg: RunConfig, run_dir: Path, weights: Weights) -> Path:
    """Write the card of ``model_dir``, a model made after the fact from the run in ``run_dir`` (its record read
    back from there); return its path. The end of a run writes ``final/``'s from the record in memory."""
    run_dir = Path(run_dir)
    return save_card(model_dir, training_card(Path(model_dir), cfg, run_dir, weights, RunRecord.read(run_dir)))
