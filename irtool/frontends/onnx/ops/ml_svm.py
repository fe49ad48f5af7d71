"""SVMRegressor and SVMClassifier of ai.onnx.ml lowered to IR, as onnxruntime computes
them (``svmclassifier.cc``, ``svmregressor.cc``, ``svm_common``).

The kernel of every row with every support vector is one MatMul (LINEAR, POLY, SIGMOID)
or one broadcast difference (RBF); a classifier's one-vs-one decision values are one
more MatMul with a [vectors, pairs] matrix gathering each pair's coefficients, its votes
a MatMul of the decisions with [pairs, classes] one-hot rows. Platt probabilities
(``prob_a``/``prob_b``) go through libsvm's iterative pairwise coupling, a Loop-5 of at
most 100 sweeps in which each row stops where onnxruntime's would.
"""

from __future__ import annotations

import numpy as np

from ..context import NodeContext, Value, onnx_op
from ._common import BOOL, F32, I64, binary, convert, i64, reshape
from ._ml import (
    ML,
    argmax_first,
    class_labels,
    f32_rows,
    floats,
    ints,
    label_const,
    logistic,
    reduce,
    second_class,
    take,
    text,
    transform,
    unary,
    width,
)


def _kernel(ctx: NodeContext, x: Value, vectors: np.ndarray, kind: str,
            params: np.ndarray) -> Value:
    """The kernel of each row of ``x`` [N, F] with each of ``vectors`` [V, F]: [N, V]."""
    gamma, coef0, degree = [*(float(p) for p in params), 0.0, 0.0, 0.0][:3]
    const = lambda v: ctx.const(np.asarray(v, np.float32), F32)  # noqa: E731
    if kind == "RBF":
        diff = binary(ctx, "Subtract", ctx.op("Unsqueeze", "opset1", [x, i64(ctx, [1])])[0],
                      const(vectors[None]))
        distance = reduce(ctx, "ReduceSum", binary(ctx, "Multiply", diff, diff), -1, False)
        return unary(ctx, "Exp", binary(ctx, "Multiply", distance, const(-gamma)))
    dot = ctx.op("MatMul", "opset1", [x, const(vectors.T.copy())],
                  {"transpose_a": False, "transpose_b": False})[0]
    if kind == "LINEAR":
        return dot
    scaled = binary(ctx, "Add", binary(ctx, "Multiply", dot, const(gamma)), const(coef0))
    if kind == "POLY":
        return binary(ctx, "Power", scaled, const(degree))
    if kind == "SIGMOID":
        return unary(ctx, "Tanh", scaled)
    raise ctx.error(f"unknown kernel_type {kind!r}")


def _params(ctx: NodeContext) -> np.ndarray:
    """``kernel_params``: gamma, coef0, degree (zeros where not given)."""
    given = floats(ctx, "kernel_params")
    return np.zeros(3, np.float32) if given is None else given


def _vectors(ctx: NodeContext, count: int, features: int) -> np.ndarray:
    support = floats(ctx, "support_vectors")
    if support is None or support.size != count * features:
        raise ctx.error(f"{0 if support is None else support.size} support vector values "
                        f"for {count} vectors of {features} features")
    return support.reshape(count, features)


@onnx_op("SVMRegressor", 1, domain=ML)
def svm_regressor(ctx: NodeContext) -> list[Value | None]:
    x = f32_rows(ctx, ctx.required_input(0))
    features = width(ctx, x)
    coefficients = floats(ctx, "coefficients")
    rho = floats(ctx, "rho")
    if coefficients is None or rho is None or not rho.size:
        raise ctx.error("coefficients and rho must be given")
    supports = int(ctx.attr("n_supports", 0))
    const = lambda v: ctx.const(np.asarray(v, np.float32), F32)  # noqa: E731
    if supports > 0:
        kernels = _kernel(ctx, x, _vectors(ctx, supports, features),
                          text(ctx, "kernel_type", "LINEAR"),
                          _params(ctx))
        score = ctx.op("MatMul", "opset1", [kernels, const(coefficients.reshape(-1, 1))],
                        {"transpose_a": False, "transpose_b": False})[0]
    else:
        score = ctx.op("MatMul", "opset1", [x, const(coefficients.reshape(-1, 1))],
                        {"transpose_a": False, "transpose_b": False})[0]
    score = binary(ctx, "Add", score, const(rho[0]))
    if int(ctx.attr("one_class", 0)):
        above = binary(ctx, "Greater", score, const(0.0))
        score = ctx.op("Select", "opset1", [above, const(1.0), const(-1.0)],
                        {"auto_broadcast": "numpy"})[0]
    return [second_class(ctx, score, "none", text(ctx, "post_transform", "NONE"))]


