"""Whether two bias reports can be read side by side: each report's own low-signal warnings, and what differs between
them in how the hypotheses were made (the decoding settings) and in what was scored (data set, split, subset, size).
The comparison page puts these lines first, under "Read with care"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.mtgeneval.headline import warnings

#: (key of ``config.hypotheses.generation``, how the comparison names it) of each decoding setting a report records
DECODING: tuple[tuple[str, str], ...] = (
    ("engine", "engine"),
    ("num_beams", "beam size"),
    ("length_penalty", "length penalty"),
    ("max_new_tokens", "max new tokens"),
    ("max_len_a", "max_len_a (output tokens per source token)"),
    ("max_len_b", "max_len_b (output tokens beyond those)"),
    ("prompt", "prompt"),
    ("mbr", "MBR decoding"),
    ("dtype", "weights' type"),
)
#: decoding settings renamed in ``config.hypotheses.generation``: the name now -> the name older reports wrote
FORMER_NAMES = {"num_beams": "beam_size"}
#: (key of ``config``, how the comparison names it) of what a report scored
DATA: tuple[tuple[str, str], ...] = (
    ("data", "data set"),
    ("split", "split"),
    ("max_samples", "subset size (--max_samples)"),
    ("context", "contextual subset scored"),
)
HEADING = "Read with care"


def _shown(value: Any) -> str:
    return "none" if value is None else repr(value) if isinstance(value, str) else str(value)


def generation_setting(generation: Mapping[str, Any], key: str) -> Any:
    """Setting ``key`` of a report's ``config.hypotheses.generation``, under its former name in an older report
    (:data:`FORMER_NAMES`: ``beam_size`` is read as ``num_beams``)."""
    return generation[key] if key in generation else generation.get(FORMER_NAMES.get(key, key))


def _config(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    return metrics.get("config") or {}


def report_warnings(metrics: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """Each report's low-signal warnings (:func:`bias_eval.mtgeneval.headline.warnings`), named after its report."""
    return [f"{name}: {line}" for name, m in zip(names, metrics) for line in warnings(m)]


def decoding_differences(metrics: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """One line when the two reports' models decoded with different settings (each setting that differs, as
    ``before against after``), or when one report's hypotheses came from files, whose decoding is not recorded."""
    generations = [(_config(m).get("hypotheses") or {}).get("generation") for m in metrics]
    read = [name for name, g in zip(names, generations) if g is None]
    if len(read) == 1:
        return [
            f"{read[0]} scored hypotheses read from files (--hyp_dir): how they were decoded is not recorded, "
            "so the two may differ in decoding settings."
        ]
    if read:
        return []
    before, after = generations
    values = [(label, generation_setting(before, key), generation_setting(after, key)) for key, label in DECODING]
    differing = [f"{label}: {_shown(b)} against {_shown(a)}" for label, b, a in values if b != a]
    if not differing:
        return []
    return [f"The two models decoded with different settings ({names[0]} against {names[1]}): {'; '.join(differing)}."]


def data_differences(metrics: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """One line per difference in what the two reports scored: the data set, split, subset and contextual subset
    they name, and the number of hypotheses of each language they share."""
    before, after = (_config(m) for m in metrics)
    lines = [
        f"The reports scored different data, {label}: {names[0]} {_shown(before.get(key))}, "
        f"{names[1]} {_shown(after.get(key))}."
        for key, label in DATA
        if before.get(key) != after.get(key)
    ]
    langs_b, langs_a = (m["languages"] for m in metrics)
    for lang in sorted(set(langs_b) & set(langs_a)):
        n_b, n_a = langs_b[lang].get("n"), langs_a[lang].get("n")
        if n_b != n_a:
            lines.append(f"{lang}: {names[0]} scored {n_b} hypotheses, {names[1]} {n_a}.")
    return lines


def cautions(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """Every line the comparison flags before its table: each report's warnings, then the decoding and data
    differences between them; empty when the two reports compare like for like."""
    both = (before, after)
    return report_warnings(both, names) + decoding_differences(both, names) + data_differences(both, names)
