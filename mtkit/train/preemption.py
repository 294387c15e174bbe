"""Stopping on a signal without losing work: spot reclaims, Slurm preemption and time limits send SIGTERM, a
user presses Ctrl-C (SIGINT). The handler only notes the signal; the loop asks :meth:`StopSignal.agreed` at each
update boundary, where every process learns whether any of them was signalled (with several processes one tiny
all-reduce over a gloo group on the host every :attr:`StopSignal.EVERY` updates, so no GPU synchronisation and no
lockstep of the hosts at every update), then writes a checkpoint and raises :class:`mtkit.errors.Stopped`
(exit status 75). A second Ctrl-C while that checkpoint is written interrupts at once; the checkpoint folder only
appears complete, so nothing half-written is ever resumed from.
"""

from __future__ import annotations

import signal

import torch
import torch.distributed as dist


class StopSignal:
    """Notes SIGTERM/SIGINT in this process; :meth:`agreed` tells every process whether any was signalled."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    #: Updates between two agreements among several processes (a signal waits at most this many updates).
    EVERY = 8

    def __init__(self, world_size: int) -> None:
        self.received: str | None = None
        self._previous = {sig: signal.signal(sig, self._note) for sig in self.SIGNALS}
        # The flag travels on the host: a gloo group beside the (maybe NCCL) training group.
        self._group = dist.new_group(backend="gloo") if world_size > 1 and dist.is_initialized() else None

    def _note(self, signum: int, frame) -> None:
        if self.received is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: the user does not want to wait for the checkpoint
        self.received = signal.Signals(signum).name

    def agreed(self, step: int = 0, now: bool = False) -> str | None:
        """The signal any process received, or None; with several processes a collective, made at update ``step``
        only when it is a multiple of :attr:`EVERY` or ``now`` (the same on every process: after a checkpoint)."""
        if self._group is None:
            return self.received
        if step % self.EVERY and not now:
            return None
        flag = torch.tensor([0 if self.received is None else 1 + self.SIGNALS.index(signal.Signals[self.received])])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self._group)
        return None if flag.item() == 0 else self.SIGNALS[flag.item() - 1].name

    def restore(self) -> None:
        """Put back the handlers that were there before."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
