"""What the command-line parsers share."""

from __future__ import annotations

import argparse

from mtkit.errors import UserError


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`~mtkit.errors.UserError`: one ``error:`` line, exit 2."""

    def error(self, message: str):
        raise UserError(message)
