"""A device the machine lacks is one line saying what the machine has (compared with torch's and CTranslate2's own
counts), before any model loads."""

from __future__ import annotations

import pytest
import torch

from mtkit.decode.devices import check_device, machine
from mtkit.errors import UserError

ctranslate2 = pytest.importorskip("ctranslate2")


def test_the_machine_is_described_by_what_torch_and_ctranslate2_count():
    for engine, count in (("hf", torch.cuda.device_count()), ("ct2", ctranslate2.get_cuda_device_count())):
        described = machine(engine)
        assert ("CUDA" in described) == (count > 0)
        assert all(f"cuda:{i}" in described for i in range(count))


@pytest.mark.parametrize("engine", ["hf", "ct2"])
def test_a_cuda_device_past_the_count_is_refused(engine):
    count = torch.cuda.device_count() if engine == "hf" else ctranslate2.get_cuda_device_count()
    with pytest.raises(UserError) as err:
        check_device(f"cuda:{count}", engine)
    assert str(err.value) == f"--device cuda:{count}: this machine has no such CUDA device; it has {machine(engine)}"
    if count == 0:
        with pytest.raises(UserError, match="no such CUDA device; it has cpu only"):
            check_device("cuda", engine)


def test_no_device_at_all_and_devices_an_engine_lacks_are_refused():
    with pytest.raises(UserError, match=r"^--device gpu: not a device \(cpu, cuda, cuda:1\); this machine has"):
        check_device("gpu")
    with pytest.raises(UserError, match="^--device mps: not a device ct2 decodes on"):
        check_device("mps", "ct2")
    for device in (None, "cpu"):
        check_device(device)
        check_device(device, "ct2")
