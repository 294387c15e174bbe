"""scripts/gpu_levers.py --smoke: every variant of the lever benchmark two updates on the CPU (the GPU run itself is
docs/gpu.md's command)."""

import json

import pytest
from testing_utils import argv_script_in_process

VARIANTS = ["baseline", "pad-1", "no-cache", "fused-loss", "vocab-64", "compile-dynamic", "compile-static",
            "cuda-graphs"]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("levers")
    res = argv_script_in_process("gpu_levers.py", "--smoke", "--out", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    records = [json.loads(line) for line in (out / "gpu_levers.jsonl").read_text().splitlines()]
    zero3 = [r for r in records if r["workload"].endswith("ZeRO-3")]  # a DeepSpeed launch per variant: GPU runs only
    assert [r["variant"] for r in zero3] == ["eager", "fuse-norms"]
    assert all(r["status"] == "skipped: a GPU run's variant (a DeepSpeed launch)" for r in zero3)
    return res, [r for r in records if r not in zero3]


def test_every_variant_runs_and_leaves_the_first_update_as_it_was(smoke):
    """Each lever added in turn, the fastest combination at WMT lengths, and T5's; from the same weights the first
    update's loss and gradient norm equal the baseline's (fp32 on the CPU: to 1e-6)."""
    res, records = smoke
    names = [(r["workload"].split(",")[0].split(" (")[0], r["variant"]) for r in records]
    assert names[: len(VARIANTS)] == [("transformer-tiny", v) for v in VARIANTS]
    assert names[len(VARIANTS)][1] == "baseline" and names[len(VARIANTS) + 1][1].startswith("best (")
    assert [v for _, v in names[len(VARIANTS) + 2 :]] == ["baseline", "fused-loss", "fused-norms"]
    for r in records:
        assert r["status"] == "ok", r
        assert r["loss_diff"] < 1e-6 and r["grad_norm_diff"] < 1e-6, r
        assert r["ms_per_update"] > 0 and r["tgt_tok_s"] > 0 and r["host_syncs"] is None and r["mfu"] is None
    for workload in {r["workload"] for r in records}:
        rows = [r for r in records if r["workload"] == workload]
        assert rows[0]["ratio"] == 1.0
        for r in rows[1:]:
            assert r["ratio"] == pytest.approx(rows[0]["ms_per_update"] / r["ms_per_update"])


def test_the_compiled_variants_hold_the_loss_in_their_graph(smoke):
    """No graph break anywhere (the loss is inside the compiled forward); one graph for dynamic shapes, one per
    bucketed shape for static ones; the levers each record names are the variant's."""
    _, records = smoke
    by = {r["variant"]: r for r in records if r["workload"].startswith("transformer-tiny, Multi30k")}
    assert all(r["graph_breaks"] == 0 for r in records)
    assert by["compile-dynamic"]["graphs"] >= 1 and by["compile-static"]["graphs"] >= 1
    assert by["baseline"]["graphs"] == by["vocab-64"]["graphs"] == 0
    assert by["compile-static"]["tgt_padding"] != by["compile-dynamic"]["tgt_padding"]  # bucketed batches
    assert by["baseline"]["levers"]["pad"] == 8 and by["cuda-graphs"]["levers"] == {
        "pad": 1, "no_cache": True, "fused": True, "vocab64": True, "compile": "cudagraphs", "fused_norms": False,
    }  # fmt: skip


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    res = argv_script_in_process("gpu_levers.py", "--out", str(tmp_path))
    assert res.returncode == 2
    assert res.stderr.strip() == "error: gpu_levers: torch sees no CUDA GPU; --smoke runs the variants on the CPU"
