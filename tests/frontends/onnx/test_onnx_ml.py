"""ai.onnx.ml operators lowered to IR: each op and mode built with onnx.helper, run by
onnxruntime (the expected values), by irtool's runtime and by OpenVINO on irtool's IR.

String tensors go through irtool's runtime only: OpenVINO's CPU plugin has no Equal or
Gather on strings.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from support.compare import assert_same
from support.conversion import run_onnxruntime, run_openvino

import irtool

ML = "ai.onnx.ml"
RNG = np.random.default_rng(10)
ONNX_TYPE = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE, "i64": TensorProto.INT64,
             "i32": TensorProto.INT32, "str": TensorProto.STRING}


def ml_model(node: onnx.NodeProto, inputs: list[tuple[str, str, list]],
             outputs: list[tuple[str, str, list | None]], ml_opset: int = 1,
             opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "ml", [helper.make_tensor_value_info(n, ONNX_TYPE[t], s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, ONNX_TYPE[t], s) for n, t, s in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid(ML, ml_opset)])
    model.ir_version = 10
    return model


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], tmp_path: Path, *,
          openvino: bool = True, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    expected = run_onnxruntime(model, feeds)
    ir = irtool.convert(model)
    xml = irtool.save(ir, tmp_path / "model.xml")
    assert_same(irtool.run(irtool.load(xml), dict(feeds)), expected, "irtool", rtol, atol,
                float_dtypes=False)
    if openvino:
        assert_same(run_openvino(xml, feeds), expected, "openvino", rtol, atol,
                    float_dtypes=False)


def features(rows: int = 6, cols: int = 4, dtype: object = np.float32) -> np.ndarray:
    return RNG.normal(size=(rows, cols)).astype(dtype)


# -- preprocessing and lookups ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["f32", "f64", "i64"])
def test_scaler(dtype: str, tmp_path: Path) -> None:
    node = helper.make_node("Scaler", ["X"], ["Y"], domain=ML, offset=[0.5, -1.0, 2.0],
                            scale=[2.0, 0.5, -1.5])
    x = (features(5, 3) * 3).astype({"f32": np.float32, "f64": np.float64,
                                     "i64": np.int64}[dtype])
    check(ml_model(node, [("X", dtype, [None, 3])], [("Y", "f32", [None, 3])]), {"X": x},
          tmp_path)


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm: str, tmp_path: Path) -> None:
    node = helper.make_node("Normalizer", ["X"], ["Y"], domain=ML, norm=norm)
    x = np.abs(features()) + 0.1
    x[1] *= -1
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, 4])]), {"X": x},
          tmp_path)


def test_binarizer(tmp_path: Path) -> None:
    node = helper.make_node("Binarizer", ["X"], ["Y"], domain=ML, threshold=0.25)
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, 4])]),
          {"X": features()}, tmp_path)


@pytest.mark.parametrize("kind", ["nan", "value", "int"])
def test_imputer(kind: str, tmp_path: Path) -> None:
    if kind == "int":
        node = helper.make_node("Imputer", ["X"], ["Y"], domain=ML, replaced_value_int64=-1,
                                imputed_value_int64s=[7, 8, 9])
        x = RNG.integers(-1, 3, size=(6, 3)).astype(np.int64)
        model = ml_model(node, [("X", "i64", [None, 3])], [("Y", "i64", [None, 3])])
    else:
        replaced = float("nan") if kind == "nan" else 0.0
        node = helper.make_node("Imputer", ["X"], ["Y"], domain=ML,
                                replaced_value_float=replaced,
                                imputed_value_floats=[1.5, -2.5, 3.5])
        x = features(6, 3)
        x[RNG.random(x.shape) < 0.3] = replaced
        model = ml_model(node, [("X", "f32", [None, 3])], [("Y", "f32", [None, 3])])
    check(model, {"X": x}, tmp_path)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_array_feature_extractor(rank: int, tmp_path: Path) -> None:
    node = helper.make_node("ArrayFeatureExtractor", ["X", "I"], ["Y"], domain=ML)
    x = {1: features(1, 4)[0], 2: features(5, 4), 3: features(6, 4).reshape(3, 2, 4)}[rank]
    shape = {1: [4], 2: [None, 4], 3: [3, 2, 4]}[rank]
    model = ml_model(node, [("X", "f32", shape), ("I", "i64", [3])],
                     [("Y", "f32", None)])
    check(model, {"X": x, "I": np.array([3, 0, 3], np.int64)}, tmp_path)


@pytest.mark.parametrize("dims", [[2, 3], [3, 2]])
def test_feature_vectorizer(dims: list[int], tmp_path: Path) -> None:
    node = helper.make_node("FeatureVectorizer", ["A", "B"], ["Y"], domain=ML,
                            inputdimensions=dims)
    model = ml_model(node, [("A", "f32", [None, 2]), ("B", "f32", [None, 3])],
                     [("Y", "f32", [None, sum(dims)])])
    check(model, {"A": features(4, 2), "B": features(4, 3)},
          tmp_path)


@pytest.mark.parametrize("dtype", ["i64", "f32"])
def test_one_hot_encoder_numbers(dtype: str, tmp_path: Path) -> None:
    node = helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, cats_int64s=[1, 3, 4],
                            zeros=1)
    x = RNG.integers(0, 5, size=(4, 2)).astype(np.int64 if dtype == "i64" else np.float32)
    check(ml_model(node, [("X", dtype, [None, 2])], [("Y", "f32", [None, 2, 3])]),
          {"X": x}, tmp_path)


def test_one_hot_encoder_strings(tmp_path: Path) -> None:
    node = helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML,
                            cats_strings=["a", "b", "c"], zeros=1)
    x = np.array([["a", "c"], ["b", "z"], ["c", "a"]], dtype=object)
    check(ml_model(node, [("X", "str", [None, 2])], [("Y", "f32", [None, 2, 3])]),
          {"X": x}, tmp_path, openvino=False)


LABEL_ENCODERS = [
    # (id, ml opset, attributes, input type, output type, input, openvino)
    ("int_to_float", 2, {"keys_int64s": [1, 5, 9], "values_floats": [0.5, 1.5, -2.0],
                         "default_float": 7.0}, "i64", "f32",
     np.array([1, 2, 9, 5, 0], np.int64), True),
    ("float_to_int", 2, {"keys_floats": [0.5, 1.5], "values_int64s": [10, 20],
                         "default_int64": -3}, "f32", "i64",
     np.array([0.5, 1.5, 2.5, 0.5], np.float32), True),
    ("int_to_int_tensor", 4, {
        "keys_tensor": onnx.numpy_helper.from_array(np.array([3, 1, 2], np.int64)),
        "values_tensor": onnx.numpy_helper.from_array(np.array([30, 10, 20], np.int64)),
        "default_tensor": onnx.numpy_helper.from_array(np.array([-1], np.int64))},
     "i64", "i64", np.array([[1, 2], [3, 4]], np.int64), True),
    ("string_to_int_v1", 1, {"classes_strings": ["x", "y", "z"], "default_int64": 42},
     "str", "i64", np.array(["z", "q", "x"], dtype=object), False),
    ("int_to_string_v1", 1, {"classes_strings": ["x", "y", "z"], "default_string": "?"},
     "i64", "str", np.array([2, 0, 7, 1], np.int64), False),
    ("string_to_string", 2, {"keys_strings": ["a", "b"], "values_strings": ["A", "B"]},
     "str", "str", np.array(["b", "c", "a"], dtype=object), False),
]


@pytest.mark.parametrize("case", LABEL_ENCODERS, ids=[c[0] for c in LABEL_ENCODERS])
def test_label_encoder(case: tuple, tmp_path: Path) -> None:
    _, version, attrs, tin, tout, x, openvino = case
    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, **attrs)
    shape = list(x.shape)
    model = ml_model(node, [("X", tin, shape)], [("Y", tout, shape)], ml_opset=version)
    check(model, {"X": x}, tmp_path, openvino=openvino)


@pytest.mark.parametrize("direction", ["to_int", "to_string"])
def test_category_mapper(direction: str, tmp_path: Path) -> None:
    node = helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML,
                            cats_strings=["u", "v", "w"], cats_int64s=[5, 6, 7],
                            default_int64=-9, default_string="none")
    if direction == "to_int":
        x = np.array(["w", "u", "zz"], dtype=object)
        model = ml_model(node, [("X", "str", [3])], [("Y", "i64", [3])])
    else:
        x = np.array([7, 1, 5], np.int64)
        model = ml_model(node, [("X", "i64", [3])], [("Y", "str", [3])])
    check(model, {"X": x}, tmp_path, openvino=False)


# -- linear models --------------------------------------------------------------------------
@pytest.mark.parametrize("targets,post", [(1, "NONE"), (1, "PROBIT"), (2, "NONE"),
                                          (3, "SOFTMAX"), (3, "LOGISTIC")])
def test_linear_regressor(targets: int, post: str, tmp_path: Path) -> None:
    coefficients = RNG.normal(size=targets * 4).astype(np.float32) * 0.1
    node = helper.make_node("LinearRegressor", ["X"], ["Y"], domain=ML, targets=targets,
                            coefficients=coefficients.tolist(),
                            intercepts=(RNG.normal(size=targets) * 0.1).tolist(),
                            post_transform=post)
    x = features() * 0.5 if post != "PROBIT" else np.abs(features()) * 0.1
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, targets])]),
          {"X": x}, tmp_path, rtol=1e-4)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_linear_classifier_multiclass(post: str, tmp_path: Path) -> None:
    node = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML,
                            coefficients=(RNG.normal(size=12) * 0.2).tolist(),
                            intercepts=[0.1, -0.2, 0.05], classlabels_ints=[4, 7, 9],
                            post_transform=post)
    x = features() if post != "PROBIT" else features() * 0.01 + 0.3
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "i64", [None]), ("scores", "f32", [None, 3])])
    check(model, {"X": x}, tmp_path, rtol=1e-4)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
def test_linear_classifier_one_score(post: str, tmp_path: Path) -> None:
    attrs = {"classlabels_ints": [3, 8]}
    node = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML,
                            coefficients=[0.5, -0.25, 0.1, 0.3], intercepts=[0.05],
                            post_transform=post, **attrs)
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "i64", [None]), ("scores", "f32", None)])
    check(model, {"X": features()}, tmp_path)


def test_linear_classifier_string_labels(tmp_path: Path) -> None:
    node = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML,
                            coefficients=(RNG.normal(size=8)).tolist(), intercepts=[0.0, 0.1],
                            classlabels_strings=["no", "yes"])
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "str", [None]), ("scores", "f32", [None, 2])])
    check(model, {"X": features()}, tmp_path, openvino=False)


# -- SVMs -----------------------------------------------------------------------------------
KERNELS = [("LINEAR", [0.0, 0.0, 0.0]), ("POLY", [0.3, 0.5, 2.0]), ("RBF", [0.4, 0.0, 0.0]),
           ("SIGMOID", [0.2, 0.1, 0.0])]


@pytest.mark.parametrize("kernel,params", KERNELS, ids=[k for k, _ in KERNELS])
@pytest.mark.parametrize("one_class", [0, 1])
def test_svm_regressor(kernel: str, params: list[float], one_class: int,
                       tmp_path: Path) -> None:
    node = helper.make_node("SVMRegressor", ["X"], ["Y"], domain=ML, kernel_type=kernel,
                            kernel_params=params, n_supports=5,
                            support_vectors=(RNG.normal(size=20) * 0.5).tolist(),
                            coefficients=RNG.normal(size=5).tolist(), rho=[0.1],
                            one_class=one_class)
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, 1])]),
          {"X": features() * 0.5}, tmp_path, rtol=1e-4)


def test_svm_regressor_linear_mode(tmp_path: Path) -> None:
    node = helper.make_node("SVMRegressor", ["X"], ["Y"], domain=ML,
                            coefficients=[0.5, -1.0, 0.25, 2.0], rho=[0.3],
                            kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0])
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, 1])]),
          {"X": features()}, tmp_path)


@pytest.mark.parametrize("kernel,params", KERNELS, ids=[k for k, _ in KERNELS])
@pytest.mark.parametrize("classes,post", [(3, "NONE"), (4, "NONE"), (3, "LOGISTIC"),
                                          (2, "NONE"), (2, "LOGISTIC")])
def test_svm_classifier(kernel: str, params: list[float], classes: int, post: str,
                        tmp_path: Path) -> None:
    per_class = [2, 3, 1, 2][:classes]
    total = sum(per_class)
    pairs = classes * (classes - 1) // 2
    node = helper.make_node(
        "SVMClassifier", ["X"], ["label", "scores"], domain=ML, kernel_type=kernel,
        kernel_params=params, vectors_per_class=per_class,
        support_vectors=(RNG.normal(size=total * 4) * 0.5).tolist(),
        coefficients=RNG.normal(size=(classes - 1) * total).tolist(),
        rho=(RNG.normal(size=pairs) * 0.1).tolist(),
        classlabels_ints=[5, 6, 7, 8][:classes], post_transform=post)
    width_ = pairs if classes > 2 else 2
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "i64", [None]), ("scores", "f32", [None, width_])])
    check(model, {"X": features(10, 4) * 0.5}, tmp_path, rtol=1e-4)


@pytest.mark.parametrize("classes", [2, 3])
def test_svm_classifier_linear_mode(classes: int, tmp_path: Path) -> None:
    node = helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML,
                            coefficients=RNG.normal(size=classes * 4).tolist(), rho=[0.2],
                            kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0],
                            classlabels_ints=list(range(classes)))
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "i64", [None]), ("scores", "f32", [None, classes])])
    check(model, {"X": features(10, 4)}, tmp_path)


@pytest.mark.parametrize("classes", [2, 3, 4])
def test_svm_classifier_probabilities(classes: int, tmp_path: Path) -> None:
    """Platt's sigmoid per pair and libsvm's pairwise coupling (a Loop of sweeps)."""
    pairs = classes * (classes - 1) // 2
    node = helper.make_node(
        "SVMClassifier", ["X"], ["label", "scores"], domain=ML, kernel_type="RBF",
        kernel_params=[0.3, 0.0, 0.0], vectors_per_class=[2] * classes,
        support_vectors=RNG.normal(size=8 * classes).tolist(),
        coefficients=RNG.normal(size=2 * classes * (classes - 1)).tolist(),
        rho=(RNG.normal(size=pairs) * 0.2).tolist(),
        prob_a=(-1 - RNG.random(pairs)).tolist(), prob_b=(RNG.normal(size=pairs) * 0.1).tolist(),
        classlabels_ints=list(range(classes)))
    model = ml_model(node, [("X", "f32", [None, 4])],
                     [("label", "i64", [None]), ("scores", "f32", [None, classes])])
    check(model, {"X": features(10, 4)}, tmp_path, rtol=1e-4, atol=1e-5)


# -- trees ----------------------------------------------------------------------------------
def random_forest(trees: int, depth: int, features_: int, targets: int, modes: list[str],
                  missing: bool, rng: np.random.Generator, leaf_targets: str = "all",
                  ragged: bool = False) -> dict[str, list]:
    """v1/v3 attributes of ``trees`` trees up to ``depth`` levels (ragged: some branches
    end early); leaves weigh every target ("all"), one at random ("one"), or class 1."""
    a: dict[str, list] = {k: [] for k in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes",
        "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
        "w_treeids", "w_nodeids", "w_ids", "w_weights")}
    for t in range(trees):
        queue = [(0, 0)]
        next_id = 1
        while queue:
            nid, level = queue.pop(0)
            leaf = level == depth or (ragged and level > 0 and rng.random() < 0.3)
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(nid)
            a["nodes_featureids"].append(int(rng.integers(features_)) if not leaf else 0)
            a["nodes_values"].append(float(np.round(rng.normal(), 1)) if not leaf else 0.0)
            a["nodes_modes"].append("LEAF" if leaf else modes[int(rng.integers(len(modes)))])
            a["nodes_missing_value_tracks_true"].append(int(missing and rng.random() < 0.5))
            if leaf:
                a["nodes_truenodeids"].append(0)
                a["nodes_falsenodeids"].append(0)
                ks = {"all": range(targets), "one": [int(rng.integers(targets))],
                      "class1": [1]}[leaf_targets]
                for k in ks:
                    a["w_treeids"].append(t)
                    a["w_nodeids"].append(nid)
                    a["w_ids"].append(k)
                    a["w_weights"].append(float(np.round(rng.normal(), 2)))
            else:
                a["nodes_truenodeids"].append(next_id)
                a["nodes_falsenodeids"].append(next_id + 1)
                queue += [(next_id, level + 1), (next_id + 1, level + 1)]
                next_id += 2
    return a


def tree_inputs(rows: int = 12, cols: int = 4, nan: bool = True) -> np.ndarray:
    # thresholds are multiples of 0.1: hit some exactly, for the EQ/LEQ/LT distinctions
    x = np.round(RNG.normal(size=(rows, cols)), 1).astype(np.float32)
    if nan:
        x[RNG.random(x.shape) < 0.15] = np.nan
    return x


def regressor(forest: dict, targets: int, **attrs: object) -> onnx.NodeProto:
    w = {k[2:]: v for k, v in forest.items() if k.startswith("w_")}
    nodes = {k: v for k, v in forest.items() if not k.startswith("w_")}
    return helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML,
                            n_targets=targets, **nodes,
                            **{f"target_{k}": v for k, v in w.items()}, **attrs)


MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


@pytest.mark.parametrize("mode", [*MODES, "mixed"])
def test_tree_regressor_modes_and_missing_tracks(mode: str, tmp_path: Path) -> None:
    forest = random_forest(4, 3, 4, 1, MODES if mode == "mixed" else [mode], True,
                           np.random.default_rng(1), ragged=True)
    node = regressor(forest, 1, base_values=[0.25])
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, 1])], 3),
          {"X": tree_inputs()}, tmp_path)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("targets,post", [(1, "NONE"), (1, "PROBIT"), (3, "NONE"),
                                          (3, "SOFTMAX"), (3, "LOGISTIC"),
                                          (3, "SOFTMAX_ZERO")])
def test_tree_regressor_aggregates_and_transforms(aggregate: str, targets: int, post: str,
                                                  tmp_path: Path) -> None:
    forest = random_forest(5, 3, 4, targets, ["BRANCH_LEQ"], False,
                           np.random.default_rng(2), leaf_targets="one" if targets > 1
                           else "all")
    if post == "PROBIT":  # probit of values in (0, 1)
        forest["w_weights"] = [abs(w) / 20 + 0.01 for w in forest["w_weights"]]
    node = regressor(forest, targets, aggregate_function=aggregate, post_transform=post,
                     base_values=[0.1 * (k + 1) for k in range(targets)])
    check(ml_model(node, [("X", "f32", [None, 4])], [("Y", "f32", [None, targets])], 3),
          {"X": tree_inputs(nan=False)}, tmp_path, rtol=1e-4, atol=1e-5)


def test_tree_regressor_double_input_and_tensor_attributes(tmp_path: Path) -> None:
    forest = random_forest(3, 3, 4, 2, ["BRANCH_LEQ", "BRANCH_GT"], True,
                           np.random.default_rng(3))
    values = forest.pop("nodes_values")
    node = regressor(forest, 2, nodes_values_as_tensor=onnx.numpy_helper.from_array(
        np.asarray(values, np.float64), "v"))
    x = tree_inputs().astype(np.float64) + 0.05  # no ties: OpenVINO compares f64 in f32
    check(ml_model(node, [("X", "f64", [None, 4])], [("Y", "f32", [None, 2])], 3),
          {"X": x}, tmp_path)


def classifier(forest: dict, labels: list, **attrs: object) -> onnx.NodeProto:
    w = {k[2:]: v for k, v in forest.items() if k.startswith("w_")}
    nodes = {k: v for k, v in forest.items() if not k.startswith("w_")}
    key = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_int64s"
    return helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "scores"], domain=ML,
                            **nodes, **{f"class_{k}": v for k, v in w.items()},
                            **{key: labels}, **attrs)


def classifier_model(node: onnx.NodeProto, classes: int, strings: bool = False
                     ) -> onnx.ModelProto:
    return ml_model(node, [("X", "f32", [None, 4])],
                    [("label", "str" if strings else "i64", [None]),
                     ("scores", "f32", [None, classes])], 3)


@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"])
@pytest.mark.parametrize("leaves", ["all", "one"])
def test_tree_classifier_multiclass(post: str, leaves: str, tmp_path: Path) -> None:
    forest = random_forest(6, 3, 4, 3, ["BRANCH_LEQ", "BRANCH_LT"], True,
                           np.random.default_rng(4), leaf_targets=leaves)
    if post == "PROBIT":
        forest["w_weights"] = [abs(w) / 30 + 0.01 for w in forest["w_weights"]]
    node = classifier(forest, [10, 20, 30], post_transform=post)
    check(classifier_model(node, 3), {"X": tree_inputs()}, tmp_path, rtol=1e-4)


def test_tree_classifier_base_values_and_string_labels(tmp_path: Path) -> None:
    forest = random_forest(4, 3, 4, 3, ["BRANCH_GTE"], False, np.random.default_rng(5),
                           leaf_targets="one")
    node = classifier(forest, ["a", "b", "c"], base_values=[0.3, -0.2, 0.1],
                      post_transform="SOFTMAX")
    check(classifier_model(node, 3, strings=True), {"X": tree_inputs()}, tmp_path,
          openvino=False, rtol=1e-4)


BINARY = [
    # (id, which leaves weigh, sign of weights, base_values, post_transform)
    ("class1_positive", "class1", "positive", [], "NONE"),
    ("class1_positive_logistic", "class1", "positive", [], "LOGISTIC"),
    ("class1_mixed", "class1", "mixed", [], "NONE"),
    ("class1_mixed_logistic", "class1", "mixed", [], "LOGISTIC"),
    ("class1_mixed_base2", "class1", "mixed", [0.2, 0.2], "LOGISTIC"),
    ("both_classes", "all", "positive", [], "NONE"),
    ("both_classes_softmax", "all", "mixed", [], "SOFTMAX"),
    ("both_classes_base2", "all", "mixed", [0.1, -0.1], "NONE"),
]


@pytest.mark.parametrize("case", BINARY, ids=[c[0] for c in BINARY])
def test_tree_classifier_binary(case: tuple, tmp_path: Path) -> None:
    _, leaves, sign, base, post = case
    forest = random_forest(5, 3, 4, 2, ["BRANCH_LEQ"], False, np.random.default_rng(6),
                           leaf_targets=leaves)
    if sign == "positive":
        forest["w_weights"] = [abs(w) / 5 for w in forest["w_weights"]]
    attrs = {"base_values": base} if base else {}
    node = classifier(forest, [4, 9], post_transform=post, **attrs)
    check(classifier_model(node, 2), {"X": tree_inputs()}, tmp_path)


def tree_ensemble_v5(aggregate: int, post: int, targets: int, membership: bool
                     ) -> onnx.NodeProto:
    """Two trees over 3 features; the first splits on set membership when asked."""
    modes = [6 if membership else 0, 1, 3, 4]
    return helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain=ML, n_targets=targets,
        aggregate_function=aggregate, post_transform=post,
        tree_roots=[0, 3],
        nodes_featureids=[0, 1, 2, 2], nodes_modes=onnx.numpy_helper.from_array(
            np.array(modes, np.uint8), "m"),
        nodes_splits=onnx.numpy_helper.from_array(
            np.array([0.0, 0.5, -0.3, 1.0], np.float32), "s"),
        nodes_truenodeids=[1, 0, 2, 4], nodes_trueleafs=[0, 1, 1, 1],
        nodes_falsenodeids=[2, 1, 3, 5], nodes_falseleafs=[0, 1, 1, 1],
        nodes_missing_value_tracks_true=[1, 0, 1, 0],
        membership_values=onnx.numpy_helper.from_array(
            np.array([1.0, 2.0, 5.0, np.nan], np.float32), "mv") if membership else None,
        leaf_targetids=[0, targets - 1, 0, targets - 1, 0, 0],
        leaf_weights=onnx.numpy_helper.from_array(
            np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], np.float32), "lw"))


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("membership", [True, False])
def test_tree_ensemble_v5(aggregate: int, membership: bool, tmp_path: Path) -> None:
    node = tree_ensemble_v5(aggregate, 0, 2, membership)
    x = np.array([[1, 0.2, -0.5], [2, 0.9, 0.0], [3, 0.5, 1.0], [5, np.nan, np.nan],
                  [np.nan, 0.1, -0.3], [0, 0, 2]], np.float32)
    check(ml_model(node, [("X", "f32", [None, 3])], [("Y", "f32", [None, 2])], 5, 21),
          {"X": x}, tmp_path)


# -- the ONNX node suite's ai.onnx.ml cases ------------------------------------------------
@pytest.mark.slow  # worker processes start OpenVINO: ~50 s
def test_node_suite_ai_onnx_ml_cases() -> None:
    """Every ai_onnx_ml case of onnx's node suite passes on irtool's runtime (expected values
    are the case's own); on OpenVINO every case without string tensors passes."""
    from irtool.tools.conformance import node_case_names, not_passing, run_cases

    names = [n for n in node_case_names() if n.startswith("test_ai_onnx_ml_")]
    assert len(names) >= 8
    results = run_cases(names, ("irtool", "irtool-openvino"), workers=2)
    strings = {n for n in names if "label_encoder" in n}  # string keys or values
    bad = [r for r in results if r.status != "pass"
           and not (r.path == "irtool-openvino" and r.case in strings)]
    assert not bad, not_passing(results, ("irtool", "irtool-openvino"))


# -- refusals ---------------------------------------------------------------------------
def test_dict_vectorizer_is_refused_with_what_to_do() -> None:
    node = helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ML,
                            int64_vocabulary=[1, 2])
    graph = helper.make_graph([node], "dv", [helper.make_value_info(
        "X", helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(
            TensorProto.FLOAT, [])))], [helper.make_tensor_value_info(
                "Y", TensorProto.FLOAT, [1, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(ML, 1)])
    with pytest.raises(irtool.ConversionError, match=r"DictVectorizer.*takes a map"):
        irtool.convert(model)


def test_zipmap_is_refused_with_what_to_do(tmp_path: Path) -> None:
    node = helper.make_node("ZipMap", ["X"], ["Z"], domain=ML, classlabels_int64s=[0, 1])
    graph = helper.make_graph([node], "zm", [helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, [None, 2])], [helper.make_value_info(
            "Z", helper.make_sequence_type_proto(helper.make_map_type_proto(
                TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(ML, 1)])
    with pytest.raises(irtool.ConversionError, match=r"ZipMap.*zipmap.*False"):
        irtool.convert(model)


# -- trees the spec does not allow: refused in one line naming the node --------------------
def _stump(**changes: object) -> onnx.ModelProto:
    """TreeEnsembleRegressor-3, one tree: x[0] <= 0.5 goes to leaf 1 (weight 1), else to
    leaf 2 (weight 2); ``changes`` replace attributes (None drops one)."""
    attrs: dict[str, object] = dict(
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
        nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0],
        target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 2.0], n_targets=1)
    attrs.update(changes)
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, name="trees",
                            **{k: v for k, v in attrs.items() if v is not None})
    return ml_model(node, [("X", "f32", [None, 2])], [("Y", "f32", [None, 1])], 3)


