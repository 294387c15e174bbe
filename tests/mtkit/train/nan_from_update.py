"""``scripts/train.py`` with a NaN injected into the training loss of every update from ``$NAN_FROM_UPDATE`` on
(counted in micro-batches of this process, one per update without accumulation), for the non-finite tests."""

import os

import mtkit.pipeline
import mtkit.train.trainer
from mtkit.config import parse_config
from mtkit.errors import cli_entry

token_loss_sum = mtkit.train.trainer.token_loss_sum
calls = 0


def poisoned(model, batch, label_smoothing):
    global calls
    calls += 1
    loss = token_loss_sum(model, batch, label_smoothing)
    return loss * float("nan") if calls >= int(os.environ["NAN_FROM_UPDATE"]) else loss


@cli_entry
def main() -> None:
    mtkit.train.trainer.token_loss_sum = poisoned
    mtkit.pipeline.run(parse_config())


if __name__ == "__main__":
    main()
