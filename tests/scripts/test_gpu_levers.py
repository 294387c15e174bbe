"""scripts/gpu_levers.py --smoke: every variant of the lever benchmark two updates on the CPU (the GPU run itself is
docs/gpu.md's command)."""

import json

import pytest
from testing_utils import argv_script_in_process

#: The records of the eager, profile and ZeRO-3 parts in the order they run: every eager variant, the profiles, then
#: ZeRO-3's (the compiled variants are the slow tier's: :func:`test_the_compiled_variants_hold_the_loss_in_their_graph`)
ORDER = [
    ("transformer-tiny", v) for v in ("baseline", "pad-1", "no-cache", "fused-loss", "loss-kernel", "vocab-64",
                                      "eager levers, efficient attention", "eager levers, math attention")
] + [("transformer-tiny", "baseline"), ("transformer-tiny", "eager levers")] + [
    ("flan-t5", v) for v in ("baseline", "fused-loss", "loss-kernel", "fused-norms")
] + [("transformer-tiny", "profile")] * 2 + [("flan-t5", "eager"), ("flan-t5", "fuse-norms")]  # fmt: skip
#: The compile part's records: its baseline and each compiled variant on transformer-tiny, then at WMT lengths its
#: baseline and every lever with the fastest compiled one
COMPILED = [("transformer-tiny", v) for v in ("baseline", "compile-dynamic", "compile-static", "cuda-graphs",
                                              "baseline", "eager levers + ")]  # fmt: skip


def _records(out, *parts: str) -> tuple[object, list[dict], list[tuple[str, str]]]:
    """``gpu_levers.py --smoke --parts ...`` into ``out``: its result, its records, and each record's workload and
    variant."""
    res = argv_script_in_process("gpu_levers.py", "--smoke", "--parts", ",".join(parts), "--out", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    records = [json.loads(line) for line in (out / "gpu_levers.jsonl").read_text().splitlines()]
    return res, records, [(r["workload"].split(",")[0].split(" (")[0], r["variant"]) for r in records]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    res, records, names = _records(tmp_path_factory.mktemp("levers"), "eager", "profile", "zero3")
    assert [(w, v[: len(o)]) for (w, v), (_, o) in zip(names, ORDER, strict=True)] == ORDER
    zero3 = [r for r in records if r["workload"].endswith("ZeRO-3")]  # a DeepSpeed launch per variant: GPU runs only
    assert all(r["status"] == "skipped: a GPU run's variant (a DeepSpeed launch)" for r in zero3)
    profiles = [r for r in records if r["variant"] == "profile"]
    return res, [r for r in records if r not in zero3 and r not in profiles], profiles


def _exact_and_each_to_its_baseline(records: list[dict]) -> None:
    """From the same weights the first update's loss and gradient norm equal the baseline's (fp32 on the CPU: to
    1e-6); each ratio is to its workload's one baseline."""
    for r in records:
        assert r["status"] == "ok", r
        assert r["loss_diff"] < 1e-6 and r["grad_norm_diff"] < 1e-6, r
        assert r["ms_per_update"] > 0 and r["tgt_tok_s"] > 0 and r["host_syncs"] is None and r["mfu"] is None
    for workload in {r["workload"] for r in records}:
        rows = [r for r in records if r["workload"] == workload]
        base = [r for r in rows if r["variant"] == "baseline"]
        assert len(base) == 1 and base[0]["ratio"] == 1.0
        for r in rows:
            assert r["ratio"] == pytest.approx(base[0]["ms_per_update"] / r["ms_per_update"])


def test_every_variant_runs_and_leaves_the_first_update_as_it_was(smoke):
    """Each eager lever added in turn, two attention backends, every eager lever at WMT lengths, and T5's: each
    leaves the first update as it was (:func:`_exact_and_each_to_its_baseline`)."""
    _exact_and_each_to_its_baseline(smoke[1])


@pytest.mark.slow  # the compile part: inductor's C++ for every compiled variant (a minute); the default tier keeps
# every eager lever's exactness above and the compiled loss in tests/mtkit/model/test_linear_ce.py's slow test
def test_the_compiled_variants_hold_the_loss_in_their_graph(tmp_path):
    """No graph break anywhere (the loss is inside the compiled forward); one graph for dynamic shapes, one per
    bucketed shape for static ones; the levers each record names are the variant's; the first update as it was."""
    _, records, names = _records(tmp_path, "compile")
    assert [(w, v[: len(o)]) for (w, v), (_, o) in zip(names, COMPILED, strict=True)] == COMPILED
    by = {r["variant"]: r for r in records if r["workload"].startswith("transformer-tiny, Multi30k")}
    assert all(r["graph_breaks"] == 0 for r in records)
    assert by["compile-dynamic"]["graphs"] >= 1 and by["compile-static"]["graphs"] >= 1
    assert by["compile-static"]["tgt_padding"] != by["compile-dynamic"]["tgt_padding"]  # bucketed batches
    assert by["cuda-graphs"]["levers"] == {
        "pad": 1, "no_cache": True, "fused": True, "loss_kernel": True, "vocab64": True, "compile": "cudagraphs",
        "fused_norms": False, "attention": None,
    }  # fmt: skip
    _exact_and_each_to_its_baseline(records)


def test_the_eager_variants_compile_nothing(smoke):
    """The eager part runs no graph; the levers each record names are the variant's."""
    by = {r["variant"]: r for r in smoke[1] if r["workload"].startswith("transformer-tiny, Multi30k")}
    assert all(r["graphs"] == 0 for r in smoke[1])
    assert by["baseline"]["levers"]["pad"] == 8 and by["vocab-64"]["levers"]["vocab64"]


def test_the_profile_times_the_same_updates_with_and_without_the_profiler(smoke):
    """On the CPU the profile is its plumbing: both workloads profiled with every eager lever, the unprofiled and
    profiled wall clocks timed, no CUDA kernel to count (so no busy share rather than a 0%)."""
    _, _, profiles = smoke
    assert [p["workload"].split(",")[1].strip() for p in profiles] == ["Multi30k lengths", "WMT14 lengths"]
    for p in profiles:
        assert p["status"] == "ok" and p["levers"] == {
            "pad": 1, "no_cache": True, "fused": True, "loss_kernel": True, "vocab64": True, "compile": None,
            "fused_norms": False, "attention": None,
        }  # fmt: skip
        assert p["wall_ms_per_update"] > 0 and p["profiled_wall_ms_per_update"] > 0
        assert p["gpu_busy_share"] is None and p["kernels_per_update"] == 0 and p["top_kernels"] == []


def test_parts_that_do_not_exist_are_refused_in_one_line(tmp_path):
    res = argv_script_in_process("gpu_levers.py", "--smoke", "--parts", "eager,fast", "--out", str(tmp_path))
    assert res.returncode == 2
    assert res.stderr.strip() == ("error: --parts: unknown part(s) fast; the parts are eager, profile, zero3, compile")


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    res = argv_script_in_process("gpu_levers.py", "--out", str(tmp_path))
    assert res.returncode == 2
    assert res.stderr.strip() == "error: gpu_levers: torch sees no CUDA GPU; --smoke runs the variants on the CPU"
