"""Run an IR on OpenVINO's CPU runtime, fed and read by tensor name.

The in-memory ``Model`` is written to a temporary folder first, so OpenVINO
reads exactly the files irtool would save. OpenVINO compiles with
``REFERENCE_CONFIG``: f32 arithmetic and KV cache, no dynamic quantization, since a
cross-check wants OpenVINO's exact numbers, not its fast ones.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BackendError, IRToolError
from ..feeds import input_mismatch
from ..ir import Model, read_model, write_model
from ..ir.types import ELEMENT_TYPES, ElementType, from_raw_bits

PathLike = str | os.PathLike

# OpenVINO wraps its messages in lines saying where they were thrown from.
_BOILERPLATE = re.compile(r"^(Exception from \S+|Check '.*' failed at \S+|\[ ?\w+ ?\]\s*$)")


def one_line(err: BaseException) -> str:
    """The informative line of an OpenVINO exception message."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not _BOILERPLATE.match(ln)]
    text = (useful or lines or [type(err).__name__])[0]
    return text.rstrip(":")


def _irtool_output_names(model: Model | None) -> list[str]:
    return model.output_names() if model is not None else []


# What makes OpenVINO's CPU plugin an exact reference: f32 arithmetic (some CPUs would use
# bf16 for matmuls), an f32 KV cache (stateful LLM exports ask for f16 in their rt_info
# runtime_options) and no dynamic quantization of activations (on by default for models with
# int4/int8 weights: group size 32).
REFERENCE_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
                    "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def run_ir(model_or_path: Model | PathLike,
           inputs: Mapping[str, Any] | Sequence[Any]) -> dict[str, np.ndarray]:
    """Outputs of the IR for ``inputs`` (by tensor name, or in the model's input order).

    A path may also name any other model file OpenVINO reads (``.onnx``).

    Output keys are the names irtool uses (the first name of the port feeding each
    Result) when OpenVINO knows that name, else OpenVINO's ``any_name``. Any
    OpenVINO failure becomes a one-line ``BackendError``.
    """
    return run_ir_steps(model_or_path, [inputs])[0]


def run_ir_steps(model_or_path: Model | PathLike,
                 steps: Sequence[Mapping[str, Any] | Sequence[Any]], *,
                 extensions: Sequence[PathLike] = ()) -> list[dict[str, np.ndarray]]:
    """Outputs of each of ``steps`` run in turn on one OpenVINO infer request, so that a
    stateful model (ReadValue/Assign) keeps its variables from one step to the next, as
    a decode loop does. Inputs and output names as for :func:`run_ir`. ``extensions`` are
    OpenVINO extension libraries to load first (openvino-tokenizers' ops, for one)."""
    try:
        import openvino as ov
    except ImportError as err:  # pragma: no cover - openvino is a dependency
        raise BackendError(f"openvino is not installed: {err}") from None

    with tempfile.TemporaryDirectory(prefix="irtool-ov-") as tmp:
        if isinstance(model_or_path, Model):
            model: Model | None = model_or_path
            xml = Path(tmp) / "model.xml"
            write_model(model_or_path, xml)
        else:
            xml = Path(model_or_path)
            if not xml.is_file():
                raise BackendError("no such IR file", file=str(xml))
            model = None  # OpenVINO also reads files irtool does not (ONNX); it names those
            if xml.suffix.lower() == ".xml":
                with contextlib.suppress(IRToolError):
                    model = read_model(xml)
        where = str(xml) if not isinstance(model_or_path, Model) else None
        core = ov.Core()
        try:
            for library in extensions:
                core.add_extension(str(library))
            compiled = core.compile_model(core.read_model(str(xml)), "CPU", REFERENCE_CONFIG)
        except Exception as err:
            raise BackendError(f"OpenVINO cannot compile the model: {one_line(err)}",
                               file=where) from None
        request = compiled.create_infer_request()
        results = []
        for number, inputs in enumerate(steps):
            feed = _feed(compiled, inputs, where)
            try:
                request.infer(feed)
            except Exception as err:
                step = f" (step {number})" if len(steps) > 1 else ""
                raise BackendError(f"OpenVINO inference failed{step}: {one_line(err)}",
                                   file=where) from None
            results.append(_outputs(compiled, request, _irtool_output_names(model)))
    return results


def _outputs(compiled: Any, request: Any, ours: list[str]) -> dict[str, np.ndarray]:
    # OpenVINO keeps the Results' order. A transformation that removes the layer before a
    # Result can leave its port with another tensor's names (a Loop that passes a value
    # through unchanged: the body Parameter's); a name of ours no port has is then the
    # output at its position.
    claimed = {name for port in compiled.outputs for name in port.get_names()}
    outputs: dict[str, np.ndarray] = {}
    for pos, port in enumerate(compiled.outputs):
        names = port.get_names()
        if pos < len(ours) and (ours[pos] in names or not names or ours[pos] not in claimed):
            key = ours[pos]
        elif names:
            key = port.get_any_name()
        else:
            key = f"output{pos}"
        outputs[key] = _from_openvino(request.get_tensor(port))
    return outputs


