"""ONNX model -> irtool ``Model`` (IR v11): loading, checks, graph translation, outputs.

The ``Converter`` does the work that is not one operator's business:

* loads the model without its large tensors (``skeleton``; they and ONNX external data
  are read lazily through ``external_data``) and inlines model-local functions;
* rejects graph inputs/outputs that are not tensors, lowers sequences built in
  loops to tensors (``sequences``), and lists every operator without a
  translator in one ``UnsupportedOpError`` before translating anything;
* runs ONNX shape inference (``data_prop=True``) so translators can keep every
  static dimension ONNX knows, inside bodies too;
* translates graphs node by node in dependency order through the translator
  registry (``context.onnx_op``); control-flow translators call back into
  ``translate_graph`` for their bodies;
* makes the IR inputs and outputs carry the ONNX graph's names, then runs
  ``passes.pipelines.conversion``: dead layers pruned, the optimising passes (vectorised
  loops, Identity layers dropped, sliced loop inputs when asked) unless
  ``optimize=False``, and always the copies OpenVINO needs on back edges
  (``passes.identity``).

With ``optimize=False`` what remains of conversion is translation: translators still
compute from constants and static dims what they need (shape arithmetic, folded
constant inputs), dead layers are pruned, a Loop that provably runs no iteration is
folded to its outputs (OpenVINO's CPU plugin crashes or errs on it otherwise), and back
edges get their copies; nothing is rewritten for speed.
"""

from __future__ import annotations

import functools
import heapq
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
import onnx.inliner

from ...core.diagnostics import errors_only
from ...core.errors import ConversionError, InternalError, IRToolError, UnsupportedOpError
from ...core.sniff import refuse_other_kind
from ...ir.graph import Model
from ...opset import TensorInfo
from ...passes import pipelines
from . import analysis
from .checks import check_declarations, check_input_types
from .context import (
    NodeContext,
    Scope,
    Translator,
    Value,
    dense_array,
    find_translator,
    frontend_builder,
    qualified,
    tensor_array,
)
from .cut import cut_at
from .external_data import ExternalData
from .input_shapes import InputShapes, fix_input_shapes
from .local_functions import (
    expand_local_function,
    function_nodes,
    function_opset,
    local_functions,
)
from .protos import (
    ONNX_DOMAINS,
    elem_type_name,
    node_label,
    outer_names,
    subgraphs,
    type_name,
    walk_nodes,
    walk_tensors,
)
from .skeleton import read_skeleton
from .tensor_types import (
    ONNX_TO_ELEMENT_TYPE,
    contradicts,
    declared_output_warning,
    tensor_info_from_type,
    value_infos,
)

log = logging.getLogger("irtool")

PathLike = str | os.PathLike[str]


def convert_model(model: onnx.ModelProto | PathLike, *, slice_inputs: bool = False,
                  vectorize: bool = True, base_dir: PathLike | None = None,
                  input_shapes: InputShapes | None = None, optimize: bool = True,
                  applied: dict[str, int] | None = None,
                  outputs: Sequence[str] | None = None) -> Model:
    """Convert an ONNX model (a path or a ``ModelProto``) to an IR v11 ``Model``.

    ``base_dir`` is where the external data of a ``ModelProto`` lives (a path
    loads its own). ``slice_inputs=True`` turns ``Gather(X, iteration)`` in loop
    bodies into a sliced Loop input where provably the same (off by default: the
    Gather is the form OpenVINO runs faster). ``input_shapes`` fixes
    dynamic dims of graph inputs (name -> dims, None for a dim left dynamic).
    ``vectorize=False`` keeps loops whose iterations are independent instead of batching
    them (``irtool.passes.vectorize``). ``optimize=False`` runs none of the optimising
    passes (module docstring); ``slice_inputs=True`` with it is a contradiction, refused.
    ``applied`` (a dict) gets what each optimising pass did, by name. ``outputs`` cuts
    the model at those tensors of the main graph (``cut``).
    """
    converter = Converter(model, slice_inputs=slice_inputs, vectorize=vectorize,
                          base_dir=base_dir, input_shapes=input_shapes, optimize=optimize,
                          outputs=outputs)
    ir = converter.convert()
    if applied is not None:
        applied.update(converter.applied)
    return ir


