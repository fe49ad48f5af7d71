"""Hostile and invalid ONNX models: refused with one line naming the node or value, exit 1,
nothing written; irtool's own bugs are exit 3 naming the node; no crash of a library can
take the process down.

Each model is one finding of a fuzz run over mutated ONNX files: before the fix it
crashed the process, raised an internal error, ran out of memory, or was converted into
IR that ``irtool validate`` rejects. Where onnxruntime refuses the model as well, the
test says so (an independent witness that the model is bad).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.conversion import run_onnxruntime, run_openvino

import irtool
from irtool.cli import main as cli_main
from irtool.frontends.onnx import context as onnx_context


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], opset: int = 17) -> onnx.ModelProto:
    model = h.make_model(h.make_graph(nodes, "g", inputs, outputs),
                         opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _relu(x: str = "x", y: str = "y", elem: int = T.FLOAT, dims: list[int] | None = None,
          out_elem: int | None = None) -> onnx.ModelProto:
    dims = [2] if dims is None else dims
    return _model([h.make_node("Relu", [x], [y], name="r")],
                  [h.make_tensor_value_info(x, elem, dims)],
                  [h.make_tensor_value_info(y, out_elem or elem, dims)])


def _renamed(model: onnx.ModelProto, old: bytes, new: bytes) -> bytes:
    """The serialized model with a name's bytes replaced (protobuf lets any bytes through)."""
    return model.SerializeToString().replace(old, new)


def _split(num_outputs: int, outputs: int) -> onnx.ModelProto:
    names = [f"y{i}" for i in range(outputs)]
    return _model([h.make_node("Split", ["x"], names, axis=0, num_outputs=num_outputs,
                               name="split")],
                  [h.make_tensor_value_info("x", T.FLOAT, [6])],
                  [h.make_tensor_value_info(n, T.FLOAT, None) for n in names], opset=18)


def _loop_with_trip_count_shape(shape: list[int]) -> onnx.ModelProto:
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [1])],
        [h.make_tensor_value_info("c_out", T.BOOL, []),
         h.make_tensor_value_info("v_out", T.FLOAT, [1])],
        [h.make_tensor("one", T.FLOAT, [1], [1.0])])
    return _model([h.make_node("Loop", ["M", "c", "v0"], ["v"], body=body, name="loop")],
                  [h.make_tensor_value_info("M", T.INT64, shape),
                   h.make_tensor_value_info("c", T.BOOL, []),
                   h.make_tensor_value_info("v0", T.FLOAT, [1])],
                  [h.make_tensor_value_info("v", T.FLOAT, [1])])


def _truncated() -> bytes:
    """The first bytes of a model that still parse: ir_version and producer_name, no graph."""
    model = _relu()
    model.producer_name = "pytorch"
    data = model.SerializeToString()
    for n in range(len(data), 0, -1):
        try:
            if not onnx.load_from_string(data[:n]).HasField("graph"):
                return data[:n]
        except Exception:
            continue
    raise AssertionError("no prefix parses")


def _constant(value: onnx.TensorProto | None = None,
              sparse: onnx.SparseTensorProto | None = None) -> onnx.ModelProto:
    node = (h.make_node("Constant", [], ["c"], value=value, name="const") if value is not None
            else h.make_node("Constant", [], ["c"], sparse_value=sparse, name="const"))
    return _model([node, h.make_node("Identity", ["c"], ["y"])], [],
                  [h.make_tensor_value_info("y", T.FLOAT, None)])


def _tensor(data_type: int, dims: list[int], floats: list[float]) -> onnx.TensorProto:
    """A TensorProto as a file may hold it (onnx's helper refuses to make these)."""
    tensor = onnx.TensorProto(name="v", data_type=data_type, dims=dims)
    tensor.float_data.extend(floats)
    return tensor


