"""Recipes and launcher configs: every recipe parses, every DeepSpeed file is where its launcher says and leaves
clipping to the toolkit, ZeRO-3 gathers a 16-bit model for final/, and the flan-t5 recipes run (on a stand-in)."""

import json

import pytest
import torch
import yaml
from geneval_helpers import make_subset
from testing_utils import FAST_RUN, MTGENEVAL, REPO, launch, train_in_process

from mtkit.config import parse_config
from mtkit.model.vocab import rounded, tokens_in_use
from mtkit.train.build import build_model

RECIPES = sorted((REPO / "recipes").glob("*.yaml"))
LAUNCHERS = sorted((REPO / "accelerate_configs").glob("*.yaml"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_every_recipe_parses(recipe):
    cfg = parse_config(["--config", str(recipe)])
    assert cfg.train.output_dir.startswith("runs/")


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=lambda p: p.stem)
def test_accelerate_reads_every_launcher(launcher):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(launcher))  # accelerate's own loader: unknown keys or types fail here
    raw = yaml.safe_load(launcher.read_text())
    assert config.distributed_type.value == raw["distributed_type"] and config.num_processes == raw["num_processes"]


#: where each launcher is started by a test on the CPU with the same small Multi30k run (FAST_RUN)
LAUNCHED_ELSEWHERE = {
    "cpu_ddp": "tests/conftest.py",  # ddp_run, shared by test_trainer.py and the SageMaker entry test
    "multi_gpu": "tests/mtkit/train/test_trainer.py",
    "deepspeed_zero2": "tests/mtkit/train/test_trainer.py",
    "deepspeed_zero3": "tests/mtkit/train/test_trainer.py",
    "multi_node": "tests/cluster/test_slurm.py",
    "multi_node_p5": "tests/cluster/test_slurm.py",
    "fsdp": "tests/mtkit/distributed/test_fsdp.py",
    "single_gpu": "tests/mtkit/train/test_faults.py",  # the never-stopped run the signal tests compare with
}


def test_every_launcher_is_launched_by_a_test():
    here = {"deepspeed_zero3_offload"}  # below
    assert {p.stem for p in LAUNCHERS} == set(LAUNCHED_ELSEWHERE) | here
    for launcher, test in LAUNCHED_ELSEWHERE.items():
        assert f"accelerate_configs/{launcher}.yaml" in (REPO / test).read_text() or (
            f'"{launcher}"' in (REPO / test).read_text()
        ), (launcher, test)


# ZeRO-3 offload compiles DeepSpeed's CPU Adam on first use: minutes on 2 cores. The default tier starts single_gpu
# in tests/mtkit/train/test_faults.py (straight_runs: one process, no DeepSpeed, final/ written)
@pytest.mark.parametrize("launcher", [pytest.param("deepspeed_zero3_offload", marks=pytest.mark.slow)])
def test_one_process_launchers_run(multi30k_small, tmp_path, launcher):
    out = tmp_path / launcher
    res = launch(
        launcher, "--data_dir", str(multi30k_small), *FAST_RUN,
        "--output_dir", str(out), "--max_steps", "2", "--eval_steps", "2", "--eval_max_samples", "4",
        "--max_new_tokens", "4", "--test_split", "none", "--mixed_precision", "no", processes=None,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "1 process(es)" in res.stdout
    assert ("DEEPSPEED" in res.stdout) == launcher.startswith("deepspeed")
    assert (out / "final" / "model.safetensors").is_file()


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=lambda p: p.stem)
def test_launchers_point_at_deepspeed_files_that_leave_clipping_to_the_toolkit(launcher):
    config = yaml.safe_load(launcher.read_text())
    if config["distributed_type"] != "DEEPSPEED":
        return
    ds = json.loads((REPO / config["deepspeed_config"]["deepspeed_config_file"]).read_text())
    assert ds["gradient_clipping"] == "auto" and ds["train_micro_batch_size_per_gpu"] == "auto"
    zero = ds["zero_optimization"]
    if zero["stage"] == 3:
        assert zero["stage3_gather_16bit_weights_on_model_save"] is True  # final/ holds whole weights
        assert config["deepspeed_config"]["zero3_init_flag"] is True  # weights created sharded
    if "offload" in launcher.stem:
        assert zero["offload_optimizer"]["device"] == zero["offload_param"]["device"] == "cpu"


