"""Hypotheses: read them from a folder, or translate the sources with a model and cache them in OUTDIR."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bias_eval.core.textio import atomic_write, normal_lines, read_sentences, split_lines
from bias_eval.mtgeneval.gendered import GENDERS, SEP, GenderedData
from bias_eval.mtgeneval.make import hyp_file
from mtkit.errors import UserError
from mtkit.evaluation.generation import ReportDecoding

Hyps = dict[str, dict[str, list[str]]]  # lang -> "feminine"/"masculine"/"context" -> lines


def sources_to_translate(data: GenderedData) -> dict[str, dict[str, list[str]]]:
    """Per language, the source lines of each hypothesis file, in dataset order.

    The contextual subset is translated as context and sentence together (``<sep>`` becomes a space).
    """
    out: dict[str, dict[str, list[str]]] = {}
    for lang, ld in data.languages.items():
        out[lang] = {g: list(ld.side(g).sources) for g in GENDERS}
        if ld.context is not None:
            out[lang]["context"] = [" ".join(s.replace(SEP, " ").split()) for s in ld.context.sources]
    return out


def no_hyp_files(hyp_dir: Path) -> UserError:
    """The error of a ``--hyp_dir`` without a hypothesis file."""
    return UserError(f"--hyp_dir: {hyp_dir} holds no <lang>.feminine.txt or <lang>.masculine.txt file")


def read_hyp_dir(hyp_dir: Path, data: GenderedData) -> Hyps:
    """Read ``<lang>.feminine.txt``, ``<lang>.masculine.txt`` (and ``<lang>.context.txt``) of ``hyp_dir``."""
    if not hyp_dir.is_dir():
        raise UserError(f"--hyp_dir: {hyp_dir} is not a directory")
    hyps: Hyps = {}
    for lang, kinds in sources_to_translate(data).items():
        hyps[lang] = {}
        for kind, sources in kinds.items():
            path = hyp_file(hyp_dir, lang, kind)
            lines = read_sentences(path)
            if len(lines) != len(sources):
                raise UserError(
                    f"{path}: {len(lines)} lines, but the data has {len(sources)} {kind} sentences "
                    f"for {lang} "
                    "(one hypothesis per source line, in dataset order)"
                )
            hyps[lang][kind] = lines
    return hyps


def model_fingerprint(model: str) -> dict[str, object]:
    """What identifies the model: a hub id, or a folder with its files' names, sizes and times (its model card left
    out: the report rewrites it, and it does not change a translation)."""
    path = Path(model)
    if path.is_dir():
        stats = [(p.name, p.stat()) for p in path.iterdir() if p.is_file() and p.name != "README.md"]
        files = sorted((name, st.st_size, st.st_mtime_ns) for name, st in stats)
        return {"model": str(path.resolve()), "files": files}
    return {"model": model}


def cache_key(
    fingerprint: dict[str, object],
    decoding: ReportDecoding,
    prompt: str | None,
    sources: Sequence[str],
    lang: str | None = None,
) -> str:
    """Hash of everything the cached hypotheses depend on (device excluded, and batch size unless MBR samples)."""
    config = decoding.record() | {"prompt": prompt}
    config.pop("device")
    mbr = decoding.settings.mbr
    if mbr is None or mbr.candidates == "beam":  # samples depend on how sources are batched
        config.pop("batch_size")
    payload = {
        "model": fingerprint,
        "settings": config,
        "sources": hashlib.sha256("\n".join(sources).encode("utf-8")).hexdigest(),
        "target_lang": lang,  # told to the model its family's way (a forced token, a source prefix)
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _cached(path: Path, key_path: Path, key: str, count: int) -> list[str] | None:
    try:
        if key_path.read_text(encoding="utf-8").strip() != key:
            return None
        lines = normal_lines(split_lines(path.read_bytes().decode("utf-8")))
    except (OSError, UnicodeDecodeError):
        return None
    return lines if len(lines) == count else None


def translate_lines(
    model: str, jobs: dict[tuple[str, str], list[str]], cache_dir: Path, decoding: ReportDecoding
) -> dict[tuple[str, str], list[str]]:
    """Translate the sources of every ``(lang, kind)`` job with ``model``; reuse ``cache_dir/<lang>.<kind>.txt``
    when its key matches.

    Each file is written (atomically, with its ``.key``) as soon as it is translated, so an interrupted
    run resumes where it stopped. These are the only files written before the report itself.
    """
    fingerprint, settings = model_fingerprint(model), decoding.settings
    translator = None
    done: dict[tuple[str, str], list[str]] = {}
    for (lang, kind), sources in jobs.items():
        prompt = decoding.prompt_for(lang)
        path, key_path = cache_dir / f"{lang}.{kind}.txt", cache_dir / f"{lang}.{kind}.key"
        key = cache_key(fingerprint, decoding, prompt, sources, lang)
        lines = _cached(path, key_path, key, len(sources))
        if lines is not None:
            print(f"reusing cached hypotheses {path}", file=sys.stderr)
            done[(lang, kind)] = lines
            continue
        if translator is None:
            from mtkit.decode.engines import load_translator

            translator = load_translator(model, settings.engine, device=decoding.device, dtype=settings.dtype)
        print(f"translating {len(sources)} {lang} {kind} sentences", file=sys.stderr)
        out = translator.translate(settings.render(sources, lang), settings, progress=True, target_langs=lang)
        out = normal_lines(" ".join(line.split()) for line in out)  # one line each, in the one normal form
        atomic_write(path, ("\n".join(out) + "\n").encode("utf-8"))
        atomic_write(key_path, (key + "\n").encode("utf-8"))
        done[(lang, kind)] = out
    return done


def translate_dataset(model: str, data: GenderedData, cache_dir: Path, decoding: ReportDecoding) -> Hyps:
    """Translate every source of ``data`` with ``model`` (:func:`translate_lines`, cached in ``cache_dir``)."""
    jobs = {
        (lang, kind): sources for lang, kinds in sources_to_translate(data).items() for kind, sources in kinds.items()
    }
    hyps: Hyps = {lang: {} for lang in data.languages}
    for (lang, kind), lines in translate_lines(model, jobs, cache_dir, decoding).items():
        hyps[lang][kind] = lines
    return hyps
