"""``scripts/train.py`` with FSDP forced on the CPU, for tests: launched with ``accelerate launch --config_file
accelerate_configs/fsdp.yaml``, whose environment describes the FSDP plugin. accelerate runs FSDP jobs as plain
DDP on the CPU; as ``../shared/notes/stack-facts.md`` records, setting the distributed type in the shared
state and handing it the plugin makes ``prepare`` take the FSDP2 path for real (fully_shard over gloo)."""

from accelerate.state import AcceleratorState, PartialState
from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

import mtkit.pipeline
import mtkit.train.trainer
from mtkit.config import parse_config
from mtkit.errors import cli_entry

build_accelerator = mtkit.train.trainer.build_accelerator


def build_fsdp_accelerator(cfg, precision=None):
    acc = build_accelerator(cfg, precision)
    assert acc.distributed_type == DistributedType.MULTI_CPU, acc.distributed_type  # what accelerate chose
    plugin = FullyShardedDataParallelPlugin()  # from the FSDP_* variables the launcher set from the YAML
    assert plugin.fsdp_version == 2
    for state in (AcceleratorState._shared_state, PartialState._shared_state):
        state["distributed_type"] = DistributedType.FSDP
    AcceleratorState._shared_state["fsdp_plugin"] = plugin
    return acc


@cli_entry
def main() -> None:
    mtkit.train.trainer.build_accelerator = build_fsdp_accelerator
    mtkit.pipeline.run(parse_config())


if __name__ == "__main__":
    main()