def _stump_v5(**changes: object) -> onnx.ModelProto:
    """TreeEnsemble-5, the same stump: node 0 (x[0] <= 0.5), leaves 0 and 1."""
    attrs: dict[str, object] = dict(
        n_targets=1, tree_roots=[0], nodes_featureids=[0],
        nodes_modes=onnx.numpy_helper.from_array(np.array([0], np.uint8), "m"),
        nodes_splits=onnx.numpy_helper.from_array(np.array([0.5], np.float32), "s"),
        nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[1],
        nodes_falseleafs=[1], leaf_targetids=[0, 0],
        leaf_weights=onnx.numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w"))
    attrs.update(changes)
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, name="trees",
                            **{k: v for k, v in attrs.items() if v is not None})
    return ml_model(node, [("X", "f32", [None, 2])], [("Y", "f32", [None, 1])], 5, 21)


def test_the_stumps_run_as_onnxruntime(tmp_path: Path) -> None:
    """The two stumps the refusals below break: 1 where x[0] <= 0.5, else 2."""
    x = np.array([[0.2, 9.0], [0.5, 0.0], [0.7, -1.0]], np.float32)
    for model in (_stump(), _stump_v5()):
        assert run_onnxruntime(model, {"X": x})["Y"].ravel().tolist() == [1.0, 1.0, 2.0]
        check(model, {"X": x}, tmp_path)


