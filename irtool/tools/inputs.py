"""Inputs for a cross-check: given arrays, or deterministic random ones of the declared types.

Random values depend only on the seed and the input's name (not on the order of
inputs): floats uniform in [-1, 1), booleans random, integers in 0..4. Inputs
that steer a Loop (directly or through Identity/Cast/Squeeze/Unsqueeze/Reshape)
are kept from making it degenerate: trip counts (``M``) are in 1..5 and initial
conditions (``cond``) are true, so the body runs.
Dynamic dimensions need a shape (``shapes`` / ``--shape name=2,3``) unless
``default_dim`` is given.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import IRToolError
from ..core.feeds import input_mismatch

if TYPE_CHECKING:
    import onnx

# Ops that pass a value through unchanged in everything that matters for a trip count.
_PASS_THROUGH = {"Identity", "Cast", "Squeeze", "Unsqueeze", "Reshape", "Flatten"}


MAX_RANDOM_INPUT_BYTES = 1 << 30
"""The largest random input a check makes: a larger declared shape is a mistake or a model
too large for a random cross-check."""


class CheckInputError(IRToolError):
    """Inputs for a check that cannot be made or do not fit the model."""


@dataclass(frozen=True)
class InputSpec:
    """A graph input: name, numpy dtype, declared dims (``None``: unknown dim or rank)."""

    name: str
    dtype: np.dtype
    dims: tuple[int | None, ...] | None
    dim_names: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.dims is None:
            return f"{self.dtype.name}[unknown rank]"
        shown = [str(d) if d is not None else (n or "?")
                 for d, n in zip(self.dims, self.dim_names or ("",) * len(self.dims))]
        return f"{self.dtype.name}[{', '.join(shown)}]"


def input_specs(model: onnx.ModelProto) -> list[InputSpec]:
    """The graph inputs a caller must feed (inputs with an initializer are optional in ONNX
    and left out), with numpy dtypes. Non-tensor inputs raise ``CheckInputError``."""
    from onnx import helper

    initialized = {t.name for t in model.graph.initializer}
    specs = []
    for vi in model.graph.input:
        if vi.name in initialized:
            continue
        if not vi.type.HasField("tensor_type"):
            kind = vi.type.WhichOneof("value") or "untyped"
            raise CheckInputError(f"input {vi.name!r} is a {kind.replace('_type', '')}, "
                                  "not a tensor; only tensor inputs can be generated or fed")
        tt = vi.type.tensor_type
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        except (KeyError, TypeError, ValueError):
            raise CheckInputError(f"input {vi.name!r} has element type {tt.elem_type}, which "
                                  "numpy cannot hold") from None
        if not tt.HasField("shape"):
            specs.append(InputSpec(vi.name, dtype, None))
            continue
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        names = tuple(d.dim_param for d in tt.shape.dim)
        specs.append(InputSpec(vi.name, dtype, dims, names))
    return specs


def trip_count_inputs(model: onnx.ModelProto) -> set[str]:
    """Graph inputs that reach the trip count ``M`` of some Loop (bodies included)."""
    return _loop_inputs(model, 0)


def loop_condition_inputs(model: onnx.ModelProto) -> set[str]:
    """Graph inputs that reach the initial condition ``cond`` of some Loop."""
    return _loop_inputs(model, 1)


def _loop_inputs(model: onnx.ModelProto, index: int) -> set[str]:
    from ..frontends.onnx.protos import walk_nodes

    producers: dict[str, tuple[str, list[str]]] = {}
    loops_m: list[str] = []
    for node in walk_nodes(model.graph):
        for out in node.output:
            producers[out] = (node.op_type, list(node.input))
        if node.op_type == "Loop" and len(node.input) > index and node.input[index]:
            loops_m.append(node.input[index])
    graph_inputs = {vi.name for vi in model.graph.input}
    found: set[str] = set()
    for name in loops_m:
        seen: set[str] = set()
        while name and name not in seen:
            seen.add(name)
            if name in graph_inputs:
                found.add(name)
                break
            op, ins = producers.get(name, ("", []))
            if op not in _PASS_THROUGH or not ins:
                break
            name = ins[0]
    return found


def parse_shape_option(text: str) -> tuple[str, tuple[int, ...]]:
    """``"x=2,3"`` -> ``("x", (2, 3))``; ``"x="`` is a scalar. Bad text raises."""
    name, sep, dims = text.partition("=")
    if not sep or not name.strip():
        raise CheckInputError(f"--shape {text!r}: expected NAME=D0,D1,... (e.g. x=2,3)")
    try:
        shape = tuple(int(d) for d in dims.replace("x", ",").split(",") if d.strip())
    except ValueError:
        raise CheckInputError(f"--shape {text!r}: dimensions must be integers") from None
    if any(d < 0 for d in shape):
        raise CheckInputError(f"--shape {text!r}: dimensions must not be negative")
    return name.strip(), shape


def make_inputs(model: onnx.ModelProto, given: Mapping[str, Any] | None = None, *,
                seed: int = 0, shapes: Mapping[str, tuple[int, ...]] | None = None,
                default_dim: int | None = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """One array per graph input: ``given`` ones (checked) and random ones for the rest.

    Returns the feed (in graph-input order) and the names that were generated.
    """
    specs = input_specs(model)
    by_name = {s.name: s for s in specs}
    given = dict(given or {})
    shapes = dict(shapes or {})
    all_inputs = {vi.name for vi in model.graph.input}  # initializers listed as inputs too
    # The inputs not given are made up, so only names that are no input are wrong.
    mismatch = input_mismatch([s.name for s in specs],
                              [k for k in given if k not in all_inputs], all_required=False)
    if mismatch:
        raise CheckInputError(mismatch)
    unknown = sorted(set(shapes) - set(by_name))
    if unknown:
        raise CheckInputError(f"--shape for {', '.join(unknown)}: no such input; the model "
                              f"takes {', '.join(s.name for s in specs) or 'none'}")
    trip_counts = trip_count_inputs(model)
    conditions = loop_condition_inputs(model)
    feed: dict[str, np.ndarray] = {}
    generated: list[str] = []
    for spec in specs:
        if spec.name in given:
            feed[spec.name] = _checked(spec, np.asarray(given[spec.name]))
            continue
        shape = _shape_for(spec, shapes.get(spec.name), default_dim)
        size = int(np.prod(shape, dtype=object)) * spec.dtype.itemsize
        if size > MAX_RANDOM_INPUT_BYTES:
            raise CheckInputError(f"input {spec.name!r} of shape {list(shape)} would take "
                                  f"{size / 2**30:.3g} GiB of random values (at most "
                                  f"{MAX_RANDOM_INPUT_BYTES // 2**30} GiB are made); give it "
                                  "in an .npz or a smaller --shape")
        rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
        if spec.name in conditions and spec.dtype == np.bool_:
            feed[spec.name] = np.ones(shape, dtype=np.bool_)
        else:
            feed[spec.name] = _random(rng, spec.dtype, shape, spec.name in trip_counts)
        generated.append(spec.name)
    # Initializer-backed inputs that were given explicitly override their defaults.
    for name in given:
        if name not in feed:
            feed[name] = np.asarray(given[name])
    return feed, generated


def _checked(spec: InputSpec, value: np.ndarray) -> np.ndarray:
    if value.dtype != spec.dtype and not (value.dtype.kind in "USO" and spec.dtype.kind in "USO"):
        raise CheckInputError(f"input {spec.name!r} is {value.dtype.name}, the model declares "
                              f"{spec.describe()}")
    if spec.dims is not None:
        ok = len(spec.dims) == value.ndim and all(
            d is None or d == v for d, v in zip(spec.dims, value.shape))
        if not ok:
            raise CheckInputError(f"input {spec.name!r} has shape {list(value.shape)}, the model "
                                  f"declares {spec.describe()}")
    return value


def _shape_for(spec: InputSpec, override: tuple[int, ...] | None,
               default_dim: int | None) -> tuple[int, ...]:
    if override is not None:
        if spec.dims is not None:
            fits = len(override) == len(spec.dims) and all(
                d is None or d == o for d, o in zip(spec.dims, override))
            if not fits:
                raise CheckInputError(f"--shape {spec.name}={','.join(map(str, override))} does "
                                      f"not fit the declared {spec.describe()}")
        return tuple(override)
    if spec.dims is None:
        raise CheckInputError(f"input {spec.name!r} has unknown rank; give its shape with "
                              f"--shape {spec.name}=D0,D1,...")
    if any(d is None for d in spec.dims):
        if default_dim is None:
            example = ",".join(str(d) if d is not None else "2" for d in spec.dims)
            raise CheckInputError(f"input {spec.name!r} has dynamic dimensions "
                                  f"{spec.describe()}; give its shape with "
                                  f"--shape {spec.name}={example}")
        return tuple(default_dim if d is None else d for d in spec.dims)
    return tuple(int(d) for d in spec.dims)  # type: ignore[arg-type]


def _random(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
            trip_count: bool) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        low, high = (1, 6) if trip_count else (0, 5)
        return rng.integers(low, high, size=shape).astype(dtype)
    if dtype.kind in "USO":
        words = np.array(["alpha", "beta", "gamma", "delta", ""], dtype=object)
        return words[rng.integers(0, len(words), size=shape)]
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)) \
            .astype(dtype)
    # floats, including ml_dtypes' bfloat16 and friends
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(dtype)
