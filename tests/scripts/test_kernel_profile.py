"""scripts/benchmarks/kernel_profile.py's arithmetic: the GPU-busy time is the union of the kernels' spans, and each
kernel lands in one family by its name (the profile itself needs CUDA kernels: test_gpu_levers.py runs its plumbing)."""

from benchmarks.kernel_profile import busy_us, family
from hypothesis import given
from hypothesis import strategies as st

spans = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)).map(lambda s: (s[0], s[0] + s[1])), max_size=30)


@given(spans)
def test_busy_time_is_the_union_of_the_spans(spans):
    """Against a direct count: the unit steps of the timeline that some span covers (integer spans: exact)."""
    covered = {t for start, stop in spans for t in range(start, stop)}
    assert busy_us([(float(a), float(b)) for a, b in spans]) == len(covered)


def test_kernels_fall_into_the_family_their_name_says():
    """Names as the H200's trace of transformer-base spelt them (2026-11-28)."""
    assert family("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT") == "matmul"
    assert family("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64") == "attention"
    assert family("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(") == "copy/cast"
    assert family("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>") == "softmax/norm/loss"
    assert family("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>") == "optimizer"
    assert family("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>") == (
        "elementwise"
    )
    assert family("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == "communication"  # not a reduction of the step
    assert family("void at::native::embedding_backward_feature_kernel<float>") == "other"
