"""The public Python API: convert, load, save, run, compile, validate, check, diff,
inspect, reduce.

Heavy dependencies (onnx, onnxruntime, openvino) load only when a function
that needs them is called.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .core.diagnostics import Diagnostic
from .core.errors import ExecutionError, IRToolError
from .core.feeds import input_mismatch
from .core.sniff import file_kind
from .ir import Model, read_model, write_model

if TYPE_CHECKING:
    import onnx

    from .runtime.session import CompiledModel
    from .tools.check import CheckReport
    from .tools.diff import Difference
    from .tools.reduce import Condition, ReduceResult

PathLike = str | os.PathLike[str]

# What each call did and how long it took: `irtool -v` shows these (Python's logging).
log = logging.getLogger(__name__)

OPENVINO_TIMEOUT_S = 300.0
"""Seconds ``run(backend="openvino")`` waits for OpenVINO (which caps no loop)."""

REDUCE_TIMEOUT_S = 60.0
"""Seconds ``reduce`` gives OpenVINO (or the command) on each candidate."""


def load(path: PathLike, bin_path: PathLike | None = None, *, strict: bool = True) -> Model:
    """Read an IR ``.xml`` (and its ``.bin``) into a ``Model``.

    ``strict`` (the default) refuses every IR that ``validate`` reports an error in: an
    ``IRValidationError`` whose message is the first error's ``file:line`` diagnostic.
    ``strict=False`` only parses: it refuses what cannot be read at all (malformed XML,
    a Const outside the .bin) and keeps whatever else the file says, for tools that
    look at broken IR.
    """
    started = time.perf_counter()
    if not strict:
        model = read_model(path, bin_path)
    else:
        from .validation import read_valid

        model = read_valid(path, bin_path)
    log.info("read %s (%d layers) in %.2f s", path, len(model.graph),
             time.perf_counter() - started)
    return model


def save(model: Model, path: PathLike, *, compress_to_fp16: bool = False) -> Path:
    """Write ``model`` as ``path`` (.xml) plus the ``.bin`` beside it; returns the .xml path.

    All or nothing (see :mod:`irtool.core.files`); missing folders are created.

    With ``compress_to_fp16`` f32 constants are stored as f16 and decompressed
    by a ``Convert`` layer, as OpenVINO's own ``compress_to_fp16`` does.
    """
    from .passes import pipelines

    model = pipelines.saving(compress_to_fp16=compress_to_fp16)(model).target
    xml, _ = write_model(model, path)
    log.info("wrote %s and its .bin%s", xml, " (f32 constants as f16)" if compress_to_fp16
             else "")
    return xml


def convert(model: onnx.ModelProto | PathLike, *, slice_inputs: bool = False,
            vectorize: bool = True, base_dir: PathLike | None = None,
            input_shapes: Mapping[str, Sequence[int | None]] | None = None,
            optimize: bool = True, outputs: Sequence[str] | None = None) -> Model:
    """Convert an ONNX model (a path or a ``ModelProto``) to an IR v11 ``Model``.

    A path's large tensors and external data are read from its files when needed, never
    all at once; for a ``ModelProto`` whose tensors live in external files, ``base_dir``
    is the folder they are in.
    ``slice_inputs=True`` turns ``Gather(X, iteration)`` in Loop bodies into a sliced
    Loop input where provably the same (off by default: OpenVINO's CPU plugin runs the
    Gather form faster, and irtool's runtime slices internally either way).
    ``input_shapes`` fixes dynamic dims of the
    graph's inputs, as ``ovc --input`` does: ``{"x": (1, None)}`` (None: left dynamic).
    ``vectorize=False`` keeps Loops and TensorIterators whose iterations are
    independent, which are otherwise replaced by their body computed once over all
    iterations (``irtool.passes.vectorize``, where the trip count, condition and slices
    prove it the same). ``optimize=False`` runs no optimising pass at all: no
    vectorisation, no slicing (asking for it too is refused), no Identity layer dropped;
    what remains is translation, pruning of dead layers, and the forms OpenVINO needs to
    run or to compute right (a Loop that runs no iteration folded, copies on back
    edges; ``irtool.frontends.onnx.converter``). ``outputs`` (tensor names of the
    main graph) cuts the model there, as ``ovc --output`` and more: those tensors become
    its outputs, in that order, and only what they need is converted
    (``irtool.frontends.onnx.cut``). Raises ``ConversionError`` (naming the ONNX
    node) or ``UnsupportedOpError`` (listing every unsupported operator).
    """
    from .frontends.onnx import convert_model  # starts ONNX's checker worker first

    started = time.perf_counter()
    ir = convert_model(model, slice_inputs=slice_inputs, vectorize=vectorize,
                       base_dir=base_dir, input_shapes=input_shapes, optimize=optimize,
                       outputs=outputs)
    log.info("converted %s to IR (%d layers in the main graph) in %.2f s",
             model if not hasattr(model, "graph") else "the ModelProto", len(ir.graph),
             time.perf_counter() - started)
    return ir




def run(
    model_or_path: Model | PathLike,
    inputs: Mapping[str, Any] | Sequence[Any],
    *,
    backend: str = "irtool",
    max_iterations: int | None = None,
    timeout: float = OPENVINO_TIMEOUT_S,
    optimize: bool = True,
) -> dict[str, np.ndarray]:
    """Run an IR (or an ONNX model, converted first) and return its outputs by tensor name:
    one stateless inference (every variable of a stateful model at its initial value; see
    ``compile`` for sessions).

    ``inputs`` maps tensor names (the ONNX names) to arrays, or lists arrays in
    the order of the model's inputs. ``backend="openvino"`` runs the same IR on
    OpenVINO's CPU runtime instead of irtool's executor. ``max_iterations`` caps
    every loop of the irtool backend: one that would run longer stops with an
    ``ExecutionError`` naming it. Without it every loop, whatever its trip count,
    stops after ``irtool.runtime.DEFAULT_MAX_ITERATIONS`` (10**6) iterations.
    OpenVINO runs in a worker process: when it crashes, or gives no result within
    ``timeout`` seconds, a ``BackendError`` says so. A file ``validate`` finds an error in
    is refused (``IRValidationError``) whichever the backend.

    A ``Model`` is checked and compiled on its first run; later runs of the same, unchanged
    model object reuse that plan (``irtool.runtime.cache``), which ``compile`` shares.

    ``optimize=False`` runs irtool's executor without any rewrite that only makes it
    faster (``irtool.runtime.plan.RunOptions`` lists them: no constant folding, no pool
    fusion, no specialised or inlined kernels, no in-place writes, no batched loops), and
    converts an ONNX model without optimising passes (``convert``); OpenVINO runs the IR
    as it is.
    """
    _check_max_iterations(max_iterations)
    if not isinstance(model_or_path, Model) and file_kind(model_or_path) == "onnx":
        # An ONNX model runs as the IR convert makes of it, as OpenVINO's read_model does.
        model_or_path = convert(model_or_path, optimize=optimize)
    if backend == "irtool":
        from .runtime import Executor

        if isinstance(model_or_path, Model):  # checked and compiled once per model state
            return Executor(model_or_path, max_iterations=max_iterations,
                            cached=True, optimize=optimize).run(inputs)
        return Executor(load(model_or_path), max_iterations=max_iterations,
                        check=False, optimize=optimize).run(inputs)
    if backend == "openvino":
        _gate(model_or_path)
        return _run_openvino(model_or_path, inputs, timeout)
    raise ExecutionError(f"unknown backend {backend!r} (irtool or openvino)")


def compile(model_or_path: Model | PathLike, *, max_iterations: int | None = None,
            optimize: bool = True) -> CompiledModel:
    """A session over the model, like OpenVINO's infer request: ``.run(inputs)`` is one
    step and keeps the variables (ReadValue/Assign) for the next, ``.reset_state()``
    returns them to their initial values, and ``.state`` reads and sets them by variable
    id. A path is loaded (and checked) first. The plan is the one ``run`` caches.
    ``optimize=False``: as for ``run``; ``.optimizations`` says what was applied."""
    from .runtime.session import CompiledModel

    _check_max_iterations(max_iterations)
    model = model_or_path if isinstance(model_or_path, Model) else load(model_or_path)
    return CompiledModel(model, max_iterations=max_iterations,
                         check=isinstance(model_or_path, Model), optimize=optimize)


def _gate(model_or_path: Model | PathLike) -> None:
    """The one gate for OpenVINO too: an IR file validate rejects reaches no engine."""
    if not isinstance(model_or_path, Model) and Path(model_or_path).suffix.lower() != ".onnx":
        load(model_or_path)


def run_steps(
    model_or_path: Model | PathLike,
    steps: Sequence[Mapping[str, Any]],
    *,
    backend: str = "irtool",
    max_iterations: int | None = None,
    timeout: float = OPENVINO_TIMEOUT_S,
    optimize: bool = True,
) -> list[dict[str, np.ndarray]]:
    """The outputs of each of ``steps`` run in turn in one session, so that the variables
    of a stateful model (ReadValue/Assign) carry from step to step: ``compile`` for
    irtool, one infer request for ``backend="openvino"`` (in a worker process, as
    ``run``). ``optimize=False``: as for ``run``."""
    _check_max_iterations(max_iterations)
    if backend == "irtool":
        session = compile(model_or_path, max_iterations=max_iterations, optimize=optimize)
        return [session.run(step) for step in steps]
    if backend == "openvino":
        _gate(model_or_path)
        return _run_openvino_steps(model_or_path, steps, timeout)
    raise ExecutionError(f"unknown backend {backend!r} (irtool or openvino)")


def _run_openvino_steps(model_or_path: Model | PathLike, steps: Sequence[Mapping[str, Any]],
                        timeout: float) -> list[dict[str, np.ndarray]]:
    from .engines.base import flatten_steps, split_steps
    from .engines.isolate import Isolated
    from .engines.openvino import OpenVINOSessionEngine

    with _ir_on_disk(model_or_path) as (xml, shown):
        outputs = Isolated(OpenVINOSessionEngine(xml), timeout, label="OpenVINO",
                           doing=f" running {shown}").run(flatten_steps(steps))
    return split_steps(outputs)


@contextlib.contextmanager
def _ir_on_disk(model_or_path: Model | PathLike) -> Iterator[tuple[Path, str]]:
    """The IR file OpenVINO reads, and how messages name it: an in-memory model is written to
    a temporary folder (removed afterwards) and named by file name, a path as given."""
    from .core.errors import BackendError

    if not isinstance(model_or_path, Model):
        xml = Path(model_or_path)
        if not xml.is_file():
            raise BackendError("no such IR file", file=str(xml))
        yield xml, str(xml)
        return
    with tempfile.TemporaryDirectory(prefix="irtool-run-") as tmp:
        xml, _ = write_model(model_or_path, Path(tmp) / "model.xml")
        yield xml, xml.name


def _check_max_iterations(max_iterations: object) -> None:
    if max_iterations is not None and (isinstance(max_iterations, bool)
                                       or not isinstance(max_iterations, int)
                                       or max_iterations < 0):
        raise ExecutionError(f"max_iterations must be a non-negative integer, not "
                             f"{max_iterations!r}")


def _run_openvino(model_or_path: Model | PathLike, inputs: Mapping[str, Any] | Sequence[Any],
                  timeout: float) -> dict[str, np.ndarray]:
    """OpenVINO in a worker process: it can die of a signal or never end on an IR (a Loop it
    runs zero times, one with no trip count), and that must be a one-line error here."""
    from .core.errors import BackendError
    from .engines.isolate import Isolated
    from .engines.openvino import OpenVINOEngine

    with _ir_on_disk(model_or_path) as (xml, shown):
        names = read_model(xml).input_names()
        if isinstance(inputs, Mapping):
            # Named as irtool's runtime names them (the worker drops names it does not take).
            mismatch = input_mismatch(names, inputs)
            if mismatch:
                raise BackendError(mismatch, file=str(xml))
        else:  # in the order of the model's inputs
            if len(names) != len(inputs):
                raise BackendError(f"{len(inputs)} inputs given, the model takes {len(names)}",
                                   file=str(xml))
            inputs = dict(zip(names, inputs))
        return Isolated(OpenVINOEngine(xml), timeout, label="OpenVINO",
                        doing=f" running {shown}").run(inputs)


def validate(model_or_path: Model | PathLike, *, openvino: str | None = None
             ) -> list[Diagnostic]:
    """Every problem in an IR (a path is checked against the XSD too); empty when sound.

    ``openvino="2024.6"``: also what that OpenVINO release does not know (operations,
    opsets, attributes, element types: ``OPENVINO_COMPAT``); an unknown release raises
    ``ValueError`` listing the known ones (``irtool.validation.compat``)."""
    from .validation import validate as _validate

    started = time.perf_counter()
    if openvino is not None:
        from .validation.compat import validate_for

        found = validate_for(model_or_path, openvino)
    else:
        found = _validate(model_or_path)
    log.debug("validated %s in %.2f s: %d finding(s)", model_or_path if not isinstance(
        model_or_path, Model) else "the model", time.perf_counter() - started, len(found))
    return found


def diff(a: PathLike, b: PathLike, *, rt_info: bool = False) -> list[Difference]:
    """What differs in meaning between the IR files ``a`` and ``b`` (``irtool.tools.diff``):
    layers matched by name and structure, ids, order and .bin layout ignored, weights by
    digest; ``rt_info=True`` compares ``<rt_info>`` too. Empty when they mean the same."""
    from .tools.diff import diff_files

    return diff_files(a, b, rt_info=rt_info)


def check(model: onnx.ModelProto | Model | PathLike,
          inputs: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None, *,
          seed: int = 0, shapes: Mapping[str, Sequence[int | None]] | None = None,
          rtol: float | None = None, atol: float | None = None,
          keep_dir: PathLike | None = None, timeout: float = OPENVINO_TIMEOUT_S,
          max_iterations: int | None = None,
          progress: Callable[[str], None] | None = None,
          optimize: bool = True,
          reference: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
          openvino_config: Mapping[str, str] | None = None, localize: bool = False,
          memory_budget: int | None = None) -> CheckReport:
    """Compare engines on a model: for an ONNX model, convert it and run onnxruntime (the
    reference), irtool and OpenVINO; for an IR (a ``Model`` or an ``.xml``), run irtool's
    executor (the reference) and OpenVINO on it (``irtool.tools.ir_check``).

    - ``inputs``: arrays by tensor name; those not given are random.
    - ``seed``: the random inputs' seed (default 0).
    - ``shapes``: the shape of each input with dynamic dims, e.g. ``{"x": (2, 3)}`` (None
      for a dim left as declared); a dynamic dim no shape gives is 1, with a warning.
    - ``rtol`` / ``atol``: tolerances for every output, instead of the per-dtype defaults
      (``irtool.tools.compare.default_tolerance``: f32 1e-4 / 1e-5, f16 1e-2 / 1e-3,
      bf16 2e-2 / 1e-2, integers and booleans exact).
    - ``keep_dir``: keep the converted IR and the inputs (``inputs.npz``) there.
    - ``timeout``: seconds onnxruntime and OpenVINO each get in their worker process
      (default 300); a crash or a time-out becomes that backend's reason.
    - ``max_iterations``: irtool's runtime stops any loop beyond it (default 10**6); it
      runs first, and when it stops a loop so, onnxruntime and OpenVINO get
      ``irtool.tools.check.CAP_GRACE_S`` (10 s) instead of ``timeout``.
    - ``progress``: called with the name of each stage as it starts.
    - ``optimize``: False converts without optimising passes and runs irtool's executor
      without its rewrites (see ``convert`` and ``run``).
    - ``inputs`` of an IR may be a list of feeds: the steps of one session, checked step
      by step, variables too (``session.state`` against OpenVINO's ``query_state()``).
    - ``reference`` (IR only): saved outputs (one mapping, or one per step), e.g. the
      framework's; both engines are compared with them.
    - ``openvino_config``: OpenVINO's CPU properties, the settings a deployment uses, over
      its defaults (default: its exact modes, ``engines.openvino.REFERENCE_CONFIG``); a
      difference that goes away in the exact modes is reported as caused by them.
    - ``localize``: when irtool and OpenVINO part, find the first layer whose output
      disagrees while its inputs agree, inside loop bodies and If branches
      (``report.localization``; ``irtool.tools.localize``), holding at most
      ``memory_budget`` bytes of values (default 256 MiB).

    The report's ``ok`` says whether every backend ran and agrees with onnxruntime;
    ``format_table()`` and ``to_dict()`` show it, and its ``optimizations`` what the
    converter and irtool's runtime applied to the IR checked. Raises ``ConversionError``
    when the model cannot be converted and ``CheckInputError`` when inputs cannot be made.
    """
    from .tools.localize import DEFAULT_MEMORY_BUDGET

    budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
    if isinstance(model, Model) or (isinstance(model, (str, os.PathLike))
                                    and file_kind(model) == "ir"):
        from .tools.ir_check import check_ir

        return check_ir(model, inputs, seed=seed, shapes=shapes, rtol=rtol, atol=atol,
                        reference=reference, openvino_config=openvino_config,
                        keep_dir=keep_dir, progress=progress, timeout=timeout,
                        max_iterations=max_iterations, optimize=optimize,
                        localize_parting=localize, memory_budget=budget)
    from .tools.check import check as _check

    if reference is not None:
        raise IRToolError("saved reference outputs are compared on an IR; an ONNX model's "
                          "reference is onnxruntime")
    if inputs is not None and not isinstance(inputs, Mapping):
        raise IRToolError("the steps of a session are checked on an IR; an ONNX model takes "
                          "one feed")
    return _check(model, inputs, seed=seed, shapes=shapes, rtol=rtol, atol=atol,
                  keep_dir=keep_dir, timeout=timeout, max_iterations=max_iterations,
                  progress=progress, optimize=optimize, openvino_config=openvino_config,
                  localize=localize, memory_budget=budget)


def reduce(model: PathLike, inputs: Mapping[str, Any] | PathLike | None,
           until: str | Condition, out_dir: PathLike, *, match: str | None = None,
           rtol: float | None = None, atol: float | None = None,
           timeout: float = REDUCE_TIMEOUT_S, max_iterations: int | None = None,
           time_limit: float | None = None,
           progress: Callable[..., None] | None = None) -> ReduceResult:
    """Shrink the IR file ``model`` to a small one that still shows ``until``, and write it,
    its inputs and a README for a bug report to ``out_dir`` (``reduced.xml``, ``.bin``,
    ``inputs.npz``; ``expected.npz`` for ``disagree``).

    - ``inputs``: every input of the model by name (arrays, or an ``.npz``); None when it
      takes none.
    - ``until``: ``"openvino-crash"`` (OpenVINO's CPU plugin dies of the signal it dies of
      on ``model``; with ``match``, of a signal or an error whose text the regular
      expression finds), ``"disagree"`` (irtool's executor and OpenVINO differ on some
      output beyond ``rtol``/``atol``, per-dtype defaults as ``check``),
      ``"validate:CODE"`` (``validate`` reports CODE) or ``"command:CMD {xml}"`` (the shell
      command exits non-zero on the candidate; ``match``: and its output matches).
    - ``timeout``: seconds OpenVINO (or the command) may take on one candidate, in a child
      process; ``max_iterations``: irtool's executor stops any loop beyond it;
      ``time_limit``: seconds for the search, after which the smallest IR so far is written.
    - ``progress(candidate, reducer)`` hears of each smaller IR kept.

    The search cuts layers (a cut output becomes an input holding the value irtool's
    executor computes there), replaces Loops and TensorIterators by their body for one
    iteration and Ifs by a branch, lowers trip counts, and makes inputs and float
    constants smaller and simpler; each candidate passes ``validate`` before the condition
    is tried (``irtool.tools.reduce``). Returns a ``ReduceResult`` (``summary()``: one line).
    Raises ``ReduceError`` when the IR is invalid, the inputs do not fit it, or the
    condition does not hold on it.
    """
    from .tools.reduce import reduce as _reduce

    started = time.perf_counter()
    result = _reduce(model, inputs, until, out_dir, match=match, rtol=rtol, atol=atol,
                     timeout=timeout, max_iterations=max_iterations, time_limit=time_limit,
                     progress=progress)
    log.info("reduced %s in %.1f s", model, time.perf_counter() - started)
    return result


def inspect(model: Model | PathLike, *, as_dict: bool = False) -> str | dict[str, Any]:
    """What ``irtool inspect`` prints: inputs, outputs, op counts and every Loop /
    TensorIterator / If in words (``as_dict=True``: the ``inspect --json`` object).
    A path may be an IR ``.xml`` or an ONNX model (converted first)."""
    from .tools.inspection import load_for_inspect, summary, summary_dict
    from .validation import require_valid

    if isinstance(model, Model):
        loaded, note = require_valid(model), None
    else:
        loaded, note = load_for_inspect(model)
    return summary_dict(loaded, note) if as_dict else summary(loaded, note)


__all__ = ["IRToolError", "Model", "check", "compile", "convert", "inspect", "load", "reduce",
           "run", "run_steps", "save", "validate"]