def _domain_opsets(proto: onnx.ModelProto) -> dict[str, int]:
    """The highest version imported of each domain other than ai.onnx."""
    out: dict[str, int] = {}
    for imp in proto.opset_import:
        if imp.domain not in ONNX_DOMAINS:
            out[imp.domain] = max(imp.version, out.get(imp.domain, 0))
    return out


class Converter:
    """Converts one ONNX model; ``convert()`` returns the IR ``Model``."""

    def __init__(self, model: onnx.ModelProto | PathLike, *, slice_inputs: bool = False,
                 vectorize: bool = True, base_dir: PathLike | None = None,
                 input_shapes: InputShapes | None = None, optimize: bool = True,
                 outputs: Sequence[str] | None = None) -> None:
        self.source: str | None = None
        self.external = ExternalData(None)
        if slice_inputs and not optimize:
            raise ConversionError("slicing loop inputs is an optimisation; it cannot be "
                                  "asked for with optimisations off")
        self.slice_inputs = slice_inputs
        self.vectorize = vectorize and optimize
        self.optimize = optimize
        self.applied: dict[str, int] = {}  # what each optimising pass did (convert fills)
        self.proto = self._load(model, base_dir)
        self.given = model if isinstance(model, onnx.ModelProto) else None
        if outputs:
            self.proto = cut_at(self.proto, outputs, self.source)
        if input_shapes:
            self.proto = fix_input_shapes(self.proto, input_shapes, self.source)
        self.opset = self._opset(self.proto)
        # Other domains' opset versions (ai.onnx.ml): their translators are registered per
        # domain (``onnx_op(..., domain=...)``).
        self.domain_opsets = _domain_opsets(self.proto)
        # Element types of the empty sequences (see ``sequences``), set by ``convert``.
        self.sequence_elements: dict[str, TensorInfo | None] = {}
        self.uses: dict[str, list[tuple[onnx.NodeProto | None, int]]] = {}
        self.deferred: set[str] = set()
        self.concatenated: dict[str, int] = {}
        self.functions: dict[tuple[str, str], onnx.FunctionProto] = {}

    def sequence_element(self, name: str) -> TensorInfo | None:
        """The element type of the empty sequence ``name`` (None when unknown)."""
        return self.sequence_elements.get(name)

    def deferred_empty(self, name: str) -> bool:
        """Does the empty sequence ``name`` only start appended Loop carries?"""
        return name in self.deferred

    def reads(self, name: str) -> list[tuple[onnx.NodeProto | None, int]]:
        """Every read of ``name`` in the model: ``(node, input index)``."""
        return self.uses.get(name, [])

    # -- loading and checks ---------------------------------------------------
    def _load(self, model: onnx.ModelProto | PathLike, base_dir: PathLike | None
              ) -> onnx.ModelProto:
        """The model without reading its large tensors: a path is parsed as its skeleton
        (``skeleton``), and every external tensor stays where it is until a translator
        reads it (``self.external``)."""
        if isinstance(model, onnx.ModelProto):
            self.external = ExternalData(base_dir)
            if base_dir is None and _has_external_data(model):
                raise ConversionError("the model keeps tensors in external data files: give "
                                      "the folder they are in (base_dir) or convert by path")
            return model
        self.source = str(model)
        if not Path(model).is_file():
            raise ConversionError("no such file", file=self.source)
        refuse_other_kind(self.source, "onnx", ConversionError)
        self.external = ExternalData(Path(model).parent)
        try:
            return read_skeleton(self.source)
        except Exception:  # not a protobuf message: onnx's own words say why
            pass
        try:
            return onnx.load(self.source, load_external_data=False)
        except Exception as err:  # protobuf DecodeError...
            raise ConversionError(f"not a readable ONNX model: {type(err).__name__}: {err}",
                                  file=self.source) from None

    def tensor(self, tensor: onnx.TensorProto, what: str,
               fail: Callable[[str], Exception] | None = None) -> np.ndarray:
        """``tensor``'s values (external ones read lazily, read-only); errors name ``what``."""
        return tensor_array(tensor, what, fail or self.error, self.external)

    def file_slice(self, array: np.ndarray) -> tuple[str, int] | None:
        """The file and offset whose bytes ``array`` is (``ExternalData.source``)."""
        return self.external.source(array)

    def error(self, message: str, node: str | None = None) -> ConversionError:
        return ConversionError(message, file=self.source, node=node)

    def _opset(self, proto: onnx.ModelProto) -> int:
        versions = [imp.version for imp in proto.opset_import if imp.domain in ONNX_DOMAINS]
        if not versions:
            if any(n.domain in ONNX_DOMAINS for n in walk_nodes(proto.graph)):
                raise self.error("the model imports no ai.onnx opset")
            return 1
        return max(versions)

    def _domain_opset(self, node: onnx.NodeProto, onnx_opset: int | None = None
                      ) -> int | None:
        """The opset version imported for ``node``'s domain (None: not imported);
        ``onnx_opset`` is the ai.onnx version where it is not the model's (in a local
        function)."""
        if node.domain in ONNX_DOMAINS:
            return onnx_opset or self.opset
        return self.domain_opsets.get(node.domain)

    def _translator(self, node: onnx.NodeProto, onnx_opset: int | None = None
                    ) -> Translator | None:
        opset = self._domain_opset(node, onnx_opset)
        if opset is None:
            return None
        domain = "" if node.domain in ONNX_DOMAINS else node.domain
        return find_translator(node.op_type, opset, domain)

    def _refuse_map_ops(self, graph: onnx.GraphProto) -> None:
        """ZipMap, DictVectorizer, CastMap: their maps make graph inputs or outputs that are
        not tensors; say what to do before the generic refusal of such values."""
        from .ops.ml import map_advice

        for node in walk_nodes(graph):
            advice = map_advice(node.op_type) if node.domain == "ai.onnx.ml" else None
            if advice is not None:
                raise self.error(f"{node.op_type}: {advice}", node=node_label(node))

    def _check_io_types(self, graph: onnx.GraphProto, kinds: tuple[str, ...]) -> None:
        """Graph inputs and outputs (``kinds``) must be tensors of a supported type."""
        initializers = {i.name for i in graph.initializer}
        for kind, values in (("input", graph.input), ("output", graph.output)):
            if kind not in kinds:
                continue
            for vi in values:
                if kind == "input" and vi.name in initializers:
                    continue
                which = vi.type.WhichOneof("value")
                if which is None and kind == "output":
                    raise self.error(f"graph output {vi.name!r} has no type, and ONNX shape "
                                     "inference gives it none")
                if which != "tensor_type":
                    raise self.error(f"graph {kind} {vi.name!r} has an unsupported type "
                                     f"({type_name(vi.type)}): only tensors can be IR "
                                     f"{kind}s")
                if vi.type.tensor_type.elem_type not in ONNX_TO_ELEMENT_TYPE:
                    raise self.error(f"graph {kind} {vi.name!r} has an unsupported element "
                                     f"type ({type_name(vi.type)})")

    def _check_typed_outputs(self, graph: onnx.GraphProto) -> None:
        """Outputs that declare a type must declare a supported tensor type; an output
        without one waits for shape inference (``_check_io_types`` after it)."""
        typed = onnx.GraphProto()
        typed.output.extend(vi for vi in graph.output if vi.type.WhichOneof("value"))
        self._check_io_types(typed, ("output",))

    def _check_ops(self, graph: onnx.GraphProto) -> None:
        """One ``UnsupportedOpError`` listing every op without a translator, with counts
        (in the local functions the model calls too, each in its own opset)."""
        missing: dict[str, list[str]] = defaultdict(list)
        todo: list[tuple[list[onnx.NodeProto], int]] = [(list(walk_nodes(graph)), self.opset)]
        called: set[tuple[str, str]] = set()
        while todo:
            nodes, opset = todo.pop()
            for node in nodes:
                key = (node.domain, node.op_type)
                if key in self.functions:
                    if key not in called:
                        called.add(key)
                        function = self.functions[key]
                        todo.append((function_nodes(function),
                                     function_opset(function, self.opset)))
                elif self._translator(node, opset) is None:
                    missing[qualified(node.op_type, node.domain)].append(node_label(node))
        if not missing:
            return
        counts = Counter({op: len(nodes) for op, nodes in missing.items()})
        parts = []
        for op, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            nodes = missing[op]  # type: ignore[assignment]
            shown = ", ".join(nodes[:5]) + (f", ... ({len(nodes) - 5} more)"
                                             if len(nodes) > 5 else "")
            parts.append(f"{op} x{count} (node{'s' if count > 1 else ''} {shown})")
        total = sum(counts.values())
        raise UnsupportedOpError(
            f"{total} node{'s' if total > 1 else ''} of {len(counts)} unsupported operator "
            f"type{'s' if len(counts) > 1 else ''} (opset {self.opset}): {'; '.join(parts)}",
            file=self.source)

    # -- conversion -----------------------------------------------------------
    def convert(self) -> Model:
        """Check, translate and post-process the whole model."""
        from . import sequences

        proto = self.proto
        check_declarations(proto, self.source)
        self._refuse_map_ops(proto.graph)
        self._check_io_types(proto.graph, ("input",))
        self._check_typed_outputs(proto.graph)
        if proto.functions:
            try:
                proto = onnx.inliner.inline_local_functions(proto)
            except Exception as err:
                raise self.error(f"cannot inline the model's local functions: {err}") from None
        # What ONNX's inliner leaves (functions importing other opset versions than the
        # model) is expanded where called, in the function's opset (``local_functions``).
        self.functions = local_functions(proto)
        verdict = analysis.analyse(proto)
        if verdict.inferred is not None:  # without inference the translators still decide
            if proto is self.given:  # the caller's ModelProto: write into a copy of it
                own = onnx.ModelProto()
                own.CopyFrom(proto)
                proto = own
            analysis.take_inferred(proto, verdict.inferred)
        self._check_io_types(proto.graph, ("output",))
        self.sequence_elements = sequences.element_types(proto)
        self.uses = sequences.name_uses(proto)
        self.deferred = sequences.deferred_empties(proto, self.uses)
        self._check_ops(proto.graph)
        if verdict.invalid is not None and analysis.REFUSED.search(verdict.invalid):
            raise self.error(f"not a valid ONNX model: {verdict.invalid}")
        self.proto = proto
        try:
            return self._translate(proto)
        except InternalError as err:
            # Where ONNX's checker already called the model invalid, that is the reason.
            if verdict.invalid is None:
                raise
            raise self.error(f"not a valid ONNX model: {verdict.invalid}") from err

    def _translate(self, proto: onnx.ModelProto) -> Model:
        scope = Scope(frontend_builder(), description="main graph")
        graph = proto.graph
        infos = value_infos(graph)
        initializers = {i.name for i in graph.initializer}
        for vi in graph.input:
            if vi.name in initializers:
                continue
            info = infos.get(vi.name) or tensor_info_from_type(vi.type)
            assert info is not None  # _check_io_types let only tensors through
            scope.define(vi.name, scope.builder.parameter(info, name=vi.name,
                                                          tensor_names=(vi.name,)))
        self.translate_graph(graph, scope, main=True)
        self._add_outputs(graph, scope)
        model = Model(scope.graph, name=graph.name or "model", version=11)
        result = pipelines.conversion(vectorize=self.vectorize, slice_inputs=self.slice_inputs,
                                      optimize=self.optimize)(model)
        self.applied = dict(result.applied)
        refuse_invalid_ir(model, self.source)
        return model

    def translate_graph(self, graph: onnx.GraphProto, scope: Scope, *,
                        main: bool = False) -> None:
        """Translate the initializers and nodes of ``graph`` into ``scope``.

        The caller has defined the graph's inputs in ``scope`` already. Only a body's
        declared output shapes are used (``value_infos``): the main graph's may not hold.
        """
        for init in graph.initializer:
            scope.define(init.name, self._initializer(init, scope))
        for sparse in graph.sparse_initializer:
            dense = dense_array(sparse, self.error)
            scope.define(sparse.values.name, scope.builder.const(dense, name=sparse.values.name))
        infos = value_infos(graph, output_shapes=not main)
        for node in self._ordered(graph, scope):
            self.translate_node(node, scope, infos)

    def _initializer(self, init: onnx.TensorProto, scope: Scope) -> Value:
        et = ONNX_TO_ELEMENT_TYPE.get(init.data_type)
        if et is None:
            raise self.error(f"initializer {init.name!r} has an unsupported element type "
                             f"({elem_type_name(init.data_type)})")
        array = self.tensor(init, f"initializer {init.name!r}")
        value = scope.builder.const(array, et, name=init.name,
                                    source=self.file_slice(array))
        port = scope.graph.layer(value.layer).outputs[0]
        port.names = (init.name,)
        return value

    def _ordered(self, graph: onnx.GraphProto, scope: Scope) -> list[onnx.NodeProto]:
        """The nodes of ``graph`` so that producers come first (file order where it is one)."""
        producer: dict[str, int] = {}
        for i, node in enumerate(graph.node):
            for o in node.output:
                if o:
                    producer[o] = i
        waiting = [0] * len(graph.node)
        users: list[list[int]] = [[] for _ in graph.node]
        for i, node in enumerate(graph.node):
            names = {n for n in node.input if n}
            for _, sub in subgraphs(node):
                names |= outer_names(sub)
            deps = {producer[n] for n in names if n in producer}
            waiting[i] = len(deps)
            for d in deps:
                users[d].append(i)
        # Kahn's algorithm taking the lowest index first: a sorted graph keeps its order.
        ready = [i for i, w in enumerate(waiting) if w == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for u in users[i]:
                waiting[u] -= 1
                if waiting[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) < len(graph.node):
            stuck = ", ".join(node_label(n) for i, n in enumerate(graph.node) if waiting[i])
            raise self.error(f"{scope.description}: nodes depend on each other in a cycle: "
                             f"{stuck}")
        return [graph.node[i] for i in order]

    def translate_node(self, node: onnx.NodeProto, scope: Scope,
                       infos: dict[str, TensorInfo]) -> None:
        """Translate one node and define its outputs in ``scope``."""
        function = self.functions.get((node.domain, node.op_type))
        opset = self._domain_opset(node, scope.opset)
        translator: Translator | None
        if function is not None:
            translator = functools.partial(expand_local_function, function=function,
                                           functions=self.functions,
                                           translate=self.translate_node)
            opset = scope.opset or self.opset
        else:
            translator = self._translator(node, scope.opset)
        if translator is None:
            if node.domain not in ONNX_DOMAINS and opset is None:
                raise self.error(f"operator domain {node.domain!r} is not supported",
                                 node=node_label(node))
            raise UnsupportedOpError(f"{qualified(node.op_type, node.domain)} (opset "
                                     f"{opset}) is not supported",
                                     file=self.source, node=node_label(node))
        assert opset is not None  # a translator was found for it
        ctx = NodeContext(node, scope, opset, self,
                          [infos.get(o) if o else None for o in node.output])
        try:
            wrong = None if function is not None else check_input_types(
                node, opset, [v.element_type if v else None for v in ctx.inputs])
            if wrong is not None:
                raise ctx.error(wrong)
            values = list(translator(ctx))
        except IRToolError as err:
            if err.file is None and self.source is not None:
                err.file = self.source
                err.args = (err.format(),)
            if err.node is None:
                err.node = ctx.name
                err.args = (err.format(),)
            raise
        except InternalError:  # from a node of a body this translator converts: named already
            raise
        except Exception as err:  # irtool's bug, not the model's: name the node, keep the cause
            raise InternalError(f"the {node.op_type} translator failed", file=self.source,
                                node=ctx.name) from err
        if len(values) < len([o for o in node.output if o]):
            values += [None] * (len(node.output) - len(values))
        for name, value in zip(node.output, values):
            if not name:
                continue
            if value is None:
                raise ConversionError(f"{node.op_type}: output {name!r} was not produced",
                                      file=self.source, node=ctx.name)
            scope.define(name, value)
            port = scope.graph.layer(value.layer).port(value.port)
            if port is not None and not port.names:
                port.names = (name,)

    def translate_body(self, graph: onnx.GraphProto, scope: Scope, what: str) -> list[Value]:
        """``translate_graph``, then the values of ``graph``'s outputs (outer ones captured).
        ``what`` names the graph in errors."""
        self.translate_graph(graph, scope)
        out = []
        for vi in graph.output:
            value = scope.lookup(vi.name)
            if value is None:
                raise self.error(f"{what}: output {vi.name!r} is not defined")
            out.append(value)
        return out

    def _add_outputs(self, graph: onnx.GraphProto, scope: Scope) -> None:
        """One Result per graph output, fed by a port named exactly like the output.

        OpenVINO reports a model output by the smallest name of the tensor feeding
        its Result; so a graph output that is a graph input under another name,
        another output, or a value already named otherwise gets its own copy
        (``Identity-16``) carrying just the output's name. Not a ``Convert`` to the same
        type: OpenVINO's CPU plugin reads a boolean one on a layer's output port 1 or
        later from port 0 instead (docs/openvino-quirks.md).
        """
        used: set[tuple[int, int]] = set()
        for vi in graph.output:
            value = scope.lookup(vi.name)
            if value is None:
                raise self.error(f"graph output {vi.name!r} is not produced by any node")
            declared = ONNX_TO_ELEMENT_TYPE.get(vi.type.tensor_type.elem_type)
            if declared is not None and declared != value.element_type:
                # onnxruntime refuses such a model too; OpenVINO would answer in the other type.
                raise self.error(f"graph output {vi.name!r} is declared "
                                 f"{type_name(vi.type)} but computed as "
                                 f"{value.element_type.name}")
            claimed = tensor_info_from_type(vi.type)
            if claimed is not None and value.shape is not None \
                    and contradicts(claimed, value.shape):
                log.warning("warning: %s", declared_output_warning(vi.name, claimed,
                                                                   value.shape))
            layer = scope.graph.layer(value.layer)
            port = layer.port(value.port)
            assert port is not None
            key = (value.layer, value.port)
            if key in used or port.names not in ((), (vi.name,)):
                value = scope.builder.op("Identity", "opset16", [value],
                                         outputs=[value.info], name=vi.name)[0]
                port = scope.graph.layer(value.layer).port(value.port)
                assert port is not None
                key = (value.layer, value.port)
            port.names = (vi.name,)
            used.add(key)
            result = scope.builder.result(value, name=f"{vi.name}/sink_port_0")
            result.extra["output_names"] = vi.name


def refuse_invalid_ir(model: Model, source: str | None = None) -> None:
    """The IR's own rules, before anyone writes or runs the conversion of ``source``.

    What breaks them slipped past every check of the ONNX model, which is irtool's bug:
    an ``InternalError`` (exit 3), never a file written or a model returned.
    """
    from ...validation import validate_model

    errors = errors_only(validate_model(model))
    if errors:
        first = errors[0].what()  # without the "<model>" place
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InternalError(f"the converted IR breaks its rules: {first}{more}", file=source)


def _has_external_data(model: onnx.ModelProto) -> bool:
    """Does any initializer or tensor attribute (in any graph) live in an external file?"""
    return any(onnx.external_data_helper.uses_external_data(t)
               for t in walk_tensors(model.graph))


__all__ = ["Converter", "convert_model", "refuse_invalid_ir"]