def _stump_classifier(labels: list[int], **changes: object) -> onnx.ModelProto:
    """TreeEnsembleClassifier-3 on the stump: leaf 1 weighs class 0, leaf 2 class 1."""
    attrs: dict[str, object] = dict(
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
        nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0], class_treeids=[0, 0],
        class_nodeids=[1, 2], class_ids=[0, 1], class_weights=[1.0, 2.0])
    attrs.update(changes)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "scores"], domain=ML,
                            name="trees", classlabels_int64s=labels,
                            **{k: v for k, v in attrs.items() if v is not None})
    return ml_model(node, [("X", "f32", [None, 2])],
                    [("label", "i64", [None]), ("scores", "f32", [None, len(labels)])], 3)


def _u8(values: list[int]) -> onnx.TensorProto:
    return onnx.numpy_helper.from_array(np.array(values, np.uint8), "m")


REFUSED_TREES = [
    ("no node ids", _stump(nodes_nodeids=None), "nodes_treeids and nodes_nodeids must be given"),
    ("node ids short", _stump(nodes_nodeids=[0, 1]), "nodes_treeids and nodes_nodeids must be"),
    ("a node twice", _stump(nodes_nodeids=[0, 1, 1]), r"a \(tree, node\) id pair appears twice"),
    ("unknown mode", _stump(nodes_modes=["BRANCH_LEQ", "LEAF", "BRANCH_XX"]),
     "unknown node mode"),
    *((f"{name} short", _stump(**{name: value}), rf"{name} must have one entry per node \(3\)")
      for name, value in (("nodes_modes", ["BRANCH_LEQ", "LEAF"]), ("nodes_values", [0.5]),
                          ("nodes_featureids", [0, 0]), ("nodes_truenodeids", [1, 0]),
                          ("nodes_falsenodeids", [2]), ("nodes_values", None))),
    ("a true child not in the tree", _stump(nodes_truenodeids=[5, 0, 0]),
     "node 0 of tree 0: its true child 5 is not a node of that tree"),
    ("a false child of another tree", _stump(nodes_treeids=[0, 0, 1], target_treeids=[0, 1]),
     "node 0 of tree 0: its false child 2 is not a node of that tree"),
    ("a node its own child", _stump(nodes_falsenodeids=[0, 0, 0]),
     "node 0 of tree 0: its false child 0 is not"),
    ("a cycle", _stump(nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"],
                       nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 2, 0],
                       target_nodeids=[2, 2]),
     "a tree is deeper than 4096 levels, or has a cycle"),
    ("no target ids", _stump(target_ids=None),
     "target_treeids, _nodeids, _ids and _weights must be given, of equal length"),
    ("weights short", _stump(target_weights=[1.0]), "_weights must be given, of equal length"),
    ("a weight on no node", _stump(target_nodeids=[1, 7]),
     "a weight names node 7 of tree 0 and target 0, which do not exist"),
    ("a weight on a target past n_targets", _stump(target_ids=[0, 1]),
     "a weight names node 2 of tree 0 and target 1, which do not exist"),
    ("a negative target", _stump(target_ids=[-1, 0]), "node 1 of tree 0 and target -1"),
    ("a feature past the input's", _stump(nodes_featureids=[2, 0, 0]),
     "a node tests a feature the input's 2 do not have"),
    ("a negative feature", _stump(nodes_featureids=[-1, 0, 0]),
     "a node tests a feature the input's 2 do not have"),
    ("an unknown aggregate", _stump(aggregate_function="MEDIAN"),
     "unknown aggregate_function 'MEDIAN'"),
    ("one class", _stump_classifier([7], class_ids=[0, 0]),
     r"1 class label\(s\): a classifier needs two or more"),
    ("class 1 on some leaves only", _stump_classifier([0, 1], class_ids=[1, 0]),
     "some leaves weigh class 1 and others do not"),
    ("v5: no features", _stump_v5(nodes_featureids=None), "nodes_featureids must be given"),
    *((f"v5: no {name}", _stump_v5(**{name: None}),
       "nodes_splits, nodes_modes, leaf_targetids, leaf_weights and tree_roots must be given")
      for name in ("nodes_splits", "nodes_modes", "leaf_targetids", "leaf_weights",
                   "tree_roots")),
    *((f"v5: {name} long", _stump_v5(**{name: [0, 0]}),
       rf"{name} must have one entry per node \(1\)")
      for name in ("nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
                   "nodes_falseleafs")),
    ("v5: no true leafs", _stump_v5(nodes_trueleafs=None),
     r"nodes_trueleafs must have one entry per node \(1\)"),
    ("v5: splits long", _stump_v5(nodes_splits=onnx.numpy_helper.from_array(
        np.array([0.5, 1.0], np.float32), "s")), "nodes_splits and nodes_modes need one entry"),
    ("v5: modes long", _stump_v5(nodes_modes=_u8([0, 0])),
     "nodes_splits and nodes_modes need one entry"),
    ("v5: weights short", _stump_v5(leaf_weights=onnx.numpy_helper.from_array(
        np.array([1.0], np.float32), "w")), "leaf_weights one per leaf"),
    ("v5: unknown mode", _stump_v5(nodes_modes=_u8([7])), "unknown node mode 7"),
    ("v5: a child past the leaves", _stump_v5(nodes_falsenodeids=[2]),
     "a child index points past the nodes or leaves"),
    # node 1 of 1 is no node, though index 1 of the nodes and leaves together is a leaf
    # (onnxruntime: "out-of-range node index 1")
    ("v5: a child past the nodes", _stump_v5(nodes_trueleafs=[0], nodes_truenodeids=[1]),
     "a child index points past the nodes or leaves"),
    ("v5: a negative leaf", _stump_v5(nodes_truenodeids=[-1]),
     "a child index points past the nodes or leaves"),
    ("v5: a negative node", _stump_v5(nodes_trueleafs=[0], nodes_truenodeids=[-1]),
     "a child index points past the nodes or leaves"),
    ("v5: membership without values", _stump_v5(nodes_modes=_u8([6])),
     "BRANCH_MEMBER nodes need membership_values"),
    ("v5: a leaf of a target past n_targets", _stump_v5(leaf_targetids=[0, 1]),
     "leaf 1 names target 1 of 1"),
    ("v5: a leaf of a negative target", _stump_v5(leaf_targetids=[-1, 0]),
     "leaf 0 names target -1 of 1"),
    ("v5: a root past the nodes", _stump_v5(tree_roots=[1]), "a tree root is not a node"),
    ("v5: a negative root", _stump_v5(tree_roots=[-1]), "a tree root is not a node"),
    ("v5: an aggregate past MAX", _stump_v5(aggregate_function=4),
     "unknown aggregate_function 4"),
    ("v5: a negative aggregate", _stump_v5(aggregate_function=-1),
     "unknown aggregate_function -1"),
]


