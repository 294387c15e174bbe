"""Fixtures shared by the test suite: slices of the real data in ../shared and a trained tiny model.

The suite runs on two pytest-xdist workers (``make test``); the expensive session fixtures are built once per test
run, by whichever worker asks first, under a file lock in the run's common temporary folder (:func:`once`)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from deepspeed_ops import EXTENSIONS, built
from filelock import FileLock
from testing_utils import (
    DDP_RUN,
    DEMO_SMALL,
    FAST_RUN,
    MTGENEVAL,
    MULTI30K,
    OFFLINE_ENV,
    REPO,
    finetune_args,
    launch,
    make_demo,
    run_script,
    write_slice,
)

for _var, _value in OFFLINE_ENV.items():  # runs made in this process see what runs in subprocesses see
    os.environ.setdefault(_var, _value)
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: with torch's default of one thread per core in every process (the workers and the
    # runs they start), OpenMP threads spin-wait on each other and the suite runs slower than one worker alone.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")

#: DeepSpeed's CPU op, built by `make test`'s setup (tests/deepspeed_ops.py) or else by the first worker below.
os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(EXTENSIONS))


def once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``<common temp>/<name>``, built by ``build`` exactly once per test run whatever the number of xdist workers
    (the others wait on the lock, then reuse it); a failed build leaves no marker, so each worker reports it."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder every worker's basetemp lies in
    out, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            out.mkdir(parents=True, exist_ok=True)
            build(out)
            done.touch()
    return out


@pytest.fixture(scope="session", autouse=True)
def deepspeed_cpu_ops(tmp_path_factory) -> None:
    """Build DeepSpeed's CPU communication op once, early, where `make test`'s setup has not (the build takes about a
    minute on 2 cores). Only the first xdist worker builds; the other goes on with its tests, and a DeepSpeed start
    there in the meantime waits on torch's build lock, then loads the op. Locks left in the checkout's own folder by
    a killed build are removed first: nothing else builds there while the suite starts."""
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    extensions = Path(os.environ["TORCH_EXTENSIONS_DIR"])
    if extensions == EXTENSIONS:
        for lock in EXTENSIONS.glob("*/lock"):
            lock.unlink()

    def build(_: Path) -> None:
        if built(extensions):
            return
        res = run_script("-", sys.executable, str(REPO / "tests" / "deepspeed_ops.py"), timeout=900)
        assert res.returncode == 0, f"building DeepSpeed's CPU ops failed:\n{res.stderr[-3000:]}"

    once(tmp_path_factory, "deepspeed_cpu_ops", build)


@pytest.fixture(scope="session")
def multi30k_small(tmp_path_factory) -> Path:
    """A slice of Multi30k EN-DE in the ``<split>.<lang>`` layout: 3000 train, 64 val, 48 test pairs."""
    if not MULTI30K.is_dir():
        pytest.skip("../shared/data/multi30k is not there")

    def build(out: Path) -> None:
        for split, n in (("train", 3000), ("val", 64), ("test_2016_flickr", 48)):
            for lang in ("en", "de"):
                write_slice(MULTI30K / f"{split}.{lang}.gz", out / f"{split}.{lang}", n)

    return once(tmp_path_factory, "multi30k_small", build)


@pytest.fixture(scope="session")
def tiny_run(multi30k_small, tmp_path_factory) -> Path:
    """A finished 40-update run on the Multi30k slice (shared by tests that need a trained model), converted to
    CTranslate2 at the end (``final_ct2``); what it printed is in ``<run>.stdout`` and ``<run>.stderr``, the latter
    with every module its interpreter imported (``PYTHONPROFILEIMPORTTIME``)."""

    def build(root: Path) -> None:
        res = run_script(
            "train.py", "--data_dir", str(multi30k_small), *FAST_RUN,
            "--output_dir", str(root / "run"), "--max_steps", "40", "--eval_steps", "20", "--save_steps", "20",
            "--report_to", "tensorboard,wandb", "--peak_tflops", "1", "--export_ct2", "float32",
            env={"WANDB_DIR": str(root), "PYTHONPROFILEIMPORTTIME": "1"},
        )  # fmt: skip
        assert res.returncode == 0, res.stderr[-3000:]
        (root / "run.stdout").write_text(res.stdout, encoding="utf-8")
        (root / "run.stderr").write_text(res.stderr, encoding="utf-8")

    return once(tmp_path_factory, "tiny_run", build) / "run"


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory) -> Path:
    """A stand-in for a pretrained flan-t5 (the hub is unreachable in tests): a 2-layer T5 with random weights and a
    T5-style unigram tokenizer (``</s>`` ends every sequence, ``<pad>`` starts decoding) trained on MT-GenEval's
    dev sentences of all five languages, saved as ``from_pretrained`` expects."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    from mtkit.data.tokenizer import train_tokenizer

    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")

    def build(root: Path) -> None:
        texts = [
            line for path in sorted((MTGENEVAL / "sentences" / "dev").glob("geneval-sentences-*-dev.en_*"))
            for line in path.read_text(encoding="utf-8").splitlines()
        ]  # fmt: skip
        tok = train_tokenizer(texts, vocab_size=2000, kind="unigram")
        torch.manual_seed(0)
        config = T5Config(
            vocab_size=len(tok), d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, dropout_rate=0.0,
            pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id,
        )  # fmt: skip
        T5ForConditionalGeneration(config).save_pretrained(root / "flan-t5-tiny")
        tok.save_pretrained(root / "flan-t5-tiny")

    return once(tmp_path_factory, "tiny_t5", build) / "flan-t5-tiny"