def _pairs(vectors_per_class: np.ndarray, coefficients: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The [V, P] matrix of each one-vs-one pair's coefficients and the [P, C] one-hot
    rows of the pair's first and second class."""
    classes = len(vectors_per_class)
    total = int(vectors_per_class.sum())
    start = np.concatenate([[0], np.cumsum(vectors_per_class)[:-1]])
    coef = coefficients.reshape(classes - 1, total)
    pairs = [(i, j) for i in range(classes - 1) for j in range(i + 1, classes)]
    matrix = np.zeros((total, len(pairs)), np.float32)
    first = np.zeros((len(pairs), classes), np.float32)
    second = np.zeros((len(pairs), classes), np.float32)
    for p, (i, j) in enumerate(pairs):
        si, sj = slice(start[i], start[i] + vectors_per_class[i]), \
            slice(start[j], start[j] + vectors_per_class[j])
        matrix[si, p] = coef[j - 1, si]
        matrix[sj, p] = coef[i, sj]
        first[p, i] = 1
        second[p, j] = 1
    return matrix, first, second


def _coupling(ctx: NodeContext, decisions: Value, prob_a: np.ndarray, prob_b: np.ndarray,
              classes: int) -> Value:
    """Class probabilities [N, C] from the one-vs-one decisions [N, P]: Platt's sigmoid
    per pair, then libsvm's pairwise coupling (``multiclass_probability``: at most 100
    sweeps, each row stopping once its error is below 0.005 / C) as a Loop whose rows
    freeze when they converge and which ends when all have."""
    const = lambda v: ctx.const(np.asarray(v, np.float32), F32)  # noqa: E731
    mm = lambda a, b: ctx.op("MatMul", "opset1", [a, b],  # noqa: E731
                              {"transpose_a": False, "transpose_b": False})[0]
    # r_ij = clip(1 - logistic(d * a + b)) for the pair (i, j), r_ji = 1 - r_ij
    pair = binary(ctx, "Add", binary(ctx, "Multiply", decisions, const(prob_a)),
                  const(prob_b))
    r = logistic(ctx, unary(ctx, "Negative", pair))
    r = ctx.op("Clamp", "opset1", [r], {"min": 1e-7, "max": 1 - 1e-7})[0]
    upper = np.zeros((len(prob_a), classes * classes), np.float32)
    lower = np.zeros_like(upper)
    pairs = [(i, j) for i in range(classes - 1) for j in range(i + 1, classes)]
    for p, (i, j) in enumerate(pairs):
        upper[p, i * classes + j] = 1
        lower[p, j * classes + i] = 1
    flat = binary(ctx, "Add", mm(r, const(upper)),
                  mm(binary(ctx, "Subtract", const(1.0), r), const(lower)))
    rm = reshape(ctx, flat, [-1, classes, classes])  # rm[n, i, j] = r_ij (0 on the diagonal)
    rt = ctx.op("Transpose", "opset1", [rm, i64(ctx, [0, 2, 1])])[0]
    off = unary(ctx, "Negative", binary(ctx, "Multiply", rt, rm))
    diagonal = reduce(ctx, "ReduceSum", binary(ctx, "Multiply", rt, rt), -1, True)
    eye = np.eye(classes, dtype=np.float32)
    q = binary(ctx, "Add", binary(ctx, "Multiply", off, const(1 - eye)),
               binary(ctx, "Multiply", diagonal, const(eye)))  # [N, C, C]

    body_scope = ctx.scope.child(f"pairwise coupling of {ctx.name}")
    b = ctx.for_node(ctx.node, body_scope, ctx.opset, [])
    bconst = lambda v: b.const(np.asarray(v, np.float32), F32)  # noqa: E731
    from ....opset import TensorInfo

    p_param = b.builder.parameter(TensorInfo(F32, (-1, classes)), name="p")
    q_param = b.builder.parameter(q.info, name="q")
    qp = reduce(b, "ReduceSum", binary(b, "Multiply", q_param, b.op(
        "Unsqueeze", "opset1", [p_param, i64(b, [1])])[0]), -1, False)
    pqp = reduce(b, "ReduceSum", binary(b, "Multiply", p_param, qp), -1, True)
    error = reduce(b, "ReduceMax", unary(b, "Abs", binary(b, "Subtract", qp, pqp)), -1, True)
    active = binary(b, "GreaterEqual", error, bconst(0.005 / classes))
    p = p_param  # type: ignore[assignment]
    for i in range(classes):
        qii = reshape(b, b.op("Gather", "opset8", [b.op("Gather", "opset8", [
            q_param, i64(b, [i]), i64(b, 1)], {"batch_dims": 0})[0], i64(b, [i]), i64(b, 2)],
            {"batch_dims": 0})[0], [-1, 1])
        qi = reshape(b, b.op("Gather", "opset8", [q_param, i64(b, [i]), i64(b, 1)],
                              {"batch_dims": 0})[0], [-1, classes])
        qp_i = b.op("Gather", "opset8", [qp, i64(b, [i]), i64(b, 1)], {"batch_dims": 0})[0]
        diff = binary(b, "Divide", binary(b, "Subtract", pqp, qp_i), qii)
        p = binary(b, "Add", p, binary(b, "Multiply", diff, bconst(np.eye(classes)[i])))  # type: ignore[arg-type, assignment]
        grow = binary(b, "Add", bconst(1.0), diff)
        pqp = binary(b, "Divide", binary(b, "Add", pqp, binary(b, "Multiply", diff, binary(
            b, "Add", binary(b, "Multiply", diff, qii), binary(b, "Multiply", bconst(2.0),
                                                               qp_i)))),
                     binary(b, "Multiply", grow, grow))
        qp = binary(b, "Divide", binary(b, "Add", qp, binary(b, "Multiply", diff, qi)), grow)
        p = binary(b, "Divide", p, grow)  # type: ignore[arg-type, assignment]
    p_next = b.op("Select", "opset1", [active, p, p_param], {"auto_broadcast": "numpy"},  # type: ignore[list-item]
                   outputs=[p_param.info])[0]
    more = reduce(b, "ReduceLogicalOr", reshape(b, active, [-1]), 0, False)
    p_result = b.builder.result(p_next)
    more_result = b.builder.result(more)

    start = binary(ctx, "Multiply", binary(ctx, "Multiply", decisions, const(0.0)), const(0.0))
    start = binary(ctx, "Add", reduce(ctx, "ReduceSum", start, -1, True),
                   const(np.full(classes, 1.0 / classes)))  # 1/C, as wide as the batch
    loop = ctx.builder.loop(body_scope.graph, ctx.node.name or None)
    loop.trip_count(ctx.const(np.array([100], np.int64), I64))
    loop.condition(ctx.const(np.array([True]), BOOL))
    loop.carried(start, p_param, p_result)
    loop.invariant(q, q_param)
    loop.execution_condition(more_result)
    loop.output(p_result, TensorInfo(F32, (-1, classes)))
    _, values = loop.build()
    return values[0]


@onnx_op("SVMClassifier", 1, domain=ML)
def svm_classifier(ctx: NodeContext) -> list[Value | None]:
    x = f32_rows(ctx, ctx.required_input(0))
    features = width(ctx, x)
    labels = class_labels(ctx)
    classes = len(labels) or 1
    coefficients, rho = floats(ctx, "coefficients"), floats(ctx, "rho")
    if coefficients is None or not coefficients.size or rho is None or not rho.size:
        raise ctx.error("coefficients and rho must be given")
    prob_a, prob_b = floats(ctx, "prob_a"), floats(ctx, "prob_b")
    platt = prob_a is not None and prob_a.size > 0
    if platt and (prob_b is None or prob_b.size != prob_a.size):  # type: ignore[union-attr]
        raise ctx.error("prob_a and prob_b must have the same length")
    post = text(ctx, "post_transform", "NONE")
    per_class = ints(ctx, "vectors_per_class")
    const = lambda v: ctx.const(np.asarray(v, np.float32), F32)  # noqa: E731
    if per_class is None or int(per_class.sum()) == 0:  # liblinear: one row per class
        if coefficients.size % classes:
            raise ctx.error(f"{coefficients.size} coefficients for {classes} classes")
        weights = coefficients.reshape(classes, -1)
        if weights.shape[1] != features:
            raise ctx.error(f"coefficients of {weights.shape[1]} features for an input of "
                            f"{features}")
        scores = binary(ctx, "Add", ctx.op("MatMul", "opset1", [x, const(weights.T.copy())],
                                             {"transpose_a": False, "transpose_b": False})[0],
                        const(rho[0]))
        best = argmax_first(ctx, scores, classes)
        if classes == 2:
            top = reduce(ctx, "ReduceMax", scores, -1, False)
            cut = 0.5 if bool((coefficients >= 0).all()) else 0.0
            strict = "GreaterEqual" if cut else "Greater"
            best = ctx.op("Select", "opset1", [binary(ctx, strict, top, const(cut)),
                                                 i64(ctx, 1), best],
                           {"auto_broadcast": "numpy"})[0]
        return [take(ctx, label_const(ctx, labels), best), transform(ctx, scores, post)]
    if len(per_class) != classes:
        raise ctx.error(f"vectors_per_class has {len(per_class)} entries for {classes} "
                        "classes")
    total = int(per_class.sum())
    if coefficients.size != (classes - 1) * total:
        raise ctx.error(f"{coefficients.size} coefficients for {classes} classes of {total} "
                        "support vectors")
    kernels = _kernel(ctx, x, _vectors(ctx, total, features),
                      text(ctx, "kernel_type", "LINEAR"),
                      _params(ctx))
    matrix, first, second = _pairs(per_class, coefficients)
    if rho.size < matrix.shape[1]:
        raise ctx.error(f"rho has {rho.size} values for {matrix.shape[1]} class pairs")
    decisions = binary(ctx, "Add", ctx.op("MatMul", "opset1", [kernels, const(matrix)],
                                            {"transpose_a": False, "transpose_b": False})[0],
                       const(rho[:matrix.shape[1]]))
    wins = convert(ctx, binary(ctx, "Greater", decisions, const(0.0)), F32)
    losses = binary(ctx, "Subtract", const(1.0), wins)
    votes = binary(ctx, "Add", ctx.op("MatMul", "opset1", [wins, const(first)],
                                       {"transpose_a": False, "transpose_b": False})[0],
                   ctx.op("MatMul", "opset1", [losses, const(second)],
                           {"transpose_a": False, "transpose_b": False})[0])
    label = take(ctx, label_const(ctx, labels), argmax_first(ctx, votes, classes))
    if platt:
        if prob_a.size != matrix.shape[1]:  # type: ignore[union-attr]
            raise ctx.error(f"prob_a has {prob_a.size} values for {matrix.shape[1]} class "  # type: ignore[union-attr]
                            "pairs")
        probabilities = _coupling(ctx, decisions, prob_a, prob_b, classes)  # type: ignore[arg-type]
        return [label, transform(ctx, probabilities, post)]
    if classes == 2:  # one decision, written as two columns
        decision = reshape(ctx, decisions, [-1, 1])
        if post == "NONE":
            return [label, second_class(ctx, decision, "negate", post)]
        if post == "LOGISTIC":  # onnxruntime: [1 - logistic(s), logistic(s)]
            return [label, second_class(ctx, logistic(ctx, decision), "complement", "NONE")]
        return [label, second_class(ctx, decision, "complement", post)]
    return [label, transform(ctx, decisions, post)]

