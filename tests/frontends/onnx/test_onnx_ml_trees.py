"""Tree ensembles of ai.onnx.ml (``ml_trees``) against onnxruntime, where test_onnx_ml
leaves gaps: TreeEnsemble-5 forests in every node mode (set membership among them), with
missing-value tracks, every aggregate and post transform, one or several targets, float and
double inputs and attributes; the regressors' input types, 1-D rows, summed weights, trees
that are one leaf, and ensembles without trees; refusals naming what is wrong.

Inputs and thresholds are multiples of 0.5, so comparisons hit their thresholds exactly in
f32 and f64 alike (the EQ/LEQ/LT distinctions), and some inputs are NaN.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper
from onnx.numpy_helper import from_array
from support.compare import assert_same
from support.conversion import loop_layers, run_onnxruntime, run_openvino

import irtool

ML = "ai.onnx.ml"
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")  # TreeEnsemble-5 numbers them so
POSTS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
V3_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")


def ml_model(node: onnx.NodeProto, x_type: type, width: int | None, y_type: type,
             outs: int, ml_opset: int, rank: int = 2) -> onnx.ModelProto:
    x_shape = [None, width] if rank == 2 else [width]
    graph = helper.make_graph(
        [node], "trees", [helper.make_tensor_value_info("X", ONNX_TYPE[x_type], x_shape)],
        [helper.make_tensor_value_info("Y", ONNX_TYPE[y_type], [None, outs])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid(ML, ml_opset)])
    model.ir_version = 10
    return model


def check(model: onnx.ModelProto, x: np.ndarray, tmp_path: Path, *, openvino: bool = False,
          rtol: float = 1e-5, atol: float = 1e-6) -> dict[str, np.ndarray]:
    """irtool's runtime (and OpenVINO, when asked) on irtool's IR against onnxruntime."""
    expected = run_onnxruntime(model, {"X": x})
    xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
    assert_same(irtool.run(irtool.load(xml), {"X": x}), expected, "irtool", rtol, atol,
                float_dtypes=False)
    if openvino:
        assert_same(run_openvino(xml, {"X": x}), expected, "openvino", rtol, atol,
                    float_dtypes=False)
    return expected


def halves(rng: np.random.Generator, shape: tuple[int, ...], nan: float = 0.15,
           dtype: type = np.float32) -> np.ndarray:
    x = (rng.integers(-4, 5, size=shape) / 2).astype(dtype)
    x[rng.random(shape) < nan] = np.nan
    return x


# -- TreeEnsemble-5 -------------------------------------------------------------------------
def forest_v5(rng: np.random.Generator, trees: int, depth: int, width: int, targets: int,
              modes: list[int], missing: bool, split_type: type = np.float32,
              weight_type: type = np.float32) -> dict[str, object]:
    """TreeEnsemble-5 attributes of ``trees`` ragged trees up to ``depth`` levels (a branch
    may end early, so leaves sit at several depths); modes drawn from ``modes`` (6: a set
    of one to three integers); each leaf weighs one target."""
    nodes: list[dict] = []
    leaves: list[tuple[int, float]] = []
    members: list[float] = []

    def build(level: int) -> tuple[int, int]:  # (is_leaf, index)
        if level == depth or (level > 0 and rng.random() < 0.3):
            leaves.append((int(rng.integers(targets)), float(np.round(rng.normal(), 2))))
            return 1, len(leaves) - 1
        node = {"feature": int(rng.integers(width)), "mode": modes[int(rng.integers(len(modes)))],
                "split": float(rng.integers(-3, 4) / 2),
                "missing": int(missing and rng.random() < 0.5)}
        nodes.append(node)
        if node["mode"] == 6:
            # onnxruntime takes integer members only
            node["set"] = sorted(rng.choice(np.arange(-2.0, 3.0), rng.integers(1, 4),
                                            replace=False).tolist())
        node["true"], node["false"] = build(level + 1), build(level + 1)
        return 0, nodes.index(node)

    roots = [build(0)[1] for _ in range(trees)]
    for node in nodes:  # the sets in node order, NaN after each
        if node["mode"] == 6:
            members += [*node["set"], np.nan]
    attrs: dict[str, object] = dict(
        n_targets=targets, tree_roots=roots,
        nodes_featureids=[n["feature"] for n in nodes],
        nodes_modes=from_array(np.array([n["mode"] for n in nodes], np.uint8), "modes"),
        nodes_splits=from_array(np.array([n["split"] for n in nodes], split_type), "splits"),
        nodes_truenodeids=[n["true"][1] for n in nodes],
        nodes_trueleafs=[n["true"][0] for n in nodes],
        nodes_falsenodeids=[n["false"][1] for n in nodes],
        nodes_falseleafs=[n["false"][0] for n in nodes],
        nodes_missing_value_tracks_true=[n["missing"] for n in nodes],
        leaf_targetids=[t for t, _ in leaves],
        leaf_weights=from_array(np.array([w for _, w in leaves], weight_type), "weights"))
    if members:
        attrs["membership_values"] = from_array(np.array(members, split_type), "members")
    return attrs


def tree_ensemble(attrs: dict[str, object], **changes: object) -> onnx.NodeProto:
    merged = {**attrs, **changes}
    return helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, name="trees",
                            **{k: v for k, v in merged.items() if v is not None})


V5_CASES = [
    # (id, modes, aggregate, post, targets, input type, openvino)
    *((f"mode{m}", [m], "SUM", "NONE", 2, np.float32, m == 6) for m in range(7)),
    ("mixed", list(range(7)), "SUM", "NONE", 3, np.float32, True),
    *((f"mixed_{a.lower()}_{k}", list(range(7)), a, "NONE", k, np.float32, False)
      for a in AGGREGATES for k in (1, 3)),
    *((f"post_{p.lower()}", [0, 3, 6], "SUM", p, 3, np.float32, p == "SOFTMAX_ZERO")
      for p in POSTS[1:]),
    ("one_target_logistic", [0, 2], "SUM", "LOGISTIC", 1, np.float32, False),
    ("one_target_probit", [0, 2], "AVERAGE", "PROBIT", 1, np.float32, False),
    ("double", list(range(7)), "SUM", "NONE", 3, np.float64, True),
    ("double_max", [1, 4, 5, 6], "MAX", "SOFTMAX", 2, np.float64, False),
]


@pytest.mark.parametrize("case", V5_CASES, ids=[c[0] for c in V5_CASES])
def test_tree_ensemble_v5_against_onnxruntime(case: tuple, tmp_path: Path) -> None:
    """Ragged forests of each mode alone (one mode: no mode table, and a leaf reached
    early sits on its leaf through the later levels) and mixed, with NaN inputs and
    missing-value tracks, in every aggregate, post transform and input type."""
    name, modes, aggregate, post, targets, dtype, openvino = case
    rng = np.random.default_rng(sum(map(ord, name)))
    typ = np.float64 if dtype == np.float64 else np.float32
    attrs = forest_v5(rng, 5, 4, 4, targets, modes, True, split_type=typ, weight_type=typ)
    if post == "PROBIT":  # probit of values in (0, 1)
        w = onnx.numpy_helper.to_array(attrs["leaf_weights"])  # type: ignore[arg-type]
        attrs["leaf_weights"] = from_array((np.abs(w) / 20 + 0.01).astype(typ), "weights")
    node = tree_ensemble(attrs, aggregate_function=AGGREGATES.index(aggregate),
                         post_transform=POSTS.index(post))
    # integers: onnxruntime casts x to an integer for a set membership test
    x = np.trunc(halves(rng, (40, 4), dtype=dtype))
    model = ml_model(node, dtype, 4, dtype, targets, 5)
    if post not in ("SOFTMAX", "LOGISTIC") or targets == 1:  # one target: PROBIT alone
        check(model, x, tmp_path, openvino=openvino, rtol=1e-4, atol=1e-5)
        return
    # onnxruntime takes post_transform 1 for LOGISTIC and 2 for SOFTMAX, the spec's
    # numbers swapped: the spec's transform of onnxruntime's untransformed scores
    node = tree_ensemble(attrs, aggregate_function=AGGREGATES.index(aggregate))
    s = run_onnxruntime(ml_model(node, dtype, 4, dtype, targets, 5), {"X": x})["Y"]
    e = np.exp(s - s.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True) if post == "SOFTMAX" else 1 / (1 + np.exp(-s))
    xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
    assert_same(irtool.run(irtool.load(xml), {"X": x}), {"Y": expected}, "irtool", 1e-5,
                1e-6)
    if openvino:
        assert_same(run_openvino(xml, {"X": x}), {"Y": expected}, "openvino", 1e-5, 1e-6)


def test_tree_ensemble_v5_sets_follow_the_member_nodes(tmp_path: Path) -> None:
    """membership_values holds one set per BRANCH_MEMBER node in node order, NaN between:
    node 0 tests x0 <= 0 (no set), node 1 x0 in {1, 2}, node 2 x1 in {3}; a set past the
    last member node is not read."""
    node = tree_ensemble(dict(
        n_targets=1, tree_roots=[0], nodes_featureids=[0, 0, 1],
        nodes_modes=from_array(np.array([0, 6, 6], np.uint8), "m"),
        nodes_splits=from_array(np.array([0.0, 0.0, 0.0], np.float32), "s"),
        nodes_truenodeids=[0, 1, 2], nodes_trueleafs=[1, 1, 1],
        nodes_falsenodeids=[1, 2, 3], nodes_falseleafs=[0, 0, 1],
        leaf_targetids=[0, 0, 0, 0],
        leaf_weights=from_array(np.array([1.0, 2.0, 3.0, 4.0], np.float32), "w"),
        membership_values=from_array(np.array([1, 2, np.nan, 3, np.nan, 4], np.float32),
                                     "mv")))
    x = np.array([[-1, 3], [1, 3], [2, 0], [3, 3], [3, 4], [4, 4], [np.nan, 3]], np.float32)
    model = ml_model(node, np.float32, 2, np.float32, 1, 5)
    expected = check(model, x, tmp_path, openvino=True)
    assert expected["Y"].ravel().tolist() == [1, 2, 2, 3, 4, 4, 3]


def _stump_v5(**changes: object) -> onnx.NodeProto:
    """x0 <= 0.5 (node 0) then x1 in a set (node 1) or x1 <= 0 (node 2); four leaves."""
    return tree_ensemble(dict(
        n_targets=1, tree_roots=[0], nodes_featureids=[0, 1, 1],
        nodes_modes=from_array(np.array([0, 6, 0], np.uint8), "m"),
        nodes_splits=from_array(np.array([0.5, 0.0, 0.0], np.float32), "s"),
        nodes_truenodeids=[1, 0, 2], nodes_trueleafs=[0, 1, 1],
        nodes_falsenodeids=[2, 1, 3], nodes_falseleafs=[0, 1, 1],
        leaf_targetids=[0, 0, 0, 0],
        leaf_weights=from_array(np.array([1.0, 2.0, 3.0, 4.0], np.float32), "w"),
        membership_values=from_array(np.array([1, 2], np.float32), "mv")), **changes)


def _u8(values: list[int]) -> onnx.TensorProto:
    return from_array(np.array(values, np.uint8), "m")


def _f32(values: list[float]) -> onnx.TensorProto:
    return from_array(np.array(values, np.float32), "mv")


REFUSED = [
    ("unknown mode after modes 0 and 6", _stump_v5(nodes_modes=_u8([0, 6, 9])),
     r"unknown node mode 9$"),
    ("member node without a set", _stump_v5(nodes_modes=_u8([0, 6, 6]),
                                            membership_values=_f32([1, 2])),
     r"BRANCH_MEMBER node 2 has no membership_values \(a set of one or more per "
     r"BRANCH_MEMBER node, NaN between sets\)$"),
    ("empty set", _stump_v5(membership_values=_f32([np.nan, 1, 2])),
     r"BRANCH_MEMBER node 1 has no membership_values"),
]


@pytest.mark.parametrize("node, message", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_malformed_tree_ensembles_are_refused(node: onnx.NodeProto, message: str) -> None:
    """One line naming the node and what is wrong (onnxruntime refuses these models too:
    a member node must have at least one membership value)."""
    model = ml_model(node, np.float32, 2, np.float32, 1, 5)
    with pytest.raises(Exception):  # noqa: B017 -- onnxruntime's own exception types
        run_onnxruntime(model, {"X": np.zeros((1, 2), np.float32)})
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(model)
    text = str(err.value)
    assert "\n" not in text and "trees" in text
    assert re.search(message, text), text


# -- TreeEnsembleRegressor ------------------------------------------------------------------
def _regressor(targets: int = 1, trees: int = 1, **changes: object) -> onnx.NodeProto:
    """``trees`` copies of: x0 <= 0.5 -> node 1 (x1 > 0 -> leaves 3 / 4), else leaf 2;
    leaf 3 weighs every target 1 + k, leaf 4 -(1 + k), leaf 2 0.5 + k; tree t's weights
    times t + 1."""
    attrs: dict[str, list] = {k: [] for k in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes",
        "nodes_truenodeids", "nodes_falsenodeids", "target_treeids", "target_nodeids",
        "target_ids", "target_weights")}
    for t in range(trees):
        attrs["nodes_treeids"] += [t] * 5
        attrs["nodes_nodeids"] += [0, 1, 2, 3, 4]
        attrs["nodes_featureids"] += [0, 1, 0, 0, 0]
        attrs["nodes_values"] += [0.5, 0.0, 0.0, 0.0, 0.0]
        attrs["nodes_modes"] += ["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF"]
        attrs["nodes_truenodeids"] += [1, 3, 0, 0, 0]
        attrs["nodes_falsenodeids"] += [2, 4, 0, 0, 0]
        for k in range(targets):
            for leaf, w in ((2, 0.5 + k), (3, 1.0 + k), (4, -1.0 - k)):
                attrs["target_treeids"].append(t)
                attrs["target_nodeids"].append(leaf)
                attrs["target_ids"].append(k)
                attrs["target_weights"].append(w * (t + 1))
    merged = {"n_targets": targets, **attrs, **changes}
    return helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, name="trees",
                            **{k: v for k, v in merged.items() if v is not None})


X2 = np.array([[0.0, 1.0], [0.5, -1.0], [1.0, 2.0], [np.nan, 1.0], [0.5, 0.0]], np.float32)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_tree_regressor_input_types(dtype: type, tmp_path: Path) -> None:
    """Integer inputs are compared in f32 (converted first), doubles in f64."""
    node = _regressor(2, 2, base_values=[0.25, -0.5])
    x = np.array([[0, 1], [1, -1], [2, 2], [0, 0], [-3, 5]], dtype)
    model = ml_model(node, dtype, 2, np.float32, 2, 3)
    if dtype == np.float64:
        check(model, x, tmp_path, openvino=True)
        return
    # onnxruntime has no integer kernel of TreeEnsembleRegressor: the same numbers as f32
    expected = run_onnxruntime(ml_model(node, np.float32, 2, np.float32, 2, 3),
                               {"X": x.astype(np.float32)})
    xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
    for who, got in (("irtool", irtool.run(irtool.load(xml), {"X": x})),
                     ("openvino", run_openvino(xml, {"X": x}))):
        assert_same(got, expected, who, 1e-6, 1e-6, float_dtypes=False)


def test_tree_regressor_one_row_of_rank_1(tmp_path: Path) -> None:
    """A 1-D input is read as one row (onnxruntime's kernel does so, though its shape
    inference refuses the model): Y is [1, targets], the row's scores."""
    node = _regressor(2, 2)
    x = np.array([0.25, 3.0], np.float32)
    expected = run_onnxruntime(ml_model(node, np.float32, 2, np.float32, 2, 3), {"X": x[None]})
    got = irtool.run(irtool.convert(ml_model(node, np.float32, 2, np.float32, 2, 3, rank=1)),
                     {"X": x})
    assert_same(got, expected, "irtool", 1e-6, 1e-6)