@pytest.mark.parametrize("model, message", [c[1:] for c in REFUSED_TREES],
                         ids=[c[0] for c in REFUSED_TREES])
def test_malformed_trees_are_refused_naming_the_node(model: onnx.ModelProto,
                                                     message: str) -> None:
    """Attributes the ONNX-ML spec does not allow (lengths that differ, children, weights,
    features and roots that do not exist, cycles, unknown modes and aggregates): a
    ConversionError that names the node and what is wrong, never a tree built wrong."""
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(model)
    text = str(err.value)
    assert "\n" not in text and "trees" in text
    assert re.search(message, text), text


@pytest.mark.parametrize("weighed", [0, 1])
def test_binary_classifier_on_one_class_with_weights_from_0(weighed: int,
                                                            tmp_path: Path) -> None:
    """Two classes, every leaf weighing class ``weighed`` alone, weights 0 and 0.3 (all
    of them >= 0): onnxruntime's one-class rule, its cut at 0.5 (a score of 0.3 is the
    negative label) and its complement for the other column."""
    model = _stump_classifier([4, 9], class_ids=[weighed, weighed], class_weights=[0.0, 0.3])
    x = np.array([[0.2, 0.0], [0.9, 0.0], [0.5, 1.0]], np.float32)
    expected = run_onnxruntime(model, {"X": x})
    assert expected["label"].tolist() == [4, 4, 4]  # 0.3 is not above the cut
    check(model, {"X": x}, tmp_path)


