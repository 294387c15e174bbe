"""Export a checkpoint of a run as a model: ``python scripts/export_model.py runs/x/checkpoints/checkpoint_best OUT``
(a step folder, a ``checkpoint_*`` link or the run folder; any strategy: one process, DDP, DeepSpeed ZeRO-2/3, LoRA)."""

from mtkit.cli.export_model import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