@pytest.mark.parametrize("post", POSTS)
def test_tree_regressor_one_target_takes_only_probit(post: str, tmp_path: Path) -> None:
    """One target: onnxruntime applies PROBIT alone of the post transforms, after the one
    base value; two targets transform both columns, with or without base values."""
    weights = [0.1, 0.3, 0.2]  # probit of values in (0, 1)
    node = _regressor(1, 1, target_weights=weights, base_values=[0.25], post_transform=post)
    check(ml_model(node, np.float32, 2, np.float32, 1, 3), X2, tmp_path)
    node = _regressor(2, 1, target_weights=weights * 2, target_ids=[0, 0, 0, 1, 1, 1],
                      base_values=[0.25, 0.125], post_transform=post)
    if post != "PROBIT":
        check(ml_model(node, np.float32, 2, np.float32, 2, 3), X2, tmp_path)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("targets", [1, 2])
@pytest.mark.parametrize("first", [False, True])
def test_tree_regressor_several_weights_of_one_leaf(aggregate: str, targets: int, first: bool,
                                                    tmp_path: Path) -> None:
    """Several target_* entries on the same leaf and target: of several targets,
    onnxruntime aggregates each entry as a leaf of its own (sums them; MIN and MAX take the
    least and the largest), of one target it takes the leaf's first entry alone (irtool
    summed them); ``first``: the extra entries come before the others."""
    node = _regressor(targets, 2, aggregate_function=aggregate)
    for name, extra in (("target_treeids", [0, 1]), ("target_nodeids", [3, 2]),
                        ("target_ids", [0, targets - 1]), ("target_weights", [10.0, 100.0])):
        attr = next(a for a in node.attribute if a.name == name)
        values = attr.floats if name == "target_weights" else attr.ints
        merged = [*extra, *values] if first else [*values, *extra]
        del values[:]
        values.extend(merged)
    expected = check(ml_model(node, np.float32, 2, np.float32, targets, 3), X2, tmp_path)
    # row 0 reaches tree 0's leaf 3 (1 and 10) and tree 1's leaf 3 (2)
    votes = {(1, False): [1, 2], (1, True): [10, 2]}.get((targets, first), [1, 10, 2])
    assert expected["Y"][0, 0] == {"SUM": sum(votes), "AVERAGE": sum(votes) / 2,
                                   "MIN": min(votes), "MAX": max(votes)}[aggregate]


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
def test_tree_regressor_trees_of_one_leaf(aggregate: str, tmp_path: Path) -> None:
    """Trees that are one leaf each (depth 0: every row on the roots; a target no leaf
    weighs), and one of them beside a deeper tree."""
    leaves = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=3,
        aggregate_function=aggregate, nodes_treeids=[0, 1], nodes_nodeids=[0, 0],
        nodes_featureids=[0, 0], nodes_values=[0.0, 0.0], nodes_modes=["LEAF", "LEAF"],
        nodes_truenodeids=[0, 0], nodes_falsenodeids=[0, 0], target_treeids=[0, 0, 1],
        target_nodeids=[0, 0, 0], target_ids=[0, 1, 0], target_weights=[1.5, -2.0, 4.0],
        base_values=[0.5, 0.25, 0.125])
    expected = check(ml_model(leaves, np.float32, 2, np.float32, 3, 3), X2, tmp_path,
                     openvino=True)
    assert (expected["Y"][:, 2] == 0).all()  # no leaf weighs target 2: 0, base value or not
    mixed = _regressor(2, 1, aggregate_function=aggregate)
    for name, extra in (("nodes_treeids", [1]), ("nodes_nodeids", [0]),
                        ("nodes_featureids", [0]), ("nodes_values", [0.0]),
                        ("nodes_modes", [b"LEAF"]), ("nodes_truenodeids", [0]),
                        ("nodes_falsenodeids", [0]), ("target_treeids", [1]),
                        ("target_nodeids", [0]), ("target_ids", [1]),
                        ("target_weights", [7.0])):
        attr = next(a for a in mixed.attribute if a.name == name)
        getattr(attr, {"nodes_values": "floats", "target_weights": "floats",
                       "nodes_modes": "strings"}.get(name, "ints")).extend(extra)
    check(ml_model(mixed, np.float32, 2, np.float32, 2, 3), X2, tmp_path)


