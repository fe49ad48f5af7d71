"""Large tensors are read lazily: the skeleton of an ONNX file, and ONNX external data.

``irtool.frontends.onnx.skeleton`` parses a model without its large tensors (they stay in the file
as external data pointing into the ``.onnx`` itself); models saved with
``save_as_external_data=True`` are the same case. Expected values come from onnxruntime
(on the original files), and the skeleton is checked against ``onnx.load`` of the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support import REPO, SHARED
from support.compare import assert_same
from support.conversion import run_openvino, vi

import irtool
from irtool.frontends.onnx.skeleton import read_skeleton, skeleton_bytes

FIXTURES = REPO / "tests" / "fixtures"
PEER = SHARED / "peer-tests" / "openvino-onnx"


def reattached(skeleton: onnx.ModelProto, folder: Path) -> onnx.ModelProto:
    """``skeleton`` with the data of every external tensor read back inline, by hand
    (onnx's own loader would leave ``data_location`` set to DEFAULT where the original
    has none)."""
    tensors = []

    def graph(g: onnx.GraphProto) -> None:
        tensors.extend(g.initializer)
        for node in g.node:
            nodes(node)

    def nodes(node: onnx.NodeProto) -> None:
        for attr in node.attribute:
            if attr.HasField("t"):
                tensors.append(attr.t)
            tensors.extend(attr.tensors)
            if attr.HasField("g"):
                graph(attr.g)
            for g in attr.graphs:
                graph(g)

    graph(skeleton.graph)
    for function in skeleton.functions:
        for node in function.node:
            nodes(node)
    for t in tensors:
        if t.data_location != TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        with open(folder / info["location"], "rb") as f:
            f.seek(int(info["offset"]))
            t.raw_data = f.read(int(info["length"]))
        del t.external_data[:]
        t.ClearField("data_location")
    return skeleton


def _round_trip_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.onnx"))


@pytest.mark.parametrize("path", _round_trip_files(), ids=lambda p: p.stem)
def test_skeleton_of_exporter_fixtures_round_trips(path: Path) -> None:
    original = onnx.load(path)
    skeleton = read_skeleton(path, threshold=16)
    assert reattached(skeleton, path.parent) == original


def test_skeleton_of_peer_suite_round_trips(tmp_path: Path) -> None:
    if not PEER.is_dir():
        pytest.skip(f"the peer suite is not beside the repo (../shared/peer-tests/"
                    f"openvino-onnx, looked for at {PEER})")
    from google.protobuf import text_format

    moved_total = 0
    for proto in sorted(PEER.glob("*.prototxt")):
        model = text_format.Parse(proto.read_text(encoding="utf-8"), onnx.ModelProto())
        _as_raw_data(model)
        path = tmp_path / f"{proto.stem}.onnx"
        path.write_bytes(model.SerializeToString())
        # Threshold 1: every tensor with raw data moves, bodies and Constants included.
        data, moved = skeleton_bytes(path, threshold=1)
        moved_total += moved
        assert reattached(onnx.ModelProto.FromString(data), tmp_path) == model, proto.name
    assert moved_total > 0


def _as_raw_data(model: onnx.ModelProto) -> None:
    """Every numeric tensor of ``model`` stored as ``raw_data`` (the text format's models
    write ``float_data``...), as exporters store them."""
    from irtool.frontends.onnx.protos import walk_tensors

    for t in walk_tensors(model.graph):
        if t.data_type != TensorProto.STRING and not t.HasField("raw_data"):
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))


def _loop_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """y = Loop(3) { h = tanh(h @ W + b) + C } + bias + sum(extra), with W (main graph, captured),
    b (an initializer of the body), C (a Constant node of the body) and bias (a Constant
    node of the main graph) all large enough to be external."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((256, 256)) / 32).astype(np.float32)
    b = rng.standard_normal((256,)).astype(np.float32)
    c = rng.standard_normal((1, 256)).astype(np.float32)
    bias = rng.standard_normal((1, 256)).astype(np.float32)
    extra = rng.standard_normal((32, 256)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Constant", [], ["C"], value=numpy_helper.from_array(c, "C")),
         helper.make_node("MatMul", ["h_in", "W"], ["m"]),
         helper.make_node("Add", ["m", "b"], ["mb"]),
         helper.make_node("Tanh", ["mb"], ["t"]),
         helper.make_node("Add", ["t", "C"], ["h_out"])],
        "body",
        [vi("it", np.int64, []), vi("c_in", np.bool_, []), vi("h_in", np.float32, [1, 256])],
        [vi("c_out", np.bool_, []), vi("h_out", np.float32, [1, 256])],
        initializer=[numpy_helper.from_array(b, "b")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["h"], body=body),
         helper.make_node("Constant", [], ["bias"], value=numpy_helper.from_array(bias, "bias")),
         helper.make_node("ReduceSum", ["extra"], ["extra_sum"], axes=[0], keepdims=1),
         helper.make_node("Add", ["h", "bias"], ["hb"]),
         helper.make_node("Add", ["hb", "extra_sum"], ["y"])],
        "chain", [vi("x", np.float32, [1, 256])], [vi("y", np.float32, [1, 256])],
        [numpy_helper.from_array(np.array(3, np.int64), "trips"),
         numpy_helper.from_array(np.array(True), "cond"),
         numpy_helper.from_array(w, "W"), numpy_helper.from_array(extra, "extra")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    x = rng.standard_normal((1, 256)).astype(np.float32)
    return model, {"x": x}


def _save_external(model: onnx.ModelProto, path: Path, location: str) -> None:
    (path.parent / location).parent.mkdir(parents=True, exist_ok=True)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    # convert_attribute: the Constant nodes' values too (save_model moves initializers only).
    onnx.external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=location, size_threshold=256,
        convert_attribute=True)
    onnx.save_model(model, path)


