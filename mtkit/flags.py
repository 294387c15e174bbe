"""One flag style for every script: underscores (``--num_beams``, as transformers' ``HfArgumentParser``), with
dashed spellings (``--num-beams``, and older names such as ``--beam-size``) accepted but never shown."""

from __future__ import annotations

import argparse
import copy
import re


def option(name: str, *old: str) -> list[str]:
    """The option strings of ``--name``: the underscore name first (the one ``--help`` and errors show), then its
    dashed spelling and the ``old`` names, accepted so that earlier command lines still run."""
    strings = [f"--{name}"]
    for alias in (name.replace("_", "-"), *old):
        if f"--{alias}" not in strings:
            strings.append(f"--{alias}")
    return strings


def first_names(message: str) -> str:
    """An argparse error naming an option by its first name (argparse joins them all: ``--a_b/--a-b``)."""
    return re.sub(r"(--\w+)(?:/--[\w-]+)+", r"\1", message)


def join_lists(argv: list[str], keys: tuple[str, ...]) -> list[str]:
    """The command line with a list flag's words joined by commas: ``--target_langs de es`` as
    ``--target_langs de,es`` (each ``--key`` of ``keys``, dashed or not), so that both spellings mean one thing."""
    out: list[str] = []
    state = None  # "flag": just after a list flag; "value": after its first value
    for token in argv:
        if state == "value" and not token.startswith("-"):
            out[-1] += "," + token
            continue
        name, equals, _ = token[2:].replace("-", "_").partition("=")
        if token.startswith("--") and name in keys:
            state = "value" if equals else "flag"
        else:
            state = "value" if state == "flag" and not token.startswith("-") else None
        out.append(token)
    return out


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help`` shows an option by its short names and its first long name: the aliases stay out of sight
    (argparse's usage line already shows only the first)."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        long = [s for s in action.option_strings if s.startswith("--")]
        if len(long) > 1:
            action = copy.copy(action)
            action.option_strings = [s for s in action.option_strings if not s.startswith("--")] + long[:1]
        return super()._format_action_invocation(action)


class DefaultsHelpFormatter(HelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """:class:`HelpFormatter` that also states each option's default (as ``HfArgumentParser``'s own does), once: not
    where the help already says it, nor for an option without one (``None``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help = action.help or ""
        if isinstance(action, argparse._StoreFalseAction) and action.option_strings[0].startswith("--no_"):
            return f"Negates --{action.dest}."  # HfArgumentParser's complement of a flag that is on by default
        if action.default is None or "default" in help.lower():
            return help
        return super()._get_help_string(action)