def test_tree_regressor_has_one_level_per_depth() -> None:
    """The IR walks as many levels as the deepest tree: none for trees of one leaf each
    (the roots broadcast to every row), one GatherElements per level below the root."""
    leaves = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=1,
        nodes_treeids=[0, 1], nodes_nodeids=[0, 0], nodes_featureids=[0, 0],
        nodes_values=[0.0, 0.0], nodes_modes=["LEAF", "LEAF"], nodes_truenodeids=[0, 0],
        nodes_falsenodeids=[0, 0], target_treeids=[0, 1], target_nodeids=[0, 0],
        target_ids=[0, 0], target_weights=[1.5, -2.0])
    flat = irtool.convert(ml_model(leaves, np.float32, 2, np.float32, 1, 3))
    assert loop_layers(flat, "Broadcast") and not loop_layers(flat, "Select")
    for trees, depth in ((1, 2), (3, 2)):
        deep = irtool.convert(ml_model(_regressor(1, trees), np.float32, 2, np.float32, 1, 3))
        assert len(loop_layers(deep, "GatherElements")) == depth - 1


def test_tree_depth_limit_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree exactly MAX_DEPTH levels deep converts; one level more is refused (the
    limit lowered to the depth of _regressor's trees, 2, to keep the IR small)."""
    from irtool.frontends.onnx.ops import ml_trees

    monkeypatch.setattr(ml_trees, "MAX_DEPTH", 2)
    irtool.convert(ml_model(_regressor(1, 1), np.float32, 2, np.float32, 1, 3))
    monkeypatch.setattr(ml_trees, "MAX_DEPTH", 1)
    with pytest.raises(irtool.ConversionError, match="deeper than 1 levels"):
        irtool.convert(ml_model(_regressor(1, 1), np.float32, 2, np.float32, 1, 3))


def _no_trees(targets: int, **attrs: object) -> onnx.NodeProto:
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, name="trees",
                            n_targets=targets, **attrs)
    ints, floats = AttributeProto.INTS, AttributeProto.FLOATS
    for name, kind in (("nodes_treeids", ints), ("nodes_nodeids", ints),
                       ("nodes_featureids", ints), ("nodes_truenodeids", ints),
                       ("nodes_falsenodeids", ints), ("nodes_values", floats),
                       ("nodes_modes", AttributeProto.STRINGS), ("target_treeids", ints),
                       ("target_nodeids", ints), ("target_ids", ints),
                       ("target_weights", floats)):
        node.attribute.append(helper.make_attribute(name, [], attr_type=kind))
    return node


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("targets", [1, 2])
def test_tree_regressor_without_trees(aggregate: str, targets: int, tmp_path: Path) -> None:
    """No trees: no target is scored. onnxruntime writes 0 for each of several targets,
    base value or not, and 0 plus the base value for one target (AVERAGE of one target:
    0 / 0 trees). irtool gave the base values, or +-inf for MIN and MAX."""
    node = _no_trees(targets, aggregate_function=aggregate,
                     base_values=[0.5, 0.25][:targets])
    expected = check(ml_model(node, np.float32, 2, np.float32, targets, 3), X2, tmp_path,
                     openvino=True)
    if targets == 2:
        assert (expected["Y"] == 0).all()
    elif aggregate != "AVERAGE":
        assert (expected["Y"] == 0.5).all()