def test_the_cpu_flan_t5_recipe_runs_on_a_stand_in_model(tiny_t5, tmp_path):
    """recipes/flan_t5_small_mtgeneval.yaml as written (languages, prompt, split, schedule), the hub model swapped for
    the tiny local T5, MT-GenEval's dev split for its first 100 pairs of each language and gender, and the run cut to
    two updates."""
    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    out, pairs = tmp_path / "run", 100
    data = make_subset(MTGENEVAL, tmp_path / "mt-geneval", ["de", "es", "fr", "it", "pt"], pairs, split="dev")
    res = train_in_process(
        "--config", str(REPO / "recipes/flan_t5_small_mtgeneval.yaml"), "--mtgeneval_dir", str(data),
        "--model_name_or_path", str(tiny_t5), "--output_dir", str(out), "--max_steps", "2", "--eval_steps", "2",
        "--eval_max_samples", "10", "--max_new_tokens", "8", "--num_beams", "1", "--report_to", "none",
        "--disable_tqdm",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    counts = json.loads((out / "data_counts.json").read_text())
    assert sorted(counts["train"]) == ["de", "es", "fr", "it", "pt"] and (out / "final" / "prompt.json").is_file()
    held_out = [json.loads(line) for line in (out / "validation_split.jsonl").read_text().splitlines()]
    assert len(held_out) == 0.2 * 5 * 2 * pairs  # the recipe's 80/20 split of the dev pairs (12,000 in full)


@pytest.mark.parametrize(("recipe", "family"), [("opus_mt_en_de_mtgeneval", "marian"), ("nllb_600m_mtgeneval", "nllb")])
def test_the_family_recipes_run_on_stand_in_models(recipe, family, family_dir, tmp_path):
    """The opus-mt and NLLB recipes as written, the hub model swapped for its tiny stand-in (tests/families.py) and
    the run cut to one update: every language of the recipe trained, and final/ written."""
    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    out = tmp_path / "run"
    langs = parse_config(["--config", str(REPO / "recipes" / f"{recipe}.yaml")]).data.languages()
    model = family_dir(family, tuple(langs) if len(langs) > 1 else ("de", "es"))  # its sentencepiece covers them
    res = train_in_process(
        "--config", str(REPO / "recipes" / f"{recipe}.yaml"), "--mtgeneval_dir", str(MTGENEVAL),
        "--model_name_or_path", str(model), "--output_dir", str(out), "--max_steps", "1",
        "--eval_steps", "1", "--eval_max_samples", "10", "--max_new_tokens", "4", "--num_beams", "1",
        "--max_tokens", "1024", "--report_to", "none", "--disable_tqdm", "--mixed_precision", "no",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    counts = json.loads((out / "data_counts.json").read_text())
    assert sorted(counts["train"]) == sorted(langs) and (out / "final" / "model.safetensors").is_file()


class Vocabulary:
    """What the model builder reads of a tokenizer: its size and three special ids."""

    pad_token_id, bos_token_id, eos_token_id = 1, 0, 2

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def paper_transformer_weights(vocab: int, d: int, ffn: int, layers: int) -> int:
    """Trained weights of the post-norm Transformer of Vaswani et al. (2017) and fairseq's ``transformer`` with one
    embedding matrix for source, target and output and fixed sinusoids, counted from its parts."""
    attention, block, norm = 4 * (d * d + d), 2 * d * ffn + ffn + d, 2 * d
    return vocab * d + layers * (attention + block + 2 * norm) + layers * (2 * attention + block + 3 * norm)


@pytest.mark.parametrize(
    "recipe, vocab, d, ffn, layers, heads, dropout",
    [
        ("multi30k_en_de_wu2021_tiny", 9708, 128, 256, 4, 4, 0.3),  # Wu et al.'s 9,708 BPE types: 2,567,680
        ("wmt14_en_de_base", 37000, 512, 2048, 6, 8, 0.1),  # 63.1M (the paper: 65M)
        ("wmt14_en_de_big", 37000, 1024, 4096, 6, 16, 0.3),  # 214.2M (the paper: 213M)
    ],
)
def test_the_papers_recipes_build_the_papers_models(recipe, vocab, d, ffn, layers, heads, dropout):
    cfg = parse_config(["--config", str(REPO / "recipes" / f"{recipe}.yaml")])
    with torch.device("meta"):  # shapes only
        model = build_model(cfg, Vocabulary(vocab))
    assert type(model).__name__ == "MarianMTModel"  # post-norm, sinusoidal positions
    c = model.config  # the vocabulary rounded up to 64 rows, its extra ones never a token (mtkit/model/vocab.py)
    assert c.vocab_size == rounded(vocab) and tokens_in_use(c) == vocab
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == paper_transformer_weights(
        rounded(vocab), d, ffn, layers
    )
    assert (c.encoder_attention_heads, c.decoder_attention_heads, c.encoder_layers, c.decoder_layers) == (
        heads,
        heads,
        layers,
        layers,
    )
    assert (c.dropout, c.attention_dropout, c.activation_dropout, c.activation_function) == (dropout, 0, 0, "relu")
    assert c.scale_embedding and c.share_encoder_decoder_embeddings and c.tie_word_embeddings
