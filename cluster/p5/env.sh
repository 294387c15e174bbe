# Environment for NCCL over EFA on AWS p5 (8x H100, 32 EFA devices); sourced by the Slurm scripts and the JobSet.
# Safe to source anywhere: it sets nothing that matters off AWS, and it works under `set -u`.
#
# With libfabric >= 1.18 and aws-ofi-nccl >= 1.7 (EFA installer >= 1.29; p5 needs NCCL >= 2.18.5, aws-ofi-nccl
# >= 1.7.3) no variable is required: the plugin picks the EFA provider and GPUDirect RDMA itself. Leave
# NCCL_MIN_CHANNELS / NCCL_BUFFSIZE at their defaults and do not set RDMAV_* (aws-ofi-nccl doc/efa-env-var.md).
# FI_EFA_USE_DEVICE_RDMA=1, FI_PROVIDER=efa and NCCL_PROTO=simple, found in older guides, matter only for
# aws-ofi-nccl <= 1.5 (device RDMA also 1.6.x); set them only on such an old image.

# The EFA installer's libraries (libfabric, Open MPI, the aws-ofi-nccl plugin NCCL loads as libnccl-net*.so).
for _mtkit_dir in /opt/amazon/efa/lib /opt/amazon/openmpi/lib /opt/amazon/ofi-nccl/lib \
    /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu; do
    if [[ -d "$_mtkit_dir" && ":${LD_LIBRARY_PATH:-}:" != *":$_mtkit_dir:"* ]]; then
        export LD_LIBRARY_PATH="$_mtkit_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
done
unset _mtkit_dir

# NCCL_DEBUG=INFO at submission shows the transport: "NET/OFI Initializing aws-ofi-nccl", "Selected Provider is EFA".
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"

# If DataLoader workers fail to fork with "Cannot allocate memory", stop libfabric's huge-page buffers:
# export FI_EFA_USE_HUGE_PAGE=0

# Optional, as AWS's own Slurm templates do: aws-ofi-nccl's tuner plugin.
# export NCCL_TUNER_PLUGIN=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so
