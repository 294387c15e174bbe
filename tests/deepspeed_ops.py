"""Build DeepSpeed's CPU communication op (torch's JIT extension, about a minute on 2 cores) into the checkout's
``.cache/torch_extensions``, where the suite loads it from (tests/conftest.py).

DeepSpeed builds it on first use; ``make test`` builds it once when it sets up ``.venv``, as an install with
``DS_BUILD_OPS`` would, so that the suite's runs do not wait on it. Run as ``python tests/deepspeed_ops.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: where the suite's DeepSpeed runs find the op: the checkout's own folder, not the shared ~/.cache, where a build
#: killed halfway leaves a ``lock`` file behind that every later DeepSpeed start on that machine waits on forever
EXTENSIONS = Path(__file__).resolve().parent.parent / ".cache" / "torch_extensions"


def built(extensions: Path) -> bool:
    """Whether ``extensions`` holds the op."""
    return any(extensions.glob("deepspeed_shm_comm/*.so"))


def build() -> None:
    """Build the op into ``$TORCH_EXTENSIONS_DIR`` (default :data:`EXTENSIONS`); nothing to do where it is built."""
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(EXTENSIONS))
    if built(Path(os.environ["TORCH_EXTENSIONS_DIR"])):
        return
    # The suite's processes find the venv's own ninja first (testing_utils.run_script puts its bin first on PATH), so
    # this build must use it too: a system ninja of another version keeps another build log, and the first DeepSpeed
    # start of the suite would then build the op again (a minute of CPU beside the suite's first launches).
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    from deepspeed.accelerator import get_accelerator

    if get_accelerator().device_name() == "cpu":
        get_accelerator().create_op_builder("ShareMemCommBuilder").load()


if __name__ == "__main__":
    build()