def _scan_of_lengths(a: int = 3, b: int = 4) -> onnx.ModelProto:
    """A Scan over two inputs of different lengths (ONNX wants them equal)."""
    vi = h.make_tensor_value_info
    body = h.make_graph([h.make_node("Add", ["s", "p"], ["s2"]),
                         h.make_node("Add", ["s2", "q"], ["s3"]),
                         h.make_node("Identity", ["s3"], ["o"])], "body",
                        [vi("s", T.FLOAT, [2]), vi("p", T.FLOAT, [2]), vi("q", T.FLOAT, [2])],
                        [vi("s3", T.FLOAT, [2]), vi("o", T.FLOAT, [2])])
    return _model([h.make_node("Scan", ["s0", "xa", "xb"], ["s", "os"], body=body,
                               num_scan_inputs=2, name="scan")],
                  [vi("s0", T.FLOAT, [2]), vi("xa", T.FLOAT, [a, 2]), vi("xb", T.FLOAT, [b, 2])],
                  [vi("s", T.FLOAT, [2]), vi("os", T.FLOAT, None)])


def _newline_output() -> onnx.ModelProto:
    model = _relu()
    model.graph.node.append(h.make_node("Relu", ["y"], ["new\nline"]))
    return model


# name -> (the model or its bytes, words the one-line error must hold, onnxruntime refuses it)
HOSTILE: dict[str, tuple[Callable[[], onnx.ModelProto | bytes], tuple[str, ...], bool]] = {
    "unknown_elem_type": (lambda: _relu(elem=99), ("input 'x'", "element type 99"), True),
    "invalid_utf8_name": (lambda: _renamed(_relu(x="XXXX"), b"XXXX", b"X\xff\xfeX"),
                          ("input 'X\\xff\\xfeX'", "not valid UTF-8"), False),
    "control_char_name": (lambda: _relu(x="x\x01y"), ("input 'x\\x01y'", "U+0001"), False),
    "truncated_file": (_truncated, ("no ONNX graph",), True),
    "dim_2_pow_62": (lambda: _relu(dims=[2**62, 2]), ("input 'x'", str(2**62)), False),
    "dim_negative": (lambda: _relu(dims=[-7, 2]), ("input 'x'", "-7"), False),
    "output_type_differs": (lambda: _relu(out_elem=T.INT16),
                            ("output 'y'", "int16", "f32"), True),
    "trip_count_of_shape_3": (lambda: _loop_with_trip_count_shape([3]),
                              ("node loop", "trip count", "[3]"), False),
    "split_num_outputs_huge": (lambda: _split(300_000_000, 2),
                               ("node split", "num_outputs is 300000000", "2 outputs"), True),
    "split_num_outputs_zero": (lambda: _split(0, 2), ("node split", "num_outputs is 0"), True),
    "split_num_outputs_too_many": (lambda: _split(3, 2), ("node split", "num_outputs is 3"),
                                   True),
    "newline_in_a_node_output": (_newline_output, ("node Relu(new\\x0aline)", "U+000A"),
                                 False),
    "constant_of_undefined_type": (
        lambda: _constant(_tensor(T.UNDEFINED, [1], [])),
        ("node const", "cannot read value", "UNDEFINED"), True),
    "constant_whose_data_misses_its_dims": (
        lambda: _constant(_tensor(T.FLOAT, [3], [1.0])),
        ("node const", "cannot read value"), True),
    "attribute_of_the_wrong_type": (
        lambda: _model([h.make_node("Split", ["x"], ["a", "b"], axis=1.5, name="split")],
                       [h.make_tensor_value_info("x", T.FLOAT, [2])],
                       [h.make_tensor_value_info(n, T.FLOAT, [1]) for n in "ab"]),
        ("not a valid ONNX model", "node split", "Mismatched attribute type"), True),
    "max_unpool_strides_short_of_its_spatial_dims": (
        lambda: _model([h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2],
                                    strides=[2], name="unpool")],
                       [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2]),
                        h.make_tensor_value_info("i", T.INT64, [1, 1, 2, 2])],
                       [h.make_tensor_value_info("y", T.FLOAT, None)]),
        ("node unpool", "strides has 1 values; 2 expected"), True),
    "transpose_perm_of_another_rank": (
        lambda: _model([h.make_node("Transpose", ["x"], ["y"], perm=[1, 0], name="t")],
                       [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, None)]),
        ("node t", "perm [1, 0] is not a permutation of the 3 axes"), True),
    "split_of_a_scalar": (
        lambda: _model([h.make_node("Split", ["x"], ["a", "b"], axis=0, name="split")],
                       [h.make_tensor_value_info("x", T.FLOAT, [])],
                       [h.make_tensor_value_info(n, T.FLOAT, None) for n in "ab"]),
        ("node split", "its input is a scalar"), True),
    "scan_inputs_of_different_lengths": (_scan_of_lengths,
                                         ("node scan", "lengths 3 and 4 along their scan axes"),
                                         True),
    # onnxruntime and ONNX's reference drop the axis (only 1 keeps it), OpenVINO keeps it
    "reduce_keepdims_of_2": (
        lambda: _model([h.make_node("ReduceMin", ["x"], ["y"], axes=[1], keepdims=2,
                                    name="rmin")],
                       [h.make_tensor_value_info("x", T.FLOAT, [3, 2, 2])],
                       [h.make_tensor_value_info("y", T.FLOAT, None)]),
        ("node rmin", "attribute 'keepdims' must be 0 or 1, not 2"), False),
    "sparse_constant_of_2_pow_40_elements": (
        lambda: _constant(sparse=h.make_sparse_tensor(
            h.make_tensor("v", T.FLOAT, [1], [1.0]), h.make_tensor("i", T.INT64, [1], [0]),
            [2**20, 2**20])), ("node const", "would not fit in 1 GiB"), True),
}


