"""A run's configuration: :class:`RunConfig` holds one object per recipe section, in the order recipes and
``config.yaml`` list them; :data:`FIELDS` finds any key's section (every key name is unique across sections)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bias_eval.core.textio import atomic_write
from mtkit.config.data import DataConfig
from mtkit.config.eval import EvalConfig
from mtkit.config.logging import LoggingConfig
from mtkit.config.mitigation import MitigationConfig
from mtkit.config.model import ModelConfig
from mtkit.config.optim import OptimConfig
from mtkit.config.tokenizer import TokenizerConfig
from mtkit.config.train import TrainConfig

GROUPS: dict[str, type] = {
    "data": DataConfig,
    "tokenizer": TokenizerConfig,
    "model": ModelConfig,
    "optim": OptimConfig,
    "train": TrainConfig,
    "eval": EvalConfig,
    "logging": LoggingConfig,
    "mitigation": MitigationConfig,
}


@dataclass
class RunConfig:
    """All groups of one run."""

    data: DataConfig = field(default_factory=DataConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    mitigation: MitigationConfig = field(default_factory=MitigationConfig)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: dataclasses.asdict(getattr(self, name)) for name in GROUPS}

    def flat(self) -> dict[str, Any]:
        return {k: v for group in self.to_dict().values() for k, v in group.items()}

    def save(self, path: str | Path) -> None:
        """Write the recipe atomically (a full disk is one :class:`UserError` naming the file)."""
        atomic_write(Path(path), yaml.safe_dump(self.to_dict(), sort_keys=False).encode("utf-8"))


FIELDS: dict[str, tuple[str, dataclasses.Field]] = {
    f.name: (group, f) for group, cls in GROUPS.items() for f in dataclasses.fields(cls)
}
