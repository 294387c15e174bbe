"""``scripts/prepare_text.py INPUT OUTPUT [--how moses-lc|moses]``: a copy of parallel text files prepared as the
papers prepare theirs (lowercased, punctuation normalised, Moses-tokenized: :func:`mtkit.evaluation.paper_bleu.
prepare`), for a model trained on such text (Multi30k's ``tok/`` files) to be fed, scored or mitigated on other data
(raw Multi30k, MT-GenEval).

Each file's language is its last suffix (``train.de.gz``, ``geneval-sentences-feminine-dev.en_de.de``); a file
with none that Moses has rules for (``LICENSE``, ``notes.txt``) is copied as it is. Names, folders and ``.gz``
compression are kept. In MT-GenEval's ``annotated/`` files the ``<F>..</F>`` / ``<M>..</M>`` marks are kept around
their prepared words. The copy is written beside OUTPUT and renamed into place: nothing half-written is left."""

from __future__ import annotations

import functools
import gzip
import re
import shutil
import tempfile
from pathlib import Path

from bias_eval.core.textio import atomic_write, follow_umask_tree, read_lines
from bias_eval.mtgeneval.gendered import GENDER_MARK
from mtkit.cli.args import Parser
from mtkit.errors import UserError
from mtkit.evaluation.paper_bleu import PREPARATIONS, prepare
from mtkit.paths import check_apart

#: a file's language: its last suffix, before ``.gz``
_LANG = re.compile(r"\.([a-z]{2,3})(\.gz)?$")


def build_parser() -> Parser:
    """The argument parser of ``scripts/prepare_text.py``."""
    p = Parser(description="Prepare parallel text files as the papers do (lowercase, normalise, Moses-tokenize).")
    p.add_argument("input", metavar="INPUT", help="a text file or a folder of them (searched recursively)")
    p.add_argument("output", metavar="OUTPUT", help="the prepared copy: a new (or empty) file or folder")
    p.add_argument(
        "--how",
        choices=[h for h in PREPARATIONS if h != "tokenized"],
        default="moses-lc",
        help="moses-lc: lowercased, normalised, tokenized (the Multi30k release's tok/ files); moses: cased",
    )
    return p


@functools.cache
def _moses_languages() -> frozenset[str]:
    from sacremoses.corpus import NonbreakingPrefixes

    return frozenset(NonbreakingPrefixes().available_langs.values())


def language(path: Path) -> str | None:
    """The language code a file's name ends in (``de`` of ``train.de.gz``) when Moses has rules for it, or
    ``None`` (``notes.txt``)."""
    match = _LANG.search(path.name)
    return match.group(1) if match and match.group(1) in _moses_languages() else None


def prepare_marked(line: str, lang: str, how: str) -> str:
    """One annotated MT-GenEval line prepared whole (marks removed, so it matches the plain file's line), then each
    ``<F>..</F>`` / ``<M>..</M>`` mark put back around its prepared words, in order; a mark written inside a longer
    word (``abbotsleigh-<F>mädchenschule</F>``, ``<F>Ms</F>.``) goes around that word, and one found nowhere (the
    whole line tokenized otherwise) is left out. The marks only show which words are gendered; no figure uses them."""
    tokens = prepare([GENDER_MARK.sub(r"\2", line)], lang, how)[0].split()
    at = 0
    for mark in GENDER_MARK.finditer(line):
        words = prepare([mark.group(2)], lang, how)[0].split()
        n = len(words)
        spans = [(i, n) for i in range(at, len(tokens) - n + 1) if tokens[i : i + n] == words]
        part = re.compile(rf"(^|[-.]){re.escape(words[0])}($|[-.])") if words else None
        spans = spans or [(i, 1) for i in range(at, len(tokens)) if part and part.search(tokens[i])]
        if not words or not spans:
            continue
        (start, n), tag = spans[0], mark.group(1)
        tokens[start] = f"<{tag}>{tokens[start]}"
        tokens[start + n - 1] += f"</{tag}>"
        at = start + n
    return " ".join(tokens)


def prepare_file(source: Path, target: Path, how: str) -> bool:
    """Write ``source`` prepared to ``target`` (copied as it is when its name carries no language); whether it was
    prepared."""
    lang = language(source)
    if lang is None:
        shutil.copyfile(source, target)
        return False
    lines = read_lines(source)
    if source.parent.name == "annotated":
        prepared = [prepare_marked(line, lang, how) for line in lines]
    else:
        prepared = prepare(lines, lang, how)
    data = "".join(f"{line}\n" for line in prepared).encode()
    atomic_write(target, gzip.compress(data, mtime=0) if source.suffix == ".gz" else data)
    return True


def prepare_tree(source: Path, output: Path, how: str) -> tuple[int, int]:
    """Prepare ``source`` (a file or a folder) into ``output`` through a temporary sibling renamed at the end;
    (files prepared, files copied)."""
    if not source.exists():
        raise UserError(f"INPUT {source}: no such file or folder")
    if output.exists() and (output.is_file() or any(output.iterdir())):
        raise UserError(f"OUTPUT {output}: exists and is not empty; give a new folder")
    check_apart({"INPUT": source}, {"OUTPUT": output})
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    if source.is_file() and language(source) is None:
        raise UserError(f"INPUT {source}: its name ends in no language code Moses knows (such as .de or .en.gz)")
    work = None
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
        done = 0
        for path in files:
            target = work / (path.relative_to(source) if source.is_dir() else path.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            done += prepare_file(path, target, how)
        follow_umask_tree(work)
        if output.exists():
            output.rmdir()
        (work if source.is_dir() else work / source.name).replace(output)
    except OSError as err:
        raise UserError(f"OUTPUT {output}: cannot write ({err.strerror or err})") from None
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return done, len(files) - done


def main(argv: list[str] | None = None) -> None:
    """``scripts/prepare_text.py INPUT OUTPUT [--how moses-lc|moses]``."""
    args = build_parser().parse_args(argv)
    done, copied = prepare_tree(Path(args.input), Path(args.output), args.how)
    how = f"{args.how}: {PREPARATIONS[args.how]}"
    print(f"prepared {done} file(s) ({how}), copied {copied} as they are, into {args.output}")
