"""The device a script is asked to decode on, checked against what the machine has before anything loads: a
device it lacks is one line saying what it has, not an assertion deep in torch or CTranslate2."""

from __future__ import annotations

import torch

from mtkit.errors import UserError


def cuda_count(engine: str = "hf") -> int:
    """The CUDA devices ``engine`` sees (CTranslate2 counts its own)."""
    if engine == "ct2":
        import ctranslate2

        return ctranslate2.get_cuda_device_count()
    return torch.cuda.device_count()


def machine(engine: str = "hf") -> str:
    """What this machine decodes on, in words: ``cpu only`` or ``cpu and 2 CUDA devices (cuda:0, cuda:1)``."""
    n = cuda_count(engine)
    has = ["cpu"]
    if n:
        has.append(f"{n} CUDA device{'s' * (n > 1)} ({', '.join(f'cuda:{i}' for i in range(n))})")
    if engine == "hf" and torch.backends.mps.is_available():
        has.append("mps")
    return " and ".join(has) if len(has) > 1 else "cpu only"


def check_device(device: str | None, engine: str = "hf", flag: str = "--device") -> None:
    """Refuse a ``device`` the machine (as ``engine`` sees it) does not have, or that is no device at all; ``None``
    (the default: CUDA when there is one) passes."""
    if device is None:
        return
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise UserError(
            f"{flag} {device}: not a device (cpu, cuda, cuda:1); this machine has {machine(engine)}"
        ) from None
    kinds = ("cpu", "cuda") if engine == "ct2" else ("cpu", "cuda", "mps")
    if parsed.type not in kinds:
        raise UserError(f"{flag} {device}: not a device {engine} decodes on; this machine has {machine(engine)}")
    if parsed.type == "cuda":
        n = cuda_count(engine)
        if not n or (parsed.index or 0) >= n:
            raise UserError(f"{flag} {device}: this machine has no such CUDA device; it has {machine(engine)}")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise UserError(f"{flag} {device}: this machine has no MPS device; it has {machine(engine)}")
