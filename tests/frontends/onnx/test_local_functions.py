"""Model-local functions whose opset differs from the model's, nested ones included:
expanded where called, each node in its function's own opset. Expected values from
onnxruntime (``check_conversion`` runs irtool's runtime and OpenVINO on the IR)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from support.conversion import check_conversion, loop_layers, make_model, vi

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_
X = np.random.default_rng(3).standard_normal((3, 4)).astype(F32)


def _function(name: str, inputs: list[str], outputs: list[str],
              nodes: list[onnx.NodeProto], opset: int, attributes: list[str] = (),
              defaults: list[onnx.AttributeProto] = ()) -> onnx.FunctionProto:
    function = helper.make_function("local", name, inputs, outputs, nodes,
                                    [helper.make_opsetid("", opset),
                                     helper.make_opsetid("local", 1)],
                                    attributes=list(attributes))
    function.attribute_proto.extend(defaults)
    return function


def _with_functions(main: onnx.ModelProto, *functions: onnx.FunctionProto
                    ) -> onnx.ModelProto:
    main.opset_import.append(helper.make_opsetid("local", 1))
    main.functions.extend(functions)
    onnx.checker.check_model(main, full_check=True)
    return main


def _attr_ref(name: str, ref: str, type: int) -> onnx.AttributeProto:
    return onnx.AttributeProto(name=name, ref_attr_name=ref, type=type)


def _const(name: str, value: object, dtype: object) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name],
                            value=onnx.numpy_helper.from_array(np.asarray(value, dtype)))


def nested_model() -> onnx.ModelProto:
    """Model opset 18 -> ``outer`` (opset 16) -> ``inner`` (opset 14), twice, as
    skl2onnx writes them (ONNX's checker requires the ops to mean the same in the
    function's opset and the model's; ONNX's own inliner leaves such calls alone).

    ``inner`` sums over axis 1 and scales; ``outer`` slices the input in two, calls
    ``inner`` on each part and applies a LeakyRelu whose slope it takes by reference
    from the call's attribute.
    """
    inner = _function("inner", ["a"], ["b"], [
        _const("ax", [1], I64), _const("k", 2.0, F32),
        helper.make_node("ReduceSum", ["a", "ax"], ["s"], keepdims=1),
        helper.make_node("Mul", ["s", "k"], ["b"])], 14)
    leaky = helper.make_node("LeakyRelu", ["y0"], ["y"])
    leaky.attribute.append(_attr_ref("alpha", "slope", onnx.AttributeProto.FLOAT))
    outer = _function("outer", ["x"], ["y"], [
        _const("zero", [0], I64), _const("one", [1], I64), _const("end", [4], I64),
        helper.make_node("Slice", ["x", "zero", "one", "one"], ["p"]),
        helper.make_node("Slice", ["x", "one", "end", "one"], ["q"]),
        helper.make_node("inner", ["p"], ["ip"], domain="local"),
        helper.make_node("inner", ["q"], ["iq"], domain="local"),
        helper.make_node("Concat", ["ip", "iq", "x"], ["y0"], axis=1),
        leaky], 16, attributes=["slope"])
    call = helper.make_node("outer", ["r"], ["y"], domain="local", slope=0.1)
    main = make_model([helper.make_node("Relu", ["x"], ["r"]), call,
                       helper.make_node("Neg", ["y"], ["m"])],
                      [vi("x", F32, [3, 4])], [vi("m", F32, [3, 6])], opset=18)
    return _with_functions(main, outer, inner)


def test_nested_functions_in_their_own_opsets(tmp_path: Path) -> None:
    check_conversion(nested_model(), {"x": X}, tmp_path)


def attribute_model(given: float | None) -> onnx.ModelProto:
    """A function (opset 16) whose ``alpha`` attribute is referenced in a node, with a
    default the call may override."""
    ref = _attr_ref("alpha", "slope", onnx.AttributeProto.FLOAT)
    leaky = helper.make_node("LeakyRelu", ["a"], ["b"])
    leaky.attribute.append(ref)
    default = helper.make_attribute("slope", 0.25)
    function = _function("leaky", ["a"], ["b"], [leaky], 16, defaults=[default])
    call = helper.make_node("leaky", ["x"], ["y"], domain="local")
    if given is not None:
        call.attribute.append(helper.make_attribute("slope", given))
    main = make_model([call], [vi("x", F32, [3, 4])], [vi("y", F32, [3, 4])], opset=18)
    return _with_functions(main, function)


@pytest.mark.parametrize("given", [None, 0.5])
def test_function_attributes_given_or_defaulted(given: float | None, tmp_path: Path) -> None:
    check_conversion(attribute_model(given), {"x": X}, tmp_path)


def test_loop_inside_a_function(tmp_path: Path) -> None:
    """A Loop whose body reads the function's input, in an opset-16 function."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         _const("ax", [0], I64),
         helper.make_node("Unsqueeze", ["i", "ax"], ["i1"]),
         helper.make_node("Cast", ["i1"], ["f"], to=onnx.TensorProto.FLOAT),
         helper.make_node("Add", ["h", "f"], ["h1"]),
         helper.make_node("Add", ["h1", "x"], ["h_out"])], "body",
        [vi("i", I64, []), vi("c", BOOL, []), vi("h", F32, None)],
        [vi("c_out", BOOL, []), vi("h_out", F32, None)])
    function = _function("count", ["x", "n"], ["y"], [
        helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], 16)
    main = make_model([helper.make_node("count", ["x", "n"], ["y"], domain="local")],
                      [vi("x", F32, [3, 4]), vi("n", I64, [])], [vi("y", F32, [3, 4])],
                      opset=18)
    ir = check_conversion(_with_functions(main, function), {"x": X, "n": np.array(4, I64)},
                          tmp_path)
    assert len(loop_layers(ir)) == 1


def test_recursive_function_is_a_clear_error() -> None:
    function = _function("again", ["a"], ["b"], [
        helper.make_node("again", ["a"], ["b"], domain="local")], 16)
    main = make_model([helper.make_node("again", ["x"], ["y"], domain="local")],
                      [vi("x", F32, [3, 4])], [vi("y", F32, [3, 4])], opset=18)
    main.opset_import.append(helper.make_opsetid("local", 1))
    main.functions.append(function)
    with pytest.raises(irtool.IRToolError, match=r"again"):
        irtool.convert(main)
