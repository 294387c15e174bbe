"""What a bias report is made of, each resolved once by whoever asks for the report (the command line from its
flags, a training run from its config, a verdict once for its three models): the benchmark's data
(:class:`GenderedSource` for MT-GenEval or a gendered table, :class:`WinoMTSource`), the hypotheses (a
:class:`Translator`, or the path of files that hold them) and ``bias_eval``'s :class:`ReportOptions`; and the one
command line made from them, the report's record of how to rebuild it (:func:`rebuild_command`)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_eval.core.decision import MIN_EFFECT
from bias_eval.core.settings import ReportOptions
from bias_eval.mtgeneval.gendered import GenderedData
from mtkit.data.gendered_tables import load_table
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.data.mtgeneval_hub import load_hub
from mtkit.errors import UserError
from mtkit.evaluation.generation import ReportDecoding, resolve_report
from mtkit.evaluation.subset import gendered_subset

__all__ = ["GenderedSource", "Hypotheses", "ReportOptions", "Translator", "WinoMTSource", "rebuild_command"]


@dataclass(frozen=True)
class GenderedSource:
    """Where an MT-GenEval report's sentences come from: MT-GenEval in its repository layout (``mtgeneval_dir``),
    from the hub (``hub``) or a gendered table (``table``); the split, the target languages (``None``: every one
    there), the contextual subset too, and a subset of about ``max_samples`` sentences."""

    mtgeneval_dir: Path | None = None
    hub: bool = False
    table: Path | None = None
    split: str = "dev"
    langs: tuple[str, ...] | None = None
    context: bool = False
    max_samples: int | None = None

    def load(self) -> GenderedData:
        """The sentences this source names (only MT-GenEval has a contextual subset)."""
        if self.context and self.table:
            raise UserError("--context: only MT-GenEval has a contextual subset (--mtgeneval_dir or --hub)")
        langs = list(self.langs) if self.langs else None
        if self.mtgeneval_dir:
            data = load_mtgeneval(Path(self.mtgeneval_dir), self.split, langs, context=self.context)
        elif self.hub:
            data = load_hub(self.split, langs, context=self.context)
        else:
            data = load_table(Path(self.table), langs)
        return gendered_subset(data, self.max_samples)

    def flags(self) -> list[str]:
        """``scripts/bias_report.py``'s flags that name this source."""
        if self.mtgeneval_dir:
            parts = ["--mtgeneval_dir", str(self.mtgeneval_dir), "--split", self.split]
        elif self.hub:
            parts = ["--hub", "--split", self.split]
        else:
            parts = ["--data", str(self.table)]
        parts += ["--target_langs", *sorted(set(self.langs))] if self.langs else []
        parts += ["--context"] if self.context else []
        return parts + (["--max_samples", str(self.max_samples)] if self.max_samples else [])


@dataclass(frozen=True)
class WinoMTSource:
    """WinoMT in ``folder`` (its ``en.txt``, ``en_pro.txt``, ``en_anti.txt``) scored in the one target language
    ``lang``, on a subset of about ``max_samples`` sentences when given (drawn with the report's seed)."""

    folder: Path
    lang: str
    max_samples: int | None = None

    def flags(self) -> list[str]:
        """``scripts/bias_report.py``'s flags that name this source."""
        parts = ["--benchmark", "winomt", "--winomt_dir", str(self.folder), "--target_lang", self.lang]
        return parts + (["--max_samples", str(self.max_samples)] if self.max_samples else [])


@dataclass(frozen=True)
class Translator:
    """A model that translates a report's sources: how it decodes, resolved once (:meth:`resolve`), and where each
    saved setting came from (``origins``); ``force``: translate even where its tokenizer cannot write a target
    language's references (MT-GenEval's check)."""

    model: str
    decoding: ReportDecoding
    origins: Mapping[str, str]
    force: bool = False

    @classmethod
    def resolve(
        cls, model: str, given: Mapping[str, Any], device: str | None = None, force: bool = False
    ) -> Translator:
        """``model`` decoding with the settings ``given`` (by :class:`~mtkit.decode.settings.DecodingSettings`'s field
        names; a missing or ``None`` one: the model's saved one, else the default), fitted to its position limit
        (:func:`~mtkit.evaluation.generation.resolve_report`)."""
        decoding, origins = resolve_report(model, given, device)
        return cls(model, decoding, origins, force)

    def flags(self) -> list[str]:
        """``--model`` and every decoding setting spelled out as the flags that decode with it."""
        return ["--model", self.model, *self.decoding.flags()]

    def describe(self, cache: Path) -> str:
        """One line saying how the model translated and where its translations are cached."""
        settings = self.decoding.settings
        prompt = f"prompt {settings.prompt.template!r}" if settings.prompt else "no prompt"
        mbr = settings.mbr
        if mbr is not None:
            draw = f"{mbr.samples} {'epsilon/nucleus samples' if mbr.candidates == 'sample' else 'beam n-best'}"
            prompt += f", MBR with {mbr.utility} over {draw}"
        return (
            f"translated by {self.model} (beam {settings.num_beams}, length penalty {settings.length_penalty}, "
            f"at most {settings.max_new_tokens} new tokens and {settings.max_len_a} x source + {settings.max_len_b}, "
            f"{prompt}), cached in {cache}"
        )

    def record(self) -> dict[str, Any]:
        """``metrics.json``'s record of the model and its settings (the prompts are the benchmark's to add)."""
        return {"model": self.model, "generation": self.decoding.record(), "settings_from": dict(self.origins)}


#: a report's hypotheses: a model translating, or the path of files holding them (MT-GenEval: ``--hyp_dir``'s folder;
#: WinoMT: ``--hyp_file``)
Hypotheses = Translator | Path


def rebuild_command(
    source: GenderedSource | WinoMTSource, hypotheses: Hypotheses, out: Path, options: ReportOptions
) -> str:
    """The command line that rebuilds a report of ``hypotheses`` on ``source`` into ``out`` with ``options``, every
    decoding setting spelled out as it was used (WinoMT's report takes no ``--examples``, ``--min_effect`` or
    ``--force``)."""
    mtgeneval = isinstance(source, GenderedSource)
    parts = ["python", "scripts/bias_report.py", *source.flags()]
    if isinstance(hypotheses, Translator):
        parts += hypotheses.flags() + ["--force"] * (mtgeneval and hypotheses.force)
    else:
        parts += ["--hyp_dir" if mtgeneval else "--hyp_file", str(hypotheses)]
    parts += ["--out", str(out), "--bootstrap_samples", str(options.bootstrap_samples), "--seed", str(options.seed)]
    if mtgeneval:
        parts += ["--examples", str(options.examples)]
        parts += ["--min_effect", f"{options.min_effect:g}"] if options.min_effect != MIN_EFFECT else []
    parts += ["--name", options.name] if options.name else []
    layout = options.layout
    parts += ["--label", layout.label] * bool(layout.label) + ["--table_star"] * layout.wide
    parts += ["--no_figures"] * (not options.figures)
    return shlex.join(parts)