def test_binary_classifier_of_no_weights_and_one_base_value_is_refused() -> None:
    """A classifier whose leaves weigh no class (empty class_* lists) and one base value:
    onnxruntime then writes one of the two score columns only; refused in one line."""
    model = _no_weights(_stump_classifier([0, 1], class_treeids=None, class_nodeids=None,
                                          class_ids=None, class_weights=None,
                                          base_values=[0.5]))
    with pytest.raises(irtool.ConversionError,
                       match=r"^node trees: TreeEnsembleClassifier: two classes, one score and "
                             r"base_values: onnxruntime writes one of the two score columns "
                             r"only$"):
        irtool.convert(model)


@pytest.mark.parametrize("weighed", [0, 1])
@pytest.mark.parametrize("base", [[0.1, -0.2], [0.7, -0.2], [0.25]],
                         ids=["two base values", "two, past the cut", "one"])
def test_binary_classifier_on_one_class_with_base_values(weighed: int, base: list,
                                                         tmp_path: Path) -> None:
    """Two classes, every leaf weighing class ``weighed`` alone, and base values: each
    added where onnxruntime adds it; its labels and scores. (With two base values and
    class 0 weighed, onnxruntime's second column stays 0 and the label reads the first:
    irtool read the second, a constant, and gave one label for all rows.)"""
    model = _stump_classifier([4, 9], class_ids=[weighed, weighed], class_weights=[0.0, 0.3],
                              base_values=base)
    x = np.array([[0.2, 0.0], [0.9, 0.0], [0.5, 1.0]], np.float32)
    check(model, {"X": x}, tmp_path)


