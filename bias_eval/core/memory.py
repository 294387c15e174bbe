"""Sizes that cannot be allocated, refused before they are: this machine's memory, and one check of a request
against it (a bootstrap's resample counts, a decoding batch's token ids)."""

from __future__ import annotations

import os

from bias_eval.core.errors import UserError


def machine_memory() -> int | None:
    """This machine's physical memory in bytes; ``None`` where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(need: int, memory: int | None, flag: str, what: str) -> None:
    """Refuse ``need`` bytes (``what`` they hold, in words) beyond ``memory`` (``None``: unknown, nothing refused):
    one line naming ``flag``, the size and the memory."""
    if memory is not None and need > memory:
        raise UserError(
            f"{flag}: {what} is {need / 2**30:,.0f} GiB, more than this machine's {memory / 2**30:,.0f} GiB; lower "
            f"{flag.split()[0]}"
        )
