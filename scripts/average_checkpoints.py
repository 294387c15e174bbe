"""Average a run's checkpoints into one model (fairseq-style): ``python scripts/average_checkpoints.py runs/x
runs/x/averaged --last 5`` (or ``--best 5`` by the run's --metric_for_best_model, or ``--last_epochs 10``)."""

from mtkit.cli.average_checkpoints import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
