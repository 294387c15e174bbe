"""Run configuration: grouped, typed dataclasses filled from a YAML recipe and ``--key value`` overrides.

A recipe is YAML with one section per group (``data``, ``tokenizer``, ``model``, ``optim``, ``train``, ``eval``,
``logging``, ``mitigation``); a key may also stand at top level. Every key name is unique across groups, so the
command line uses the plain Hugging Face style names (``--max_steps 100``).

One module per section (:mod:`mtkit.config.data`, ...), each field made by :func:`mtkit.config.keys.key`;
:class:`RunConfig` (:mod:`mtkit.config.run`) holds one object of each; :mod:`mtkit.config.parse` reads recipes and
flags into it.
"""

from mtkit.config.data import DataConfig
from mtkit.config.eval import (
    CT2_TOP_P,
    EPSILON,
    MAX_LEN_A,
    MAX_LEN_B,
    MAX_NEW_TOKENS,
    MBR_SAMPLES,
    NUM_BEAMS,
    BestMetric,
    EvalConfig,
)
from mtkit.config.logging import LoggingConfig
from mtkit.config.mitigation import MitigationConfig
from mtkit.config.model import ModelConfig, ModelShape
from mtkit.config.optim import OptimConfig
from mtkit.config.parse import LIST_KEYS, check_ranges, load_recipe, parse_config, train_parser
from mtkit.config.run import FIELDS, GROUPS, RunConfig
from mtkit.config.tokenizer import TokenizerConfig
from mtkit.config.train import TrainConfig

__all__ = [
    "CT2_TOP_P",
    "EPSILON",
    "FIELDS",
    "GROUPS",
    "LIST_KEYS",
    "MAX_LEN_A",
    "MAX_LEN_B",
    "MAX_NEW_TOKENS",
    "MBR_SAMPLES",
    "NUM_BEAMS",
    "BestMetric",
    "DataConfig",
    "EvalConfig",
    "LoggingConfig",
    "MitigationConfig",
    "ModelConfig",
    "ModelShape",
    "OptimConfig",
    "RunConfig",
    "TokenizerConfig",
    "TrainConfig",
    "check_ranges",
    "load_recipe",
    "parse_config",
    "train_parser",
]
