"""What the command-line parsers share: one-line errors and one flag style (:mod:`mtkit.flags`)."""

from __future__ import annotations

import argparse

from mtkit.errors import UserError
from mtkit.flags import HelpFormatter, first_names


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`~mtkit.errors.UserError`: one ``error:`` line, exit 2, naming
    an option by its first name (argparse names all its aliases: ``--num_beams/--num-beams/--beam-size``)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise UserError(first_names(message))
