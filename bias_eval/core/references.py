"""The benchmarks' references as BibTeX, written as ``references.bib`` into every report folder and shown on its
page, so that a paper quoting a report cites the data set it was scored on."""

from __future__ import annotations

#: each benchmark's paper (the key is the ACL Anthology's)
BIBTEX = {
    "mtgeneval": """@inproceedings{currey-etal-2022-mt,
  title = {{MT}-{G}en{E}val: A Counterfactual and Contextual Dataset for Evaluating Gender Accuracy in
           Machine Translation},
  author = {Currey, Anna and Nadejde, Maria and Pappagari, Raghavendra and Mayer, Mia and Lauly, Stanislas and
            Niu, Xing and Hsu, Benjamin and Dinu, Georgiana},
  booktitle = {Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing},
  year = {2022},
  address = {Abu Dhabi, United Arab Emirates},
  publisher = {Association for Computational Linguistics},
  pages = {4287--4299},
  doi = {10.18653/v1/2022.emnlp-main.288}
}
""",
    "winomt": """@inproceedings{stanovsky-etal-2019-evaluating,
  title = {Evaluating Gender Bias in Machine Translation},
  author = {Stanovsky, Gabriel and Smith, Noah A. and Zettlemoyer, Luke},
  booktitle = {Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  year = {2019},
  address = {Florence, Italy},
  publisher = {Association for Computational Linguistics},
  pages = {1679--1684},
  doi = {10.18653/v1/P19-1164}
}
""",
}
#: the name of the file every report folder holds
FILE = "references.bib"


def bibtex(benchmark: str) -> bytes:
    """``references.bib`` of a report on ``benchmark`` (``mtgeneval`` or ``winomt``), UTF-8."""
    return BIBTEX[benchmark].encode("utf-8")
