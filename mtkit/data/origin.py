"""What a local data folder is, for the model cards and reports that name it: the toolkit's own synthetic demo corpus
(``scripts/demo_corpus.py``, which marks it by the title of its ``README.md``) or the user's files."""

from __future__ import annotations

from pathlib import Path

#: The first line of the demo corpus's README.md (:mod:`mtkit.demo.corpus` writes it), by which it is recognised.
DEMO_TITLE = "# mtkit demo corpus"
#: How cards and reports name the demo corpus.
DEMO_NAME = "the toolkit's synthetic demo corpus"
#: Its id in a card's metadata (no hub dataset: it is generated on the machine).
DEMO_ID = "mtkit-demo-corpus"


def demo_corpus_root(path: str | Path | None) -> Path | None:
    """The demo corpus folder that ``path`` is or lies in (up to three levels: its ``mt-geneval/`` gender pairs
    included), or ``None``."""
    if not path:
        return None
    here = Path(path).absolute()
    for folder in [here, *here.parents][:4]:
        readme = folder / "README.md"
        if readme.is_file():
            with readme.open(encoding="utf-8", errors="replace") as f:
                if f.readline().startswith(DEMO_TITLE):
                    return folder
    return None