def _raw_bits_type(et: Any) -> ElementType | None:
    """irtool's type for ``et`` when OpenVINO's Python API carries its data as raw bits:
    bf16 typed float16, f8 as uint8, 4-bit types packed two to a byte (low nibble first),
    while numpy (ml_dtypes) has a real dtype for it."""
    ours = ELEMENT_TYPES.get(et.get_type_name())
    if ours is None or ours.dtype is None or ours.kind not in ("float", "int", "uint"):
        return None
    return ours if ours.dtype != np.dtype(et.to_dtype()) else None


def _to_bits(et: Any, ours: ElementType, value: np.ndarray) -> Any:
    import openvino as ov

    tensor = ov.Tensor(et, ov.Shape(list(value.shape)))
    target = tensor.data
    if ours.bitwidth == 4:
        nibbles = np.ascontiguousarray(value).ravel().view(np.uint8) & 0x0F
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        target[...] = (nibbles[0::2] | (nibbles[1::2] << 4)).view(target.dtype)
    else:
        target[...] = np.ascontiguousarray(value).view(target.dtype)
    return tensor


def _from_openvino(tensor: Any) -> np.ndarray:
    """An output tensor as numpy; raw-bit types (bf16, f8, 4-bit) get their ml_dtypes type,
    strings are ``str``."""
    if tensor.get_element_type().get_type_name() == "string":
        return np.array(tensor.str_data, dtype=str).reshape(tuple(tensor.get_shape()))
    data = np.array(tensor.data)
    ours = _raw_bits_type(tensor.get_element_type())
    if ours is None:
        return data
    shape = tuple(tensor.get_shape())
    if ours.bitwidth == 4:
        raw = data.view(np.uint8).ravel()
        nibbles = np.empty(raw.size * 2, dtype=np.uint8)
        nibbles[0::2], nibbles[1::2] = raw & 0x0F, raw >> 4
        # ml_dtypes keeps a 4-bit value's code in the low nibble of its byte.
        return nibbles[:int(np.prod(shape))].view(ours.dtype).reshape(shape)
    return data.view(ours.dtype).reshape(shape)


def _feed(compiled: Any, inputs: Mapping[str, Any] | Sequence[Any],
          where: str | None) -> dict[Any, Any]:
    ports = list(compiled.inputs)
    if not isinstance(inputs, Mapping):
        values = list(inputs)
        if len(values) != len(ports):
            raise BackendError(f"{len(values)} inputs given, the model takes {len(ports)}",
                               file=where)
        return {port: _checked(port, np.asarray(v), _name(port), where)
                for port, v in zip(ports, values)}
    taken = [_name(p) for p in ports]
    by_name = {n: port for port in ports for n in port.get_names()}
    # Any of a port's names feeds it; the message speaks of each port's first name.
    given = [next((_name(p) for p in ports if k in p.get_names()), k) if k in by_name else k
             for k in inputs]
    mismatch = input_mismatch(taken, given)
    if mismatch:
        raise BackendError(mismatch, file=where)
    feed: dict[Any, Any] = {}
    for name, value in inputs.items():
        port = by_name[name]
        feed[port] = _checked(port, np.asarray(value), name, where)
    return feed


def _checked(port: Any, value: np.ndarray, name: str, where: str | None) -> Any:
    """``value`` if its dtype is the port's; OpenVINO would silently convert it."""
    et = port.get_element_type()
    if et.is_dynamic():
        return value
    ours = _raw_bits_type(et)
    if ours is not None:
        value = from_raw_bits(value, ours)  # bf16/f8 as npz stores them: |V2, |V1
    if ours is not None and value.dtype == ours.dtype:
        # numpy has no such type: hand OpenVINO the bits in a tensor of its own type.
        return _to_bits(et, ours, value)
    want = np.dtype(et.to_dtype())
    if value.dtype != want and not (et.get_type_name() == "string" and value.dtype.kind in "USO"):
        raise BackendError(f"input {name!r} has dtype {value.dtype}, the model wants "
                           f"{et.get_type_name()} ({want})", file=where)
    _check_shape(port, value, name, where)
    return value


def _check_shape(port: Any, value: np.ndarray, name: str, where: str | None) -> None:
    """A shape the port cannot take is refused naming the input (OpenVINO's own message
    names neither the input nor the shapes)."""
    import openvino as ov

    declared = port.get_partial_shape()
    if not declared.compatible(ov.PartialShape(list(value.shape))):
        raise BackendError(f"input {name!r} has shape {list(value.shape)}, the model "
                           f"wants {declared}", file=where)


def _name(port: Any) -> str:
    return port.get_any_name() if port.get_names() else "<unnamed>"
