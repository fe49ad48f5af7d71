"""Tree ensembles of ai.onnx.ml (TreeEnsembleRegressor, TreeEnsembleClassifier,
TreeEnsemble-5) lowered to vectorised IR.

Every node of every tree gets one global index; a leaf points to itself. The position of
each (row, tree) pair is an i64 tensor [N, T]; one *level* gathers, for all pairs at
once, the node's feature (``GatherElements`` on the rows), threshold and children, and
moves to the true or false child (``Select``). After as many levels as the deepest tree
every pair sits on its leaf, whose weights [K] are gathered ([N, T, K]) and aggregated
over the trees. No loop over rows or trees remains; the IR grows with the depth only.

The semantics are onnxruntime's (``tree_ensemble_common.h``, ``tree_ensemble_aggregator.h``):
a node goes to its true child when ``x <mode> threshold``, or when ``x`` is NaN and its
missing-value track is true; a single target gets no post transform but PROBIT; a
classifier with two classes builds its two scores in one of onnxruntime's fixed ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ....ir.types import ELEMENT_TYPES
from ..context import NodeContext, Value, onnx_op
from ._common import BOOL, F32, I64, binary, concat_1d, convert, dim_of, i64
from ._ml import (
    ML,
    argmax_first,
    class_labels,
    concat,
    floats,
    ints,
    label_const,
    post_transform,
    reduce,
    rows,
    second_class,
    select,
    take,
    text,
    transform,
    unary,
    width,
)

F64 = ELEMENT_TYPES["f64"]
MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
         "BRANCH_MEMBER", "LEAF")
LEAF = 7
MEMBER = 6
_COMPARE = ("LessEqual", "Less", "GreaterEqual", "Greater", "Equal", "NotEqual")
MAX_DEPTH = 4096


@dataclass
class Forest:
    """Every node of every tree by global index (leaves point to themselves)."""

    feature: np.ndarray
    threshold: np.ndarray
    mode: np.ndarray
    true_next: np.ndarray
    false_next: np.ndarray
    missing_true: np.ndarray
    roots: np.ndarray
    weights: np.ndarray  # [nodes, targets]: the summed weights of each leaf
    has_weight: np.ndarray  # [nodes, targets]: whether the leaf names that target
    members: list[list[float]] = field(default_factory=list)

    @property
    def trees(self) -> int:
        return len(self.roots)


def _depth(ctx: NodeContext, forest: Forest) -> int:
    """The most branch nodes on a path from a root to a leaf."""
    deepest = 0
    frontier = np.unique(forest.roots)
    steps = 0
    while frontier.size:
        inner = frontier[forest.mode[frontier] != LEAF]
        if inner.size == 0:
            break
        steps += 1
        if steps > MAX_DEPTH:
            raise ctx.error(f"a tree is deeper than {MAX_DEPTH} levels, or has a cycle")
        deepest = steps
        frontier = np.unique(np.concatenate([forest.true_next[inner],
                                             forest.false_next[inner]]))
    return deepest


def _forest_v3(ctx: NodeContext, prefix: str, targets: int, how: str = "SUM") -> Forest:
    """From the attributes of TreeEnsembleRegressor/Classifier 1 and 3 (``prefix`` is
    "target" or "class"). Several weights of one leaf and target combine as onnxruntime
    aggregates them (``how``: summed, or their MIN or MAX); of one target, the first alone
    counts."""
    tree_ids = ints(ctx, "nodes_treeids")
    node_ids = ints(ctx, "nodes_nodeids")
    if tree_ids is None or node_ids is None or len(tree_ids) != len(node_ids):
        raise ctx.error("nodes_treeids and nodes_nodeids must be given, of equal length")
    count = len(tree_ids)
    index = {(int(t), int(n)): g for g, (t, n) in enumerate(zip(tree_ids, node_ids))}
    if len(index) != count:
        raise ctx.error("a (tree, node) id pair appears twice")
    modes_text = ctx.attr("nodes_modes") or []
    try:
        mode = np.asarray([MODES.index(m) for m in modes_text], dtype=np.int64)
    except ValueError as err:
        raise ctx.error(f"unknown node mode: {err}") from None
    values = floats(ctx, "nodes_values", np.float64)
    features = ints(ctx, "nodes_featureids")
    true_ids, false_ids = ints(ctx, "nodes_truenodeids"), ints(ctx, "nodes_falsenodeids")
    for name, array in (("nodes_modes", mode), ("nodes_values", values),
                        ("nodes_featureids", features), ("nodes_truenodeids", true_ids),
                        ("nodes_falsenodeids", false_ids)):
        if array is None or len(array) != count:
            raise ctx.error(f"{name} must have one entry per node ({count})")
    missing = ints(ctx, "nodes_missing_value_tracks_true")
    missing_true = np.zeros(count, bool)
    if missing is not None and len(missing):
        missing_true[:len(missing)] = missing[:count] == 1
    true_next = np.arange(count)
    false_next = np.arange(count)
    for g in range(count):
        if mode[g] == LEAF:
            continue
        tree = int(tree_ids[g])
        for ids, out, what in ((true_ids, true_next, "true"), (false_ids, false_next, "false")):
            child = index.get((tree, int(ids[g])))  # type: ignore[index]
            if child is None or child == g:
                raise ctx.error(f"node {int(node_ids[g])} of tree {tree}: its {what} child "
                                f"{int(ids[g])} is not a node of that tree")  # type: ignore[index]
            out[g] = child
    roots, seen = [], set()
    for g, t in enumerate(tree_ids):
        if int(t) not in seen:
            seen.add(int(t))
            roots.append(g)
    weights = np.zeros((count, targets), np.float64)
    has = np.zeros((count, targets), bool)
    w_tree, w_node = ints(ctx, f"{prefix}_treeids"), ints(ctx, f"{prefix}_nodeids")
    w_id, w_value = ints(ctx, f"{prefix}_ids"), floats(ctx, f"{prefix}_weights", np.float64)
    lengths = {len(a) for a in (w_tree, w_node, w_id, w_value) if a is not None}
    if any(a is None for a in (w_tree, w_node, w_id, w_value)) or len(lengths) != 1:
        raise ctx.error(f"{prefix}_treeids, _nodeids, _ids and _weights must be given, of "
                        "equal length")
    for t, n, k, w in zip(w_tree, w_node, w_id, w_value):  # type: ignore[arg-type]
        g = index.get((int(t), int(n)))  # type: ignore[assignment]
        if g is None or not 0 <= k < targets:
            raise ctx.error(f"a weight names node {int(n)} of tree {int(t)} and target "
                            f"{int(k)}, which do not exist")
        if not has[g, k]:
            weights[g, k] = w
        elif targets == 1:
            continue  # onnxruntime scores one target by a leaf's first weight alone
        elif how in ("MIN", "MAX"):
            weights[g, k] = min(weights[g, k], w) if how == "MIN" else max(weights[g, k], w)
        else:
            weights[g, k] += w
        has[g, k] = True
    return Forest(features.astype(np.int64), values, mode, true_next, false_next,  # type: ignore[arg-type, union-attr]
                  missing_true, np.asarray(roots, np.int64), weights, has)


def _forest_v5(ctx: NodeContext, targets: int) -> Forest:
    """From the attributes of TreeEnsemble-5: interior nodes first, then the leaves."""
    features = ints(ctx, "nodes_featureids")
    if features is None:
        raise ctx.error("nodes_featureids must be given")
    inner = len(features)
    splits = ctx.attr("nodes_splits")
    modes = ctx.attr("nodes_modes")
    leaf_targets = ints(ctx, "leaf_targetids")
    leaf_weights = ctx.attr("leaf_weights")
    roots = ints(ctx, "tree_roots")
    if splits is None or modes is None or leaf_targets is None or leaf_weights is None \
            or roots is None:
        raise ctx.error("nodes_splits, nodes_modes, leaf_targetids, leaf_weights and "
                        "tree_roots must be given")
    splits = np.asarray(splits, np.float64).ravel()
    mode = np.asarray(modes, np.int64).ravel()
    leaf_weights = np.asarray(leaf_weights, np.float64).ravel()
    leaves = len(leaf_targets)
    count = inner + leaves
    parts = {}
    for name in ("nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
                 "nodes_falseleafs"):
        parts[name] = ints(ctx, name)
        if parts[name] is None or len(parts[name]) != inner:  # type: ignore[arg-type]
            raise ctx.error(f"{name} must have one entry per node ({inner})")
    if len(splits) != inner or len(mode) != inner or len(leaf_weights) != leaves:
        raise ctx.error("nodes_splits and nodes_modes need one entry per node, leaf_weights "
                        "one per leaf")
    if ((mode < 0) | (mode > MEMBER)).any():
        raise ctx.error(f"unknown node mode {int(mode[(mode < 0) | (mode > MEMBER)][0])}")

    def target(ids: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        # A node's index counts the interior nodes, a leaf's the leaves (onnxruntime
        # refuses either out of its range: "out-of-range node index").
        if ((ids < 0) | (ids >= np.where(leaf == 1, leaves, inner))).any():
            raise ctx.error("a child index points past the nodes or leaves")
        return np.where(leaf == 1, ids + inner, ids)

    missing = ints(ctx, "nodes_missing_value_tracks_true")
    missing_true = np.zeros(count, bool)
    if missing is not None and len(missing):
        missing_true[:inner] = missing[:inner] == 1
    members: list[list[float]] = []
    member_values = ctx.attr("membership_values")
    if (mode == MEMBER).any():
        if member_values is None:
            raise ctx.error("BRANCH_MEMBER nodes need membership_values")
        flat = np.asarray(member_values, np.float64).ravel()
        groups: list[list[float]] = [[]]
        for v in flat:
            if np.isnan(v):
                groups.append([])
            else:
                groups[-1].append(float(v))
        # one set per BRANCH_MEMBER node, in node order (extra sets are not read);
        # onnxruntime refuses a node whose set is missing or empty
        member_nodes = np.nonzero(mode == MEMBER)[0].tolist()
        sets = dict(zip(member_nodes, groups))
        for g in member_nodes:
            if not sets.get(g):
                raise ctx.error(f"BRANCH_MEMBER node {g} has no membership_values (a set of "
                                "one or more per BRANCH_MEMBER node, NaN between sets)")
        members = [sets.get(g, []) for g in range(inner)] + [[] for _ in range(leaves)]
    weights = np.zeros((count, targets), np.float64)
    has = np.zeros((count, targets), bool)
    for j, (k, w) in enumerate(zip(leaf_targets, leaf_weights)):
        if not 0 <= k < targets:
            raise ctx.error(f"leaf {j} names target {int(k)} of {targets}")
        weights[inner + j, k] += w
        has[inner + j, k] = True
    if ((roots < 0) | (roots >= inner)).any():
        raise ctx.error("a tree root is not a node")
    return Forest(
        np.concatenate([features, np.zeros(leaves, np.int64)]),
        np.concatenate([splits, np.zeros(leaves)]),
        np.concatenate([mode, np.full(leaves, LEAF)]),
        np.concatenate([target(parts["nodes_truenodeids"], parts["nodes_trueleafs"]),  # type: ignore[arg-type]
                        np.arange(inner, count)]),
        np.concatenate([target(parts["nodes_falsenodeids"], parts["nodes_falseleafs"]),  # type: ignore[arg-type]
                        np.arange(inner, count)]),
        missing_true, roots.astype(np.int64), weights, has, members)


# -- lowering ---------------------------------------------------------------------------
def _leaves(ctx: NodeContext, forest: Forest, x: Value) -> Value:
    """The leaf each (row, tree) pair reaches: i64 [N, T]."""
    et = x.element_type
    features = width(ctx, x)
    if forest.feature[forest.mode != LEAF].size and \
            (forest.feature[forest.mode != LEAF].max() >= features
             or forest.feature[forest.mode != LEAF].min() < 0):
        raise ctx.error(f"a node tests a feature the input's {features} do not have")
    table = lambda a, t=None: ctx.const(np.asarray(a), t)  # noqa: E731
    feature_c = table(forest.feature, I64)
    threshold_c = table(forest.threshold.astype(et.dtype), et)
    true_c, false_c = table(forest.true_next, I64), table(forest.false_next, I64)
    branch_modes = sorted({int(m) for m in forest.mode if m != LEAF})
    mode_c = table(forest.mode, I64) if len(branch_modes) > 1 else None
    missing_c = table(forest.missing_true, BOOL) if forest.missing_true.any() else None
    member_c = matrix = None
    if MEMBER in branch_modes:
        size = max(1, max(len(m) for m in forest.members))
        matrix = np.full((len(forest.mode), size), np.nan)
        for g, m in enumerate(forest.members):
            matrix[g, :len(m)] = m
        matrix = matrix.astype(et.dtype)
        member_c = table(matrix, et)

    def level(position: Value | None) -> Value:
        if position is None:  # the roots: constants, gathered once
            roots = forest.roots
            value = ctx.op("Gather", "opset8", [x, i64(ctx, forest.feature[roots]),
                                                 i64(ctx, 1)], {"batch_dims": 0})[0]
            threshold = table(forest.threshold[roots].astype(et.dtype), et)
            pick = lambda c, a, t: table(a[roots], t)  # noqa: E731
        else:
            feature = take(ctx, feature_c, position)
            value = ctx.op("GatherElements", "opset6", [x, feature], {"axis": 1})[0]
            threshold = take(ctx, threshold_c, position)
            pick = lambda c, a, t: take(ctx, c, position)  # noqa: E731
        # OpenVINO's CPU plugin finds NaN >= t (and > t) true: NaN is tested explicitly
        nan_sensitive = missing_c is not None or bool({2, 3} & set(branch_modes))
        is_nan = unary(ctx, "IsNaN", value, "opset10") if nan_sensitive else None
        tests = []
        for m in branch_modes:
            if m == MEMBER:
                sets = pick(member_c, matrix, et)
                wide = ctx.op("Unsqueeze", "opset1", [value, i64(ctx, [-1])])[0]
                test = reduce(ctx, "ReduceLogicalOr", binary(ctx, "Equal", wide, sets), -1,
                              False)
            else:
                test = binary(ctx, _COMPARE[m], value, threshold)
                if m in (2, 3):
                    test = binary(ctx, "LogicalAnd", test, unary(ctx, "LogicalNot", is_nan))  # type: ignore[arg-type]
            if mode_c is not None:
                is_mode = binary(ctx, "Equal", pick(mode_c, forest.mode, I64), i64(ctx, m))
                test = binary(ctx, "LogicalAnd", is_mode, test)
            tests.append(test)
        go_true = tests[0]
        for t in tests[1:]:
            go_true = binary(ctx, "LogicalOr", go_true, t)
        if missing_c is not None:
            missing = binary(ctx, "LogicalAnd", is_nan,  # type: ignore[arg-type]
                             pick(missing_c, forest.missing_true, BOOL))
            go_true = binary(ctx, "LogicalOr", go_true, missing)
        return select(ctx, go_true, pick(true_c, forest.true_next, I64),
                      pick(false_c, forest.false_next, I64))

    depth = _depth(ctx, forest)
    if depth == 0:  # every tree is one leaf: the roots, for every row
        shape = concat_1d(ctx, [dim_of(ctx, x, 0), i64(ctx, [forest.trees])])
        return ctx.op("Broadcast", "opset3", [i64(ctx, forest.roots), shape],
                       {"mode": "numpy"})[0]
    position = None
    for _ in range(depth):
        position = level(position)
    assert position is not None
    return position


def _aggregate(ctx: NodeContext, forest: Forest, leaves: Value, how: str, et
               ) -> tuple[Value, Value | None]:
    """The per-target aggregate over the trees [N, K] and, where some leaf lacks some
    target, which targets got a score on each row ([N, K] bool; None: all of them)."""
    weights = forest.weights
    # no trees: no target is scored (onnxruntime writes 0, base value or not, and 0 + the
    # base value for a single target)
    has_all = forest.trees > 0 and bool(
        forest.has_weight.all(axis=1)[forest.mode == LEAF].all())  # type: ignore[index]
    if how in ("MIN", "MAX"):
        fill = np.inf if how == "MIN" else -np.inf
        weights = np.where(forest.has_weight, weights, fill)
    gathered = take(ctx, ctx.const(weights.astype(et.dtype), et), leaves)  # [N, T, K]
    has = None
    if not has_all:
        has = reduce(ctx, "ReduceLogicalOr",
                     take(ctx, ctx.const(forest.has_weight, BOOL), leaves), 1, False)
    if how in ("SUM", "AVERAGE"):
        score = reduce(ctx, "ReduceSum", gathered, 1, False)
        if how == "AVERAGE":
            score = binary(ctx, "Divide", score,
                           ctx.const(np.asarray(forest.trees, et.dtype), et))
    elif how in ("MIN", "MAX"):
        score = reduce(ctx, "ReduceMin" if how == "MIN" else "ReduceMax", gathered, 1, False)
        if has is not None:
            score = select(ctx, has, score, ctx.const(np.asarray(0, et.dtype), et))
    else:
        raise ctx.error(f"unknown aggregate_function {how!r}")
    return score, has


def _compute_type(x: Value):
    """onnxruntime compares and sums in double for double inputs, in float otherwise."""
    return F64 if x.element_type == F64 else F32


def _regress(ctx: NodeContext, forest: Forest, x: Value, how: str, post: str,
             base: np.ndarray | None, out_et) -> Value:
    et = _compute_type(x)
    x2 = convert(ctx, rows(ctx, x), et)
    targets = forest.weights.shape[1]
    score, has = _aggregate(ctx, forest, _leaves(ctx, forest, x2), how, et)
    base = np.zeros(0) if base is None else base
    const = lambda v: ctx.const(np.asarray(v, et.dtype), et)  # noqa: E731
    if targets == 1:
        origin = float(base[0]) if len(base) == 1 else 0.0
        if origin:
            score = binary(ctx, "Add", score, const(origin))
        result = second_class(ctx, score, "none", post)
    else:
        if len(base) == targets:
            score = binary(ctx, "Add", score, const(base))
        if has is not None:  # a target no tree scored reads 0, base value or not
            score = select(ctx, has, score, const(0.0))
        result = transform(ctx, score, post)
    return convert(ctx, result, out_et)


def _aggregate_name(ctx: NodeContext) -> str:
    value = ctx.attr("aggregate_function", "SUM")
    if isinstance(value, int):
        names = ("AVERAGE", "SUM", "MIN", "MAX")
        if not 0 <= value < len(names):
            raise ctx.error(f"unknown aggregate_function {value}")
        return names[value]
    return str(value)


@onnx_op("TreeEnsembleRegressor", 1, 3, domain=ML)
def tree_ensemble_regressor(ctx: NodeContext) -> list[Value | None]:
    targets = int(ctx.attr("n_targets", 1))
    how = _aggregate_name(ctx)
    forest = _forest_v3(ctx, "target", targets, how)
    return [_regress(ctx, forest, ctx.required_input(0), how,
                     text(ctx, "post_transform", "NONE"), floats(ctx, "base_values",
                                                                 np.float64), F32)]


@onnx_op("TreeEnsemble", 5, domain=ML)
def tree_ensemble(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    targets = int(ctx.attr("n_targets", 1))
    forest = _forest_v5(ctx, targets)
    return [_regress(ctx, forest, x, _aggregate_name(ctx), post_transform(ctx), None,
                     x.element_type if x.element_type.kind == "float" else F32)]


@onnx_op("TreeEnsembleClassifier", 1, 3, domain=ML)
def tree_ensemble_classifier(ctx: NodeContext) -> list[Value | None]:
    labels = class_labels(ctx)
    classes = len(labels)
    if classes < 2:
        raise ctx.error(f"{classes} class label(s): a classifier needs two or more")
    forest = _forest_v3(ctx, "class", classes)
    post = text(ctx, "post_transform", "NONE")
    base = floats(ctx, "base_values", np.float64)
    base = np.zeros(0) if base is None else base
    x = ctx.required_input(0)
    et = _compute_type(x)
    x2 = convert(ctx, rows(ctx, x), et)
    score, has = _aggregate(ctx, forest, _leaves(ctx, forest, x2), "SUM", et)
    const = lambda v: ctx.const(np.asarray(v, et.dtype), et)  # noqa: E731
    strings = isinstance(labels[0], str)
    if classes > 2:
        if len(base):
            k = min(len(base), classes)
            padded = np.zeros(classes)
            padded[:k] = base[:k]
            score = binary(ctx, "Add", score, const(padded))
            if has is not None:
                covered = np.zeros(classes, bool)
                covered[:k] = True
                has = binary(ctx, "LogicalOr", has, ctx.const(covered, BOOL))
        label = take(ctx, label_const(ctx, labels), argmax_first(ctx, score, classes, has))
        return [label, convert(ctx, transform(ctx, score, post), F32)]
    return _binary_classifier(ctx, forest, score, has, base, post, labels, strings, et)


def _binary_classifier(ctx: NodeContext, forest: Forest, score: Value, has: Value | None,
                       base: np.ndarray, post: str, labels: list, strings: bool, et
                       ) -> list[Value | None]:
    """Two classes, as onnxruntime's ``TreeAggregatorClassifier::FinalizeScores`` does."""
    const = lambda v: ctx.const(np.asarray(v, et.dtype), et)  # noqa: E731
    leaf = forest.mode == LEAF
    class_ids = {int(k) for k in np.nonzero(forest.has_weight.any(axis=0))[0]}
    binary_case = len(class_ids) == 1
    all_positive = bool((forest.weights[forest.has_weight] >= 0).all())
    has1_everywhere = bool(forest.has_weight[leaf, 1].all())
    has1_nowhere = not forest.has_weight[:, 1].any()
    if not (has1_everywhere or has1_nowhere):
        raise ctx.error("some leaves weigh class 1 and others do not: onnxruntime's score "
                        "layout then differs row by row, which is not lowered")
    has1 = has1_everywhere
    s0 = ctx.op("Gather", "opset8", [score, i64(ctx, [0]), i64(ctx, 1)], {"batch_dims": 0})[0]
    s1 = ctx.op("Gather", "opset8", [score, i64(ctx, [1]), i64(ctx, 1)], {"batch_dims": 0})[0]
    how = "none"
    two = has1
    if len(base) == 2:
        if has1:  # onnxruntime: p1 = base[1] + p0, p0 = -p1
            s1 = binary(ctx, "Add", s0, const(base[1]))
            s0 = unary(ctx, "Negative", s1)
        else:
            s0 = binary(ctx, "Add", s0, const(base[0]))
            s1 = binary(ctx, "Add", s1, const(base[1]))
            two = True
    elif len(base) == 1:
        s0 = binary(ctx, "Add", s0, const(base[0]))
    elif len(base) == 0:
        how = "negate"
    # A class no leaf scored is written (and read by the label rule) as 0.
    if has is not None:
        h0 = ctx.op("Gather", "opset8", [has, i64(ctx, [0]), i64(ctx, 1)], {"batch_dims": 0})[0]
        s0 = select(ctx, h0, s0, const(0.0))
    if not has1:
        s1 = const(np.zeros((1, 1)))
    # The label reads class 1's score where leaves weigh class 1, else class 0's (two
    # base values give a second column, but class 1's stays 0: onnxruntime)
    pos = s1 if has1 else s0
    if binary_case:
        cut = 0.5 if all_positive else 0.0
        how = "complement" if all_positive else "negate"
        positive, negative = 1, 0  # positions in the labels
    else:
        cut = 0.0
        # onnxruntime's positive/negative labels are 1 and 0 themselves (or the first two
        # string labels, which it numbers 0, 1...)
        positive, negative = (1, 0)
    above = convert(ctx, binary(ctx, "Greater", ctx.op("Reshape", "opset1", [
        pos, i64(ctx, [-1])], {"special_zero": False})[0], const(cut)), I64)
    if binary_case or strings:
        label = take(ctx, label_const(ctx, [labels[negative], labels[positive]]), above)
    else:
        label = take(ctx, label_const(ctx, [0, 1]), above)
    if two:
        if s1.shape == (1, 1):  # the constant 0 column, as wide as the batch
            s1 = binary(ctx, "Multiply", s0, const(0.0))
        scores = transform(ctx, concat(ctx, [s0, s1], 1), post)
    else:
        if how == "none" and post != "PROBIT":
            raise ctx.error("two classes, one score and base_values: onnxruntime writes "
                            "one of the two score columns only")
        scores = second_class(ctx, s0, how, post)
    return [label, convert(ctx, scores, F32)]
