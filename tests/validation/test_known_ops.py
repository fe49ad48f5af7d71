"""The validator learns OpenVINO's opsets from openvino's Python API, not from files in the
wheel: an operation irtool does not implement is known when OpenVINO's opset has it."""

from __future__ import annotations

import pytest

from irtool.validation.ops import is_known_op, openvino_knows


@pytest.mark.parametrize(("op", "version"), [
    ("Loop", "opset5"), ("TensorIterator", "opset1"), ("If", "opset8"),
    ("ReLU", "opset1"), ("SoftMax", "opset1"),  # IR spellings of Relu, Softmax
    ("NonMaxSuppression", "opset9"),
])
def test_openvino_knows(op: str, version: str) -> None:
    assert openvino_knows(op, version)
    assert is_known_op(op, version)


def test_irtools_own_registry_first() -> None:
    """Const (which OpenVINO's factory will not make empty) is known from irtool's registry."""
    assert is_known_op("Const", "opset1") and is_known_op("Parameter", "opset1")


@pytest.mark.parametrize(("op", "version"), [
    ("Loop", "opset1"),           # Loop came with opset5
    ("NoSuchOp", "opset8"),
    ("Loop", "opset999"),         # no such opset
])
def test_unknown(op: str, version: str) -> None:
    assert not openvino_knows(op, version)
    assert not is_known_op(op, version)


def test_no_headers_needed() -> None:
    """The source never reads C++ headers (older wheels ship none)."""
    import inspect

    import irtool.validation.ops as ops

    assert ".hpp" not in inspect.getsource(ops) and "include" not in inspect.getsource(ops)
