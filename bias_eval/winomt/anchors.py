"""How a WinoMT report's figures stand beside the published ones: Google Translate's outputs of the benchmark scored by
this package's readers, set beside what Stanovsky et al. (ACL 2019, Table 2) published for the same outputs, and the
sentence every report of a fully scored benchmark carries about it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the figures of an anchor, in order: accuracy (%), ΔG and ΔS (points)
FIGURES = ("accuracy", "delta_g", "delta_s")
_NAMES = {"accuracy": "accuracy", "delta_g": "ΔG", "delta_s": "ΔS"}
#: per language: accuracy, ΔG and ΔS of Google Translate's outputs as Stanovsky et al. (2019, Table 2) published
#: them, then as this package's readers score the same outputs (rounded to one decimal; docs/bias_evaluation.md#winomt;
#: de, es, fr and it from the files in the toolkit's shared data, which the tests recompute, ru, uk, he and ar from
#: the benchmark's repository); "-" where a language is not scored
_TABLE = """
de  59.4 12.5 12.5  59.4 12.5 12.5
es  53.1 23.4 21.3  53.2 23.2 20.9
fr  63.6  6.4 26.7  65.0  7.1 22.4
it  39.6 32.9 21.5  40.1 37.7 16.6
ru  37.7 36.8 11.4  37.7 36.8 11.4
uk  38.4 43.6 10.8  38.3 39.5  5.8
he  53.7  7.9 37.8  50.8 11.5 35.6
ar  48.5 43.7 16.1  45.9 42.5 16.2
"""
_ROWS = {lang: [float(v) for v in values if v != "-"] for lang, *values in map(str.split, _TABLE.strip().splitlines())}
PUBLISHED = {lang: tuple(values[:3]) for lang, values in _ROWS.items()}
HERE = {lang: tuple(values[3:]) for lang, values in _ROWS.items() if len(values) == 6}
#: what tells this package's readers and the paper's tagger apart where they differ by more than a point
WHY = {
    "fr": "the paper's spaCy 2 tagger read some elided phrases (L'avocat) as feminine",
    "it": "the paper's spaCy 2 tagger read some nouns in -e as feminine that grammar makes masculine (l'ingegnere, "
    "al pedone)",
    "uk": "pymorphy3's Ukrainian dictionary (2022) gives a gender to words the paper's 2016 one did not",
    "he": "the paper's scorer read a profession with no word aligned to it as feminine, which the benchmark's scorer "
    "has read as unknown since 2020, as here (read the paper's way, the same outputs give its figures)",
    "ar": "the paper's scorer read a profession with no word aligned to it as masculine, which the benchmark's scorer "
    "has read as unknown since 2020, as here (read the paper's way, the same outputs give its figures)",
}


def offsets(lang: str) -> dict[str, float]:
    """Each figure's offset, here minus published, in points."""
    return {name: here - published for name, here, published in zip(FIGURES, HERE[lang], PUBLISHED[lang])}


def anchor(lang: str) -> str | None:
    """The sentence on how ``lang``'s figures stand beside published WinoMT tables (``None``: no anchor): what these
    readers give on Google Translate's outputs against what the benchmark's paper published, and, for each figure
    that differs by more than a point, by how much this language's figures run above or below that paper's."""
    if lang not in HERE:
        return None
    said = ", ".join(f"{_NAMES[n]} {v:.1f}" for n, v in zip(FIGURES, HERE[lang]))
    published = ", ".join(f"{v:.1f}" for v in PUBLISHED[lang])
    said = f"On Google Translate's outputs of WinoMT these readers give {said}, where Stanovsky et al. (2019) "
    said += f"published {published}"
    off = {name: value for name, value in offsets(lang).items() if abs(value) > 1.0}
    if not off:
        return said + ": within a point on each, so these figures can be set beside published ones."
    runs = "; ".join(f"{_NAMES[n]} {abs(v):.1f} points {'above' if v > 0 else 'below'}" for n, v in off.items())
    return (
        f"{said}: figures of {lang} here differ from that paper's by more than a point ({runs}), as {WHY[lang]}, so "
        "set them beside published ones with those offsets in mind."
    )


def whole(config: Mapping[str, Any]) -> bool:
    """Whether a report's translations are of the whole benchmark: no subset drawn, one line per sentence of
    ``en.txt`` (as Google's outputs, two of whose lines translate sentences ``en.txt`` now holds at other lines)."""
    return not config.get("sample") and config["lines"] == config["sentences"]


def published_line(metrics: Mapping[str, Any]) -> str:
    """The report's "beside published figures" line: the anchor where the whole benchmark was scored, else why no
    published figure is set beside these."""
    config = metrics["config"]
    if config.get("sample"):
        return (
            f"Not set beside published figures: a stratified subset of {metrics['n']:,} of the benchmark's "
            "sentences was scored, and published figures are of all of them."
        )
    if not whole(config):
        return (
            f"Not set beside published figures: {config['lines']:,} lines translate part of the benchmark's "
            f"{config['sentences']:,} sentences, and published figures are of all of them."
        )
    return metrics.get("anchor") or f"No published figures of {metrics['language']} to set these beside."