def _no_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``'s classifier with empty class_* lists (an empty list attribute needs its
    type said)."""
    node = model.graph.node[0]
    node.attribute.extend(helper.make_attribute(name, [], attr_type=onnx.AttributeProto.INTS)
                          for name in ("class_treeids", "class_nodeids", "class_ids"))
    node.attribute.append(helper.make_attribute("class_weights", [],
                                                attr_type=onnx.AttributeProto.FLOATS))
    return model


def _string_labels(model: onnx.ModelProto) -> onnx.ModelProto:
    node = model.graph.node[0]
    for attribute in [a for a in node.attribute if a.name == "classlabels_int64s"]:
        node.attribute.remove(attribute)
    node.attribute.append(helper.make_attribute("classlabels_strings", ["no", "yes"]))
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("label", TensorProto.STRING,
                                                                 [None]))
    return model


BINARY_STUMPS = {
    # no leaf weighs a class: onnxruntime's labels are 0 and 1 themselves, scores 0
    "no weights": lambda: _no_weights(_stump_classifier(
        [4, 9], class_treeids=None, class_nodeids=None, class_ids=None, class_weights=None)),
    # class 0 alone, a negative weight: not the all-positive rule (cut 0, negated column)
    "class 0, a negative weight": lambda: _stump_classifier(
        [4, 9], class_ids=[0, 0], class_weights=[-0.3, 0.2]),
    # the same through a logistic, and on a double input (its scores converted to float)
    "class 0, logistic": lambda: _stump_classifier(
        [4, 9], class_ids=[0, 0], class_weights=[-0.3, 0.2], post_transform="LOGISTIC"),
    "class 0, double input": lambda: _double_input(_stump_classifier(
        [4, 9], class_ids=[0, 0], class_weights=[-0.3, 0.2])),
    # both classes on every leaf, string labels: "no" and "yes" both given
    "both classes, string labels": lambda: _string_labels(_stump_classifier(
        [4, 9], class_treeids=[0, 0, 0, 0], class_nodeids=[1, 1, 2, 2], class_ids=[0, 1, 0, 1],
        class_weights=[0.5, -2.0, -0.1, 0.4])),
}


def _double_input(model: onnx.ModelProto) -> onnx.ModelProto:
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("X", TensorProto.DOUBLE,
                                                                [None, 2]))
    return model


@pytest.mark.parametrize("case", list(BINARY_STUMPS))
def test_binary_classifier_layouts(case: str, tmp_path: Path) -> None:
    """Two-class tree classifiers in onnxruntime's other layouts: labels and scores as it
    gives them (OpenVINO not asked for string labels)."""
    x = np.array([[0.2, 0.0], [0.9, 0.0], [0.5, 1.0]], np.float64 if "double" in case
                 else np.float32)
    check(BINARY_STUMPS[case](), {"X": x}, tmp_path, openvino="string" not in case)