@pytest.fixture(scope="session")
def zero3_run(tiny_t5, tmp_path_factory) -> Path:
    """The tiny T5 fine-tuned on MT-GenEval for 4 updates by 2 ZeRO-3 processes (weights created sharded), a
    checkpoint at update 4 and ``final/`` from it; what the launch printed is in ``<run>.stdout``. Shared by the
    fine-tuning and export tests, since each ZeRO-3 launch costs tens of seconds on 2 cores."""

    def build(root: Path) -> None:
        res = launch(
            "deepspeed_zero3",
            *finetune_args(tiny_t5, root / "run", "--max_steps", "4", "--eval_steps", "4", "--save_steps", "4",
                           "--no_load_best_model_at_end", "--eval_max_samples", "10", "--mixed_precision", "no"),
        )  # fmt: skip
        assert res.returncode == 0, res.stderr[-3000:]
        (root / "run.stdout").write_text(res.stdout, encoding="utf-8")

    return once(tmp_path_factory, "zero3_run", build) / "run"


@pytest.fixture(scope="session")
def ddp_run(multi30k_small, tmp_path_factory) -> Path:
    """A 4-update run on the Multi30k slice by 2 DDP processes (``accelerate launch`` with
    ``accelerate_configs/cpu_ddp.yaml``, flags ``testing_utils.DDP_RUN``), started on glibc's malloc (nothing
    preloaded, so that each worker's own restart on tcmalloc shows), final/ the mean of its two epochs; what the
    launch printed is in ``<run>.stdout``. Shared by the two-process launch checks (tests/mtkit/train/test_trainer.py),
    the epoch averaging's (tests/mtkit/train/test_epochs.py) and the SageMaker entry's comparison with accelerate
    launch (tests/sagemaker/test_sagemaker_entry.py), which repeats the same flags under torchrun."""

    def build(root: Path) -> None:
        res = launch(
            "cpu_ddp", "--data_dir", str(multi30k_small), *DDP_RUN, "--output_dir", str(root / "run"),
            env={"LD_PRELOAD": ""},
        )  # fmt: skip
        assert res.returncode == 0, res.stderr[-3000:]
        (root / "run.stdout").write_text(res.stdout, encoding="utf-8")

    return once(tmp_path_factory, "ddp_run", build) / "run"


#: Files whose launches each take half a minute or more of one worker, run first, longest first: two xdist workers
#: given whole files (``make test``: ``--dist loadfile --no-loadscope-reorder``) then end within a small file of each
#: other, where files of few tests at the end of the run left one worker alone for its last half minute.
FIRST = (
    "tests/mtkit/distributed/test_reshard.py",
    "tests/mtkit/train/test_mitigation.py",
    "tests/mtkit/train/test_faults.py",
    "tests/sagemaker/test_sagemaker_entry.py",
    "tests/mtkit/distributed/test_fsdp.py",
    "tests/cluster/test_slurm.py",
    "tests/mtkit/train/test_nonfinite.py",
)


@pytest.hookimpl(trylast=True)  # after the deselection of ``-m``
def pytest_collection_modifyitems(config, items):
    """The files of :data:`FIRST` first, then the others by their number of tests, most first (xdist's own order);
    tests marked ``gpu`` need CUDA: skipped on machines without it (``make test-gpu`` runs them on one)."""
    import torch

    counts = Counter(item.nodeid.split("::")[0] for item in items)

    def rank(item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        return FIRST.index(path) if path in FIRST else len(FIRST), -counts[path]

    items.sort(key=rank)  # stable: each file's tests stay together, in their own order
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (make test-gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_geneval() -> Path:
    """The shared MT-GenEval dev data (tests that need it are skipped when it is absent)."""
    from geneval_helpers import SHARED_GENEVAL

    if not (SHARED_GENEVAL / "sentences" / "dev").is_dir():
        pytest.skip(f"shared MT-GenEval data not found at {SHARED_GENEVAL}")
    return SHARED_GENEVAL


@pytest.fixture
def small_geneval(shared_geneval: Path, tmp_path: Path) -> Path:
    """A 25-line, two-language (de, es) ``test`` split with only sentences/ (like the demo corpus)."""
    from geneval_helpers import make_subset

    return make_subset(shared_geneval, tmp_path / "geneval", ("de", "es"), 25)


@pytest.fixture(scope="session")
def family_dir(tmp_path_factory) -> Callable[..., Path]:
    """``family_dir(family, target_langs=("de", "es"))``: a hub-like checkout of one translation-model family (tiny,
    random weights, its real architecture and tokenizer class; see tests/families.py), built once per test run."""
    from families import build_family

    if not (MULTI30K.is_dir() and MTGENEVAL.is_dir()):
        pytest.skip("../shared/data (multi30k, mt-geneval) is not there")

    def get(family: str, target_langs: tuple[str, ...] = ("de", "es")) -> Path:
        name = f"family-{family}-{'-'.join(target_langs)}"
        return once(tmp_path_factory, name, lambda out: build_family(family, out, target_langs=target_langs))

    return get


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """``make demo`` in small (``testing_utils.DEMO_SMALL``): the demo corpus in ``<run>_corpus``, the run, the
    showcase translations and the bias report into ``<run>/bias_report`` and the card (``--update_card``); what
    ``make`` printed is in ``<run>.out``."""

    def build(root: Path) -> None:
        res = make_demo(root / "demo", *DEMO_SMALL, timeout=900)
        (root / "demo.out").write_text(res.stdout, encoding="utf-8")
        assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])

    return once(tmp_path_factory, "demo_run", build) / "demo"