def _write(tmp_path: Path, name: str) -> Path:
    made = HOSTILE[name][0]()
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(made if isinstance(made, bytes) else made.SerializeToString())
    return path


def _ort_refuses(path: Path) -> bool:
    """Does onnxruntime refuse the model, when loading it or running it on zeros?"""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        dtypes = {"tensor(float)": np.float32, "tensor(int64)": np.int64,
                  "tensor(bool)": np.bool_}
        session.run(None, {i.name: np.zeros(i.shape, dtypes[i.type])
                           for i in session.get_inputs()})
    except Exception:
        return True
    return False


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_convert_refuses_with_one_line(name: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, name)
    out = tmp_path / "out"
    rc = cli_main(["convert", str(path), "-o", str(out / "m.xml")])
    err = capsys.readouterr().err
    assert rc == 1, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"irtool convert: {path}: "), err
    for words in HOSTILE[name][1]:
        assert words in lines[0], f"{words!r} not in {lines[0]!r}"
    assert "internal error" not in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(n for n, (_, _, ort) in HOSTILE.items() if ort))
def test_onnxruntime_refuses_these_too(name: str, tmp_path: Path) -> None:
    """The witness: these models are bad by onnxruntime's reading as well."""
    assert _ort_refuses(_write(tmp_path, name))


@pytest.mark.parametrize("command", ["convert", "inspect", "check"])
def test_every_onnx_command_refuses_a_bad_name(command: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "invalid_utf8_name")
    rc = cli_main([command, str(path)])
    err = capsys.readouterr().err.splitlines()
    assert rc == 1, err
    assert err[-1].startswith(f"irtool {command}: ") and "not valid UTF-8" in err[-1]
    assert all(line.endswith("...") for line in err[:-1])  # check's progress lines


def test_if_branches_of_different_ranks_compute_what_onnxruntime_does(tmp_path: Path) -> None:
    """ONNX lets If branches give different ranks (onnxruntime runs them, warning about the
    declared shape): the IR leaves the output's rank open and validates, and irtool returns
    onnxruntime's values for either branch. It used to take the declared rank, which one
    branch contradicts (PORT_MAP_SHAPE). OpenVINO's CPU plugin compiles no If of open rank,
    from irtool's IR as from its own ONNX frontend."""
    then = h.make_graph([h.make_node("Constant", [], ["a"],
                                     value=h.make_tensor("t", T.FLOAT, [2], [1, 2]))],
                        "then", [], [h.make_tensor_value_info("a", T.FLOAT, [2])])
    other = h.make_graph([h.make_node("Constant", [], ["b"],
                                      value=h.make_tensor("e", T.FLOAT, [1, 2], [3, 4]))],
                         "else", [], [h.make_tensor_value_info("b", T.FLOAT, [1, 2])])
    model = _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other,
                                name="if")],
                   [h.make_tensor_value_info("c", T.BOOL, [])],
                   [h.make_tensor_value_info("y", T.FLOAT, [2])])
    xml = tmp_path / "if.xml"
    irtool.save(irtool.convert(model), xml)
    assert [d.format() for d in irtool.validate(xml)] == []
    for cond in (True, False):
        feed = {"c": np.array(cond)}
        want = run_onnxruntime(model, feed)["y"]
        assert want.ndim == (1 if cond else 2)
        np.testing.assert_array_equal(irtool.run(xml, feed)["y"], want)
    onnx.save(model, tmp_path / "if.onnx")
    for path in (xml, tmp_path / "if.onnx"):
        with pytest.raises(RuntimeError, match="If operation with dynamic rank"):
            run_openvino(path, {"c": np.array(True)})