def _expected(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _external_tensors(path: Path) -> list[str]:
    from irtool.frontends.onnx.protos import walk_tensors

    model = onnx.load(path, load_external_data=False)
    return [t.name for t in walk_tensors(model.graph)
            if t.data_location == TensorProto.EXTERNAL]


@pytest.mark.parametrize("location", ["weights.bin", "data/sub/weights.bin"])
def test_external_data_converts_and_matches_onnxruntime(tmp_path: Path, location: str) -> None:
    model, feeds = _loop_model()
    path = tmp_path / "m.onnx"
    _save_external(model, path, location)
    # Several tensors in one file at their offsets, one of them in the Loop's body, two of
    # them Constant nodes' values.
    assert sorted(_external_tensors(path)) == ["C", "W", "b", "bias", "extra"]
    expected = _expected(path, feeds)
    ir = irtool.convert(path)
    xml = irtool.save(ir, tmp_path / "out" / "m.xml")
    assert_same(irtool.run(irtool.load(xml), feeds), expected, "irtool", 1e-5, 1e-6)
    assert_same(run_openvino(xml, feeds), expected, "openvino", 1e-5, 1e-6)


def test_external_data_of_a_model_proto_with_base_dir(tmp_path: Path) -> None:
    model, feeds = _loop_model()
    path = tmp_path / "m.onnx"
    _save_external(model, path, "w.data")
    expected = _expected(path, feeds)
    proto = onnx.load(path, load_external_data=False)
    with pytest.raises(irtool.ConversionError, match="base_dir"):
        irtool.convert(proto)
    ir = irtool.convert(proto, base_dir=tmp_path)
    assert_same(irtool.run(ir, feeds), expected, "irtool", 1e-5, 1e-6)


def test_inline_model_is_read_as_a_skeleton_and_matches_onnxruntime(tmp_path: Path) -> None:
    model, feeds = _loop_model()
    path = tmp_path / "m.onnx"
    onnx.save_model(model, path)
    assert skeleton_bytes(path)[1] == 5  # W, extra, b, C, bias stay in the file
    expected = _expected(path, feeds)
    ir = irtool.convert(path)
    # Each large Const says which bytes of the .onnx it is (save copies them from there).
    big = [layer.const for _, layer in ir.graph.walk()
           if layer.type == "Const" and layer.const is not None and layer.const.size >= 1024]
    assert len(big) == 5 and all(c.source is not None for c in big)
    raw = path.read_bytes()
    for c in big:
        file, offset = c.source
        assert Path(file) == path and raw[offset:offset + c.size] == c.tobytes()
    xml = irtool.save(ir, tmp_path / "out" / "m.xml")
    assert_same(irtool.run(irtool.load(xml), feeds), expected, "irtool", 1e-5, 1e-6)
    assert_same(run_openvino(xml, feeds), expected, "openvino", 1e-5, 1e-6)


def _cli_convert(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irtool", "convert", str(path), "-o", str(out)],
                          capture_output=True, text=True, check=False)


def test_missing_external_file_is_one_line_naming_tensor_and_file(tmp_path: Path) -> None:
    model, _ = _loop_model()
    path = tmp_path / "m.onnx"
    _save_external(model, path, "weights.bin")
    (tmp_path / "weights.bin").unlink()
    done = _cli_convert(path, tmp_path / "out")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "weights.bin" in lines[0] and "'W'" in lines[0]
    assert not (tmp_path / "out").exists()


def test_truncated_external_file_is_one_line_naming_tensor_and_file(tmp_path: Path) -> None:
    model, _ = _loop_model()
    path = tmp_path / "m.onnx"
    _save_external(model, path, "weights.bin")
    data = tmp_path / "weights.bin"
    data.write_bytes(data.read_bytes()[:1000])
    done = _cli_convert(path, tmp_path / "out")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "weights.bin" in lines[0] and "truncated" in lines[0]
    assert any(f"'{name}'" in lines[0] for name in ("W", "b", "C", "bias", "extra"))
    assert not (tmp_path / "out").exists()


def test_external_location_outside_the_model_folder_is_refused(tmp_path: Path) -> None:
    model, _ = _loop_model()
    path = tmp_path / "inner" / "m.onnx"
    _save_external(model, path, "weights.bin")
    skeleton = onnx.load(path, load_external_data=False)
    for t in skeleton.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../weights.bin"
    (tmp_path / "inner" / "weights.bin").rename(tmp_path / "weights.bin")
    onnx.save_model(skeleton, path)
    with pytest.raises(irtool.ConversionError, match="outside the model's folder"):
        irtool.convert(path)


def test_walked_field_numbers_are_onnx_schema() -> None:
    from irtool.frontends.onnx import skeleton as sk

    kinds = {sk._MODEL: onnx.ModelProto, sk._GRAPH: onnx.GraphProto, sk._NODE: onnx.NodeProto,
             sk._ATTRIBUTE: onnx.AttributeProto, sk._FUNCTION: onnx.FunctionProto,
             sk._TENSOR: onnx.TensorProto}
    for kind, children in sk._CHILDREN.items():
        fields = kinds[kind].DESCRIPTOR.fields_by_number
        for number, child in children.items():
            assert fields[number].message_type is kinds[child].DESCRIPTOR, (kind, number)
    tensor = onnx.TensorProto.DESCRIPTOR.fields_by_name
    assert [tensor[n].number for n in ("name", "raw_data", "external_data", "data_location")] \
        == [sk._NAME, sk._RAW_DATA, sk._EXTERNAL_DATA, sk._DATA_LOCATION]


HWM = r'''
import json, sys
from irtool.frontends.onnx.skeleton import read_skeleton
def hwm():
    return next(int(ln.split()[1]) for ln in open("/proc/self/status")
                if ln.startswith("VmHWM:")) * 1024
before = hwm()
read_skeleton(sys.argv[1])
print(json.dumps(hwm() - before))
'''


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_reading_the_skeleton_maps_none_of_the_weights(tmp_path: Path) -> None:
    """The process's high-water mark (file pages mapped included) grows by far less than
    the 48 MiB of weights the walk steps over (it grew by 2 MiB a tensor before the walk
    unmapped what it touched)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((1024, 1024)).astype(np.float32),
                                     f"W{i}") for i in range(12)]
    graph = helper.make_graph(
        [helper.make_node("Sum", [t.name for t in inits], ["y"])], "sum", [],
        [vi("y", np.float32, [1024, 1024])], inits)
    path = tmp_path / "m.onnx"
    onnx.save_model(helper.make_model(graph), path)
    done = subprocess.run([sys.executable, "-c", HWM, str(path)], capture_output=True,
                          text=True, check=True)
    grew = json.loads(done.stdout.strip().splitlines()[-1])
    assert grew < 8 << 20, f"grew by {grew / 2**20:.1f} MiB"
