"""Which device a setting names ("auto": a GPU if there is one) and which precision each device trains in: the
GPU's own compute capability decides, not emulation."""

import pytest
import torch

from transformer_course import autocast_dtype
from transformer_course.device import resolve_device


@pytest.fixture
def gpus(monkeypatch):
    """Pretend GPUs: ``gpus({0: (7, 5), 1: (8, 0)})`` gives cuda:0 compute capability 7.5 and cuda:1 8.0."""

    def install(capabilities: dict[int, tuple[int, int]], current: int = 0):
        def get_device_capability(device=None):
            index = torch.device(device).index if device is not None else None
            return capabilities[current if index is None else index]

        monkeypatch.setattr(torch.cuda, "get_device_capability", get_device_capability)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: current)
        # torch 2.13 answers True on sm75 (emulated bfloat16): autocast_dtype must not rely on it.
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)

    return install


def test_a_t4_sm75_trains_in_float16(gpus):
    gpus({0: (7, 5)})
    assert autocast_dtype("cuda") is torch.float16


def test_an_a100_sm80_and_newer_train_in_bfloat16(gpus):
    gpus({0: (8, 0), 1: (9, 0)})
    assert autocast_dtype("cuda:0") is torch.bfloat16
    assert autocast_dtype(torch.device("cuda", 1)) is torch.bfloat16


def test_the_given_gpu_decides_not_the_current_one(gpus):
    gpus({0: (8, 0), 1: (7, 5)}, current=0)
    assert autocast_dtype("cuda:1") is torch.float16


def test_the_cpu_trains_in_float32():
    assert autocast_dtype("cpu") is None
    assert autocast_dtype(torch.device("cpu")) is None


def test_auto_is_the_gpu_when_there_is_one(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda")
    assert resolve_device(None) == torch.device("cuda")


def test_auto_is_the_cpu_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")


def test_a_named_device_is_taken_as_it_is():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_an_unknown_device_is_refused_with_the_names_it_takes():
    with pytest.raises(ValueError, match=r"unknown device 'gpu': use auto, cpu, cuda or cuda:N"):
        resolve_device("gpu")


def test_a_cuda_device_without_a_gpu_is_refused_when_asked_for(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="PyTorch sees no CUDA GPU here"):
        resolve_device("cuda:0")