def test_split_that_aborts_onnx_shape_inference_is_refused_in_a_live_process(
        tmp_path: Path) -> None:
    """num_outputs=2 for 3 outputs makes onnx's C++ shape inference abort (SIGABRT) when
    it runs in-process; the converter survives it and names the node."""
    path = tmp_path / "split.onnx"
    onnx.save(_split(2, 3), path)
    proc = subprocess.run([sys.executable, "-m", "irtool", "convert", str(path), "-o",
                           str(tmp_path / "out.xml")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "node split" in proc.stderr, proc.stderr
    assert "num_outputs is 2 but the node has 3 outputs" in proc.stderr
    assert not (tmp_path / "out.xml").exists()


def test_a_translator_bug_is_an_internal_error_naming_the_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An exception that is not an IRToolError inside a translator is irtool's bug: exit 3,
    the node named, the cause kept; IRTOOL_DEBUG=1 prints the traceback first."""

    def broken(ctx: onnx_context.NodeContext) -> list:
        return [None] * (1 // 0)

    monkeypatch.setitem(onnx_context._TRANSLATORS._items, "Relu", {1: broken})
    path = tmp_path / "relu.onnx"
    onnx.save(_relu(), path)
    with pytest.raises(irtool.InternalError) as info:
        irtool.convert(path)
    assert not isinstance(info.value, irtool.IRToolError)
    assert isinstance(info.value.__cause__, ZeroDivisionError)

    rc = cli_main(["convert", str(path), "-o", str(tmp_path / "m.xml")])
    err = capsys.readouterr().err
    assert rc == 3
    assert err.splitlines() == [
        f"irtool convert: internal error: {path}: node r: the Relu translator failed: "
        "ZeroDivisionError: integer division or modulo by zero "
        "(set IRTOOL_DEBUG=1 for the traceback)"]

    monkeypatch.setenv("IRTOOL_DEBUG", "1")
    rc = cli_main(["convert", str(path), "-o", str(tmp_path / "m.xml")])
    err = capsys.readouterr().err
    assert rc == 3
    assert err.startswith("Traceback") and "ZeroDivisionError" in err
    assert err.splitlines()[-1].startswith("irtool convert: internal error: ")
    assert not (tmp_path / "m.xml").exists()


def test_the_converted_ir_is_validated_before_anyone_gets_it() -> None:
    """The last gate: IR that breaks irtool's own rules never leaves the converter. A good
    conversion passes it; the same IR with its Relu's input edge removed does not."""
    from irtool.frontends.onnx.converter import refuse_invalid_ir

    model = irtool.convert(_relu())
    refuse_invalid_ir(model, "m.onnx")
    relu = next(layer for _, layer in model.graph.walk() if layer.type == "ReLU")
    model.graph.disconnect_input(relu.id, relu.inputs[0].id)
    with pytest.raises(irtool.InternalError, match=r"^m\.onnx: the converted IR breaks its "
                       r"rules: UNCONNECTED_INPUT layer \d+ \"r\""):
        refuse_invalid_ir(model, "m.onnx")


def test_check_refuses_random_inputs_too_large_to_make(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A declared input of 2**20 x 2**20 floats (4 TiB) is not allocated: one line, exit 1."""
    path = tmp_path / "big.onnx"
    onnx.save(_relu(dims=[2**20, 2**20]), path)
    rc = cli_main(["check", str(path)])
    err = capsys.readouterr().err.splitlines()
    assert rc == 1
    assert err[-1].startswith("irtool check: input 'x' of shape [1048576, 1048576] would take "
                              "4.1e+03 GiB"), err


def test_what_real_exporters_write_is_not_refused_for_the_checker_s_sake() -> None:
    """ONNX's checker asks for more than runtimes need; irtool refuses none of that: a
    value_info without a shape (scikit-learn's exporters), nodes out of order, an unnamed
    body graph. The same model with an attribute irtool would misread is refused."""
    model = _relu()
    model.graph.value_info.append(onnx.ValueInfoProto(name="y"))  # no type at all
    model.graph.output[0].type.tensor_type.ClearField("shape")
    model.graph.node.insert(0, h.make_node("Neg", ["y"], ["z"], name="late"))
    model.graph.output.append(h.make_tensor_value_info("z", T.FLOAT, [2]))
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(model)
    feed = {"x": np.array([-1.0, 2.0], np.float32)}
    got = irtool.run(irtool.convert(model), feed)
    np.testing.assert_array_equal(got["z"], -np.maximum(feed["x"], 0))
    model.graph.node.append(model.graph.node.pop(0))  # in order: the checker looks further
    model.graph.node[0].op_type = "LeakyRelu"
    model.graph.node[0].attribute.append(h.make_attribute("alpha", 2))  # an int, not a float
    with pytest.raises(irtool.ConversionError, match="node r: Mismatched attribute type"):
        irtool.convert(model)


def test_tensors_the_translators_read_are_checked_without_onnx_s_checker() -> None:
    """When ONNX's worker gives no answer the translators decide alone: a tensor whose data
    does not fill its dims, or of an undefined type, is the node's error."""
    from irtool.frontends.onnx.context import tensor_array

    for tensor, words in ((_tensor(T.FLOAT, [3], [1.0]), "cannot read value: ValueError"),
                          (_tensor(T.UNDEFINED, [1], []), "cannot read value: TypeError")):
        with pytest.raises(irtool.ConversionError, match=words):
            tensor_array(tensor, "value", irtool.ConversionError)


def test_a_crash_in_onnx_leaves_the_converter_standing() -> None:
    """The worker running ONNX's shape inference dies (SIGABRT) on this model; the next
    conversion gets a fresh worker and ONNX's help again."""
    from irtool.frontends.onnx import analysis as onnx_analysis

    broken = onnx_analysis.analyse(_split(2, 3))
    assert broken.failure == "SIGABRT" and broken.inferred is None
    fine = onnx_analysis.analyse(_split(2, 2))
    assert fine.failure is None and fine.invalid is None and fine.inferred is not None
    # The outputs were declared without a shape; ONNX's inference gave them [3] each.
    assert [[d.dim_value for d in o.type.tensor_type.shape.dim]
            for o in fine.inferred.graph.output] == [[3], [3]]


def test_a_loop_body_condition_of_dynamic_shape_converts() -> None:
    """The body's condition input declared of shape [N] (one value at run time) made the
    Loop translator ask numpy for ones of shape (-1,): an internal error, found by fuzzing."""
    vi = h.make_tensor_value_info
    body = h.make_graph([h.make_node("Identity", ["c_in"], ["c_out"]),
                         h.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
                        [vi("i", T.INT64, []), vi("c_in", T.BOOL, ["N"]),
                         vi("v_in", T.FLOAT, [1])],
                        [vi("c_out", T.BOOL, ["N"]), vi("v_out", T.FLOAT, [1])],
                        [h.make_tensor("one", T.FLOAT, [1], [1.0])])
    model = _model([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="loop")],
                   [vi("M", T.INT64, []), vi("v0", T.FLOAT, [1])], [vi("v", T.FLOAT, [1])])
    feed = {"M": np.array(3), "v0": np.array([0.5], np.float32)}
    want = run_onnxruntime(model, feed)
    np.testing.assert_array_equal(irtool.run(irtool.convert(model), feed)["v"], want["v"])