def test_tree_regressor_double_attributes_as_tensors(tmp_path: Path) -> None:
    """nodes_values_as_tensor, target_weights_as_tensor and base_values_as_tensor (double)
    in place of the float lists, on a double input."""
    node = _regressor(2, 2, nodes_values=None, target_weights=None)
    plain = _regressor(2, 2)
    values = next(a.floats for a in plain.attribute if a.name == "nodes_values")
    weights = next(a.floats for a in plain.attribute if a.name == "target_weights")
    for name, array in (("nodes_values_as_tensor", np.array(values) + 1 / 3),
                        ("target_weights_as_tensor", np.array(weights) / 3),
                        ("base_values_as_tensor", np.array([1 / 3, 1e-9]))):
        node.attribute.append(helper.make_attribute(name, from_array(array.astype(np.float64),
                                                                     name)))
    # row 4: x1 > node 1's threshold (1/3 rounded to float: the float32 list plus 1/3) in
    # double, not once x1 is rounded to float too
    x = np.array([[1 / 3, 1 / 3], [0.8, -1.0], [1 / 3 + 1e-12, 0.0], [np.nan, 1.0],
                  [0.0, float(np.float32(1 / 3)) + 1e-12]])
    expected = check(ml_model(node, np.float64, 2, np.float32, 2, 3), x, tmp_path, rtol=1e-6,
                     atol=0)
    # node 1 sends row 4 to leaf 3 (weights 1 + k, times t + 1, over 3) as onnxruntime does
    np.testing.assert_allclose(expected["Y"][4], [(1 + 2) / 3 + 1 / 3, (2 + 4) / 3 + 1e-9],
                               rtol=1e-6)


def test_tree_ensembles_need_the_number_of_features() -> None:
    """An input whose number of columns is not known is refused, naming the reason (the
    feature ids are checked against it)."""
    model = ml_model(_regressor(1, 1), np.float32, None, np.float32, 1, 3)
    with pytest.raises(irtool.ConversionError, match="number of input features must be "
                       "known") as err:
        irtool.convert(model)
    assert "\n" not in str(err.value) and "trees" in str(err.value)
