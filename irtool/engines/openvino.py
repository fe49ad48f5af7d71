"""OpenVINO's CPU runtime as an engine: an IR run fed and read by tensor name.

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

from ..core.errors import BackendError, IRToolError
from ..core.feeds import input_mismatch
from ..ir import Model, read_model, write_model
from ..ir.types import ELEMENT_TYPES, ElementType, from_raw_bits
from .base import STATE_KEY, Engine, Feed, first_line, flatten_steps, one_line, split_steps

PathLike = str | os.PathLike[str]

def _irtool_output_names(model: Model | None) -> list[str]:
    return model.output_names() if model is not None else []


# What makes OpenVINO's CPU plugin an exact reference: f32 arithmetic (some CPUs would use
# bf16 for matmuls), an f32 KV cache (stateful LLM exports ask for f16 in their rt_info
# runtime_options) and no dynamic quantization of activations (on by default for models with
# int4/int8 weights: group size 32).
REFERENCE_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
                    "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def describe_config(config: Mapping[str, str] | None) -> str:
    """How a report says which settings OpenVINO ran with (None: ``REFERENCE_CONFIG``)."""
    if config is None:
        return "exact modes (" + ", ".join(f"{k}={v}" for k, v in REFERENCE_CONFIG.items()) + ")"
    if not config:
        return "its default settings"
    return ", ".join(f"{k}={v}" for k, v in config.items()) + " (its defaults otherwise)"


def cpu_plugin_refusals(model: Model) -> list[str]:
    """What OpenVINO's CPU plugin refuses to compile in ``model``, seen in the IR alone: one
    line per If layer (named as the ONNX node it converts) one of whose outputs has one
    rank in ``then_body`` and another in ``else_body``. The plugin has no If of dynamic
    rank; irtool's runtime runs one. (The converter resolves an If whose condition follows
    from constants and static shapes, ``--input`` included, so such an If is left only
    where data decides the branch.)"""
    found = []
    for _, layer in model.graph.walk():
        if layer.type != "If":
            continue
        ranks: dict[int, dict[str, int | None]] = {}
        for branch in ("then", "else"):
            body = layer.bodies.get(f"{branch}_body")
            for entry in layer.port_maps.get(f"{branch}_port_map", []):
                if entry.kind != "output" or body is None or entry.internal_layer_id not in body:
                    continue
                result = body.layer(entry.internal_layer_id)
                dims = result.inputs[0].dims if result.inputs else None
                ranks.setdefault(entry.external_port_id, {})[branch] = \
                    None if dims is None else len(dims)
        for port, by in sorted(ranks.items()):
            then, other = by.get("then"), by.get("else")
            if then is not None and other is not None and then != other:
                found.append(f"node {layer.name} (If): output {layer.output_index(port)} has "
                             f"rank {then} in then_branch and {other} in else_branch, and "
                             "which runs is known only at run time: OpenVINO's CPU plugin has "
                             "no If of dynamic rank (irtool's runtime runs it; --input "
                             "resolves an If that input shapes decide)")
                break
    return found


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
                 extensions: Sequence[PathLike] = (), config: Mapping[str, str] | None = None,
                 by_result: bool = False, states: bool = False) -> list[dict[str, np.ndarray]]:
    """Outputs of each of ``steps`` run in turn on one OpenVINO infer request, so that a
    stateful model (ReadValue/Assign) keeps its variables from one step to the next, as
    a decode loop does. Inputs and output names as for :func:`run_ir`. ``extensions`` are
    OpenVINO extension libraries to load first (openvino-tokenizers' ops, for one).

    ``config``: the CPU plugin's properties (None: ``REFERENCE_CONFIG``, its exact modes;
    ``{}``: its own defaults). ``by_result``: outputs keyed by the name of their Result
    layer instead of their tensor name. ``states``: each step's outputs also hold the value
    of every variable after the step (``query_state``), keyed ``STATE_KEY + variable id``."""
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
            if xml.suffix.lower() == ".xml" and not by_result:
                with contextlib.suppress(IRToolError):
                    model = read_model(xml)
        where = str(xml) if not isinstance(model_or_path, Model) else None
        core = ov.Core()
        try:
            for library in extensions:
                core.add_extension(str(library))
            compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                          dict(REFERENCE_CONFIG if config is None else config))
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
            outputs = _outputs(compiled, request, _irtool_output_names(model), by_result)
            if states:
                for variable in request.query_state():
                    outputs[STATE_KEY + variable.name] = _from_openvino(variable.state)
            results.append(outputs)
    return results


def _outputs(compiled: Any, request: Any, ours: list[str],
             by_result: bool = False) -> dict[str, np.ndarray]:
    # OpenVINO keeps the Results' order. A transformation that removes the layer before a
    # Result can leave its port with another tensor's names (a Loop that passes a value
    # through unchanged: the body Parameter's); a name of ours no port has is then the
    # output at its position.
    claimed = {name for port in compiled.outputs for name in port.get_names()}
    outputs: dict[str, np.ndarray] = {}
    for pos, port in enumerate(compiled.outputs):
        names = port.get_names()
        if by_result:
            key = port.get_node().get_friendly_name()
        elif pos < len(ours) and (ours[pos] in names or not names or ours[pos] not in claimed):
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
    assert ours.dtype is not None  # _raw_bits_type gives only types numpy has
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


# -- OpenVINO as an engine ----------------------------------------------------------------------


class OpenVINOEngine(Engine):
    """OpenVINO's CPU runtime on IR files, read from disk so the files themselves are tested.
    ``config``, ``by_result``: as for ``run_ir_steps`` (default: the exact modes, outputs by
    tensor name)."""

    name = "openvino"

    def __init__(self, xml_path: str | os.PathLike[str],
                 config: Mapping[str, str] | None = None, by_result: bool = False) -> None:
        self.xml_path = Path(xml_path)
        self.config = None if config is None else dict(config)
        self.by_result = by_result

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        return run_ir_steps(self.xml_path, [_only_inputs_of(self.xml_path, inputs)],
                            config=self.config, by_result=self.by_result)[0]


class OpenVINOSessionEngine(Engine):
    """OpenVINO's CPU runtime over consecutive steps of one infer request, its variables
    (ReadValue/Assign) kept from step to step. Inputs and outputs are the whole session,
    flattened by ``flatten_steps``; ``extensions`` are OpenVINO extension libraries;
    ``config``, ``by_result`` and ``states`` as for ``run_ir_steps``."""

    name = "openvino"

    def __init__(self, xml_path: str | os.PathLike[str],
                 extensions: Sequence[str | os.PathLike[str]] = (),
                 config: Mapping[str, str] | None = None, by_result: bool = False,
                 states: bool = False) -> None:
        self.xml_path = Path(xml_path)
        self.extensions = [str(e) for e in extensions]
        self.config = None if config is None else dict(config)
        self.by_result = by_result
        self.states = states

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        return flatten_steps(run_ir_steps(self.xml_path, split_steps(inputs),
                                          extensions=self.extensions, config=self.config,
                                          by_result=self.by_result, states=self.states))


class OpenVINOFrontendEngine(Engine):
    """OpenVINO's own ONNX frontend: ``read_model`` on the ``.onnx`` file, then CPU.

    Inputs are fed and outputs named by position in the ONNX graph's order, which
    the frontend keeps: it renames the Parameter of a graph that only passes a
    value through (e.g. a Loop that runs zero times) after the output.
    """

    name = "openvino-frontend"

    def __init__(self, onnx_path: str | os.PathLike[str]) -> None:
        self.onnx_path = Path(onnx_path)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        import onnx

        ov_inputs = _read_with_openvino(self.onnx_path).inputs  # a frontend failure, its reason
        graph = onnx.load(str(self.onnx_path), load_external_data=False).graph
        initialized = {t.name for t in graph.initializer}
        names = [vi.name for vi in graph.input if vi.name not in initialized]
        missing = [n for n in names if n not in inputs]
        if missing:
            raise BackendError(f"missing input(s) {', '.join(missing)}")
        port_names = [port.get_names() for port in ov_inputs]
        feed: dict[str, np.ndarray] | list[np.ndarray] = [inputs[n] for n in names]
        if len(port_names) < len(names) and all(ns & set(names) for ns in port_names):
            # The frontend drops inputs that only lend a type (CastLike's): feed by name.
            feed = {n: inputs[n] for n in names if any(n in ns for ns in port_names)}
        # run_ir hands the path to ov.Core().read_model, which reads ONNX as well as IR.
        outputs = run_ir(self.onnx_path, feed)
        out_names = [vi.name for vi in graph.output]
        if len(outputs) == len(out_names) and set(outputs) != set(out_names):
            return dict(zip(out_names, outputs.values()))
        return outputs


_OV_NOISE = re.compile(r"^(Exception from |Check '.*' failed at |FrontEnd API failed with |"
                       r"While validating ONNX node |Model wasn't fully converted|Summary:)")


def openvino_frontend_reason(err: BaseException) -> str:
    """The line of an OpenVINO ONNX-frontend failure that says what failed: the ops without
    a conversion rule, or ``Op-N: message`` of the first op whose conversion failed."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("-- No conversion rule found"):
            return ln[3:]
    for i, ln in enumerate(lines):
        m = re.match(r"^-- (\S+) with a message:$", ln)
        if m:
            detail = []
            for nxt in lines[i + 1:]:
                if nxt.startswith(("Summary:", "-- ")):
                    break
                if not _OV_NOISE.match(nxt):
                    detail.append(nxt)
            if detail:
                return f"{m.group(1)}: {detail[-1]}"
    return first_line(err)


def _read_with_openvino(path: Path) -> Any:
    """OpenVINO's model read from ``path``; a failure is a ``BackendError`` saying why."""
    import openvino as ov

    try:
        return ov.Core().read_model(str(path))
    except Exception as err:
        raise BackendError(f"read_model: {openvino_frontend_reason(err)}") from None


def _only_inputs_of(xml_path: Path, inputs: Feed) -> dict[str, np.ndarray]:
    """The part of ``inputs`` the IR takes (ONNX initializers may be fed but not wanted)."""
    try:
        names = read_model(xml_path).input_names()
    except IRToolError:
        return dict(inputs)  # let OpenVINO say what it thinks of the file
    return {n: inputs[n] for n in names if n in inputs}
