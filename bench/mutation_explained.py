"""Surviving mutants of bench/mutation.py that no test can kill, and why. Keyed by mutmut's
mutant name; ``line`` is a piece of the mutant's changed line, so a note whose mutant
changed (the code moved on) no longer applies and shows as unexplained."""

from __future__ import annotations

from typing import NamedTuple


class Note(NamedTuple):
    line: str  # a piece of the mutant's changed line
    why: str  # why no test can kill it


_STRIDE_ZERO = ("equivalent: it differs only for stride 0, and a sliced input with stride 0 "
                "is refused when the loop is compiled (control_flow._compile_iteration), so "
                "no SlicedInput has stride 0")
_STACK_SHORTCUT = ("equivalent: stack's single np.stack is a shortcut taken when it provably "
                   "equals Unsqueeze-then-Concat; this mutant only makes the shortcut be "
                   "skipped (or tried and abandoned) for some axes, and the unfused path "
                   "gives the identical array (test_stack_is_unsqueeze_then_concat checks "
                   "both paths by hand on every axis pair)")
_IT = "irtool.runtime.iteration."
_SI = "irtool.passes.slice_inputs."
_LG = "irtool.runtime.codegen.loops."
_OCF = "irtool.frontends.onnx.control_flow."
_COUNTER_INDEX = ("equivalent: this counter value is only the index the Gather kernel gets on "
                  "iterations past X's length; a Gather's output has the data's element "
                  "type, and the number i (below the iteration cap of 10**6) is the same "
                  "as int64 as in the iteration's i32/i64 type")
_ONE_ELEMENT = ("equivalent: the axes constant has exactly one element (checked just "
                "before), and reshape(1) or reshape(-2) of a one-element array gives the "
                "same [x] as reshape(-1)")
_NO_STEP = ("equivalent: this branch is for an exception raised on a line of the generated "
            "loop that belongs to no step; those lines (reads of the sliced parts from a "
            "list of at least `lim` parts, list appends, plain assignments, the counter "
            "bookkeeping, the condition test of an ndarray) raise nothing on IR that passes "
            "validate, and errors raised by steps take the step >= 0 branch")
_CF = "irtool.runtime.control_flow."
_TRUTH = ("equivalent: a boolean read as int(item) (0 or 1) instead of bool(item): every "
          "caller takes its truth value (bool(cond) in the Loop and If kernels, `if not "
          "cond: break` in the generated loop, `cond and ...` in _run), which is the same")
_RESULT_INPUT = ("equivalent: a body Result always has its one input (the IR builder and "
                 "reader give it one; validate's structure rules refuse a Result without), "
                 "so the guard never takes its else branch")
_SCOPE_OF_BATCHED = ("equivalent: the scope only names the batched plan in its errors; at the "
                     "top level \"\" and None give the same path, and in a body the batched "
                     "plan's run-time errors are caught and the loop runs instead, naming the "
                     "body layer itself (compiling the batched form, which irtool builds from "
                     "IR that passed validate, does not fail)")
_CONSTANT_TRUE = ("equivalent: compile_loop drops a constant-true body condition so the "
                  "generated loop need not check it; this mutant only keeps the check, which "
                  "then passes on every iteration: same values, same errors")

_VCF = "irtool.validation.control_flow."
_REAL_SPECIAL = ("equivalent: mapped.special only takes an entry whose body layer exists and "
                 "is of the right kind (a Result for execution_condition, a Parameter for "
                 "current_iteration; the others are PORT_MAP_UNKNOWN_LAYER / "
                 "PORT_MAP_WRONG_KIND), so this guard is never true and the loop never "
                 "leaves early")
_REMARK = ("message wording only: whether (or which) remark ends the ITERATION_COUNT "
           "message; the code, layer, line and the counts it names are pinned")

_VST = "irtool.validation.structure."
_CYCLE_START = ("not equivalent in general, message only: it changes where the printed cycle "
                "starts (networkx then starts from the first node it visits, not from the "
                "smallest id) or which cycle of the component is printed; the code and the "
                "layer (the smallest id, `first`) are unchanged, and in every cyclic graph "
                "here the smallest id is visited first")

_XW = "irtool.ir.serde.xml_writer.xǁ_BinBuilderǁ"
_SAMPLE = ("equivalent: _sample is only a pre-filter of the .bin's de-duplication: two payloads "
           "are merged only after _same compares all their bytes, and this mutant still "
           "returns a function of the payload's own bytes (a read without the descriptor "
           "goes to the view, which maps the same bytes), so equal payloads still get equal "
           "samples; only the number of full compares changes")
_SAME = ("equivalent: _same still compares every byte of the two payloads (a read without the "
         "descriptor goes to the view, which holds the same bytes as the file slice; a step "
         "of 1 compares overlapping chunks; starting at 1 skips byte 0, which every _sample "
         "already read and found equal)")

_XR = "irtool.ir.serde.xml_reader."
_NONE_IS_FALSE = ("equivalent: lxml's XMLParser reads this option by its truth value, so None "
                  "is False, the value it had")
_LXML_DEFAULT = ("equivalent: the option left out has lxml's default value (no_network=True, "
                 "load_dtd, dtd_validation and huge_tree False), so the parser is the same")
_NO_FETCH = ("equivalent: with resolve_entities=False and load_dtd=False libxml2 loads no "
             "external entity or DTD, so there is nothing for no_network to allow or stop (a "
             "DOCTYPE only the parser can see, with an http:// entity, parses the same either "
             "way and is refused after: test_a_doctype_only_the_parser_can_see_is_refused)")
_BACK_EDGE_KEY = ("equivalent: the end's attribute then also lands in BackEdge.extra, which "
                  "only the writer reads, and it writes it over the same attribute with the "
                  "file's own spelling of the number int() read; every reader reads the same")
_ENTRY_KEY = ("equivalent: the id's attribute then also lands in PortMapEntry.extra, which "
              "only the writer reads, and it writes it over the same attribute with the "
              "file's own spelling of the number int() read (irtool changes the ids only of "
              "entries its builder makes, never of entries read); every reader reads the same")

_LF = "irtool.passes.loop_facts."
_NO_SUCH_TYPE = ("equivalent: element_type() knows none of '', None and 'XXXX' (KeyError for "
                 "each), so a Convert without destination_type is not proven exact either way")
_NO_AXES_INPUT = ("equivalent: a Slice of 4 inputs or fewer has no input 4, so "
                  "input_source(graph, pick, 4) is None and const_of(graph, None) is None, the "
                  "value the else branch gives")
_ONE_ELEMENT_INT = ("equivalent: the value has exactly one element (checked just before), and "
                    "reshape(1) or reshape(-2) of a one-element array gives the same [x] as "
                    "reshape(-1)")

_PF = "irtool.passes.pool_fusion."
_ET_KIND = ("equivalent: a port's precision is an ElementType or None (checked first), and "
            "every ElementType has a kind, so getattr's default is never used")

_RV = "irtool.runtime.variables."
_BOUND_IN_RUN = ("equivalent: the ReadValue, Assign and RandomUniform kernels read and write "
                 "written and draws only inside Variables.run, which binds both before the "
                 "plan runs and puts {} back after")
_DYNAMIC_TYPE = ("equivalent: the variable's declared type is read only by the session's "
                 "_checked_value, which checks the dtype only when the type has one; a "
                 "dynamic port type has none (dtype None), so taking it is the same as "
                 "taking None (any)")

_DC = "irtool.passes.decompression."
_SHADOW_F64 = ("equivalent: a shadow computed in f64 instead of f32 is cast to f32 after each "
               "Subtract or Multiply it feeds; each of them computes one exact operation on "
               "values f32 holds exactly (a product of two of them fits f64's 53 bits), so "
               "rounding once from the exact result gives the same f32")
_COPY = ("equivalent: astype's copy flag only decides whether an array already f32 is copied; "
         "the shadow's values are the same and nothing writes to it")

_CF = "irtool.passes.constant_folding."
_PARAMETER_TAKEN = ("equivalent: a Parameter (for mutant 15 also a control-flow layer, or a "
                    "layer past the limit) then goes into order: evaluate gives None for a "
                    "Parameter (its kernel has no value without a run) and for control flow "
                    "(make_op knows no Loop, TensorIterator or If), and a layer past the "
                    "limit has its inputs unvisited, missing from values; constant_value "
                    "gives None as the original does")
_CONST_NO_INPUTS = ("equivalent: a Const has no inputs, so the loop over its inputs does "
                    "nothing either way and it goes into order the same")

_SQ = "irtool.frontends.onnx.sequences."
_CONST_LAYER = ("equivalent: GraphBuilder.const_value reads only the Value's layer (a Const, "
                "whose one output is the value), never its port or type")
_RESHAPE_NEG = ("equivalent: numpy takes any negative size in reshape for the one to infer, "
                "so reshape(-2) is reshape(-1): the same flat array")
_NESTED_READS = ("equivalent: reads is asked only whether a body input is read exactly once "
                 "(the carried list) and whether a name is read at all (the insert's "
                 "output); a read inside a nested graph counted as 2 or more (or starting "
                 "from 1) makes every count it touches 2 or more, as the original's reads "
                 "(the insert's own and the nested one) do, and a name it counts is in reads "
                 "either way")
_READ_INDEX = ("equivalent: the input index of a read is only asked by deferred_empties, as "
               "k >= 2 (a Loop's carried input) of a reader that is a Loop; a read from a "
               "nested graph (or by a graph output, which has no reader) numbered 1 or -2 "
               "instead of -1 is below 2 all the same")
_GATHER_DEFAULT = ("equivalent: Gather-8's batch_dims defaults to 0 (the spec; irtool's "
                   "kernel and OpenVINO read it so), the value given; an attribute of "
                   "another name is read by neither")
_INFERRED = ("equivalent: without outputs the builder infers the Gather's output type from "
             "its inputs: the shape's integer type, of [len(indices)], the type given")

_VZ = "irtool.passes.vectorize."
_RANK_KNOWN = ("equivalent: _rank uses the batcher only to refuse a value of unknown rank, and "
               "every value of the batched graph has a known rank: a body port of unknown "
               "rank is refused by info() before, and each layer added declares its shape")
_ONLY_AXIS = ("equivalent: Concat-1 and Softmax-1/8 have no attribute but axis, which is set "
              "here")
_LAYER_NAME = ("equivalent: only the name of a layer the rule adds changes (the builder names "
               "it after its type and id); a layer name carries no value, and a model "
               "output's tensor names are kept on ports")
_CASE_OF_LETTERS = ("equivalent: only the case of an attribute value's letters changes; irtool "
                    "reads auto_broadcast and booleans lower-cased (parse_broadcast, attr_bool), "
                    "the validator takes them, and OpenVINO's IR reader does too (measured: "
                    "NUMPY, FALSE, TRUE read as numpy, false, true)")
_FALSE_DEFAULT = ("equivalent: the default of an absent attribute changes to another text that, "
                  "lower-cased, is still not true or 1 (or is numpy), so it still means false "
                  "(numpy)")
_AXES_TYPE = ("equivalent: the new axes Const gets the axes' element type either way: cast to "
              "it here or by GraphBuilder.const (which casts to et's dtype, or, with et None, "
              "takes the type of the array already cast to et's dtype); axes of a type without "
              "a numpy dtype (u1) are refused just before")
_DELETED = ("not run any more: loops() was dead code (nothing called it) and is deleted since "
            "this run")

_ML = "irtool.frontends.onnx.ops.ml_trees."
_CONST_ET = ("equivalent: GraphBuilder.const takes the element type from the array when none "
             "is given, and np.asarray(v, et.dtype) made the array et's")
_CONST_DTYPE = ("equivalent: GraphBuilder.const converts the array to et's dtype when they "
                "differ, which rounds the Python float once, as np.asarray(v, et.dtype) does")
_RESHAPE_DEFAULT = ("equivalent: Reshape-1's special_zero defaults to false (the spec; irtool's "
                    "kernel and OpenVINO read it so), the value given, and the target [-1] "
                    "has no 0 for it to act on either way")

EXPLAINED: dict[str, Note] = {
    _CF + "x__fold__mutmut_16": Note(
        "if len(outs) == 1 or any(slot in exact for slot in ins):",
        "equivalent: every layer a decompression chain goes through (Convert, Subtract, "
        "Multiply, Reshape, Unsqueeze, Squeeze, Transpose) has one output, and fold gives "
        "None for any other, so a step of several outputs is never folded either way"),
    **{_CF + f"x_constant_value__mutmut_{n}": Note(line, _CONST_NO_INPUTS) for n, line in (
        (18, 'if layer.type != "XXConstXX"'), (19, 'if layer.type != "const"'),
        (20, 'if layer.type != "CONST"'),
    )},
    **{_CF + f"x_constant_value__mutmut_{n}": Note(line, _PARAMETER_TAKEN) for n, line in (
        (9, 'if layer.type == "Parameter" and layer.bodies'),
        (11, 'if layer.type == "XXParameterXX"'), (12, 'if layer.type == "parameter"'),
        (13, 'if layer.type == "PARAMETER"'), (15, "return True"),
    )},
    _CF + "x_constant_value__mutmut_33": Note(
        "return True",
        "equivalent: a layer whose input could not be visited then goes into order without "
        "that input's producer, and the evaluation loop finds that source missing from "
        "values and returns None, as the original does at once"),
    _CF + "x_constant_value__mutmut_56": Note(
        "if src is None and src not in values:",
        "equivalent: a layer is in order only after every producer of its inputs is (visit "
        "returns False otherwise, and constant_value gives None before evaluating), so every "
        "source is connected and already in values"),
    _CF + "x_evaluate__mutmut_14": Note(
        "with np.errstate(all=None):",
        "equivalent: numpy's error state only decides whether an overflow or a division by "
        "zero warns; the values folded are the same"),
    _CF + "x_fold_step__mutmut_32": Note(
        "value.flags.writeable = None",
        "equivalent: numpy reads the flag by its truth value, so None makes the array "
        "read-only as False does"),
    _CF + "xǁFoldDecompressionǁapply__mutmut_6": Note(
        "steps_on_constants=None",
        "equivalent: _fold reads steps_on_constants only for its truth value, and None is "
        "false like False"),
    **{_SQ + f"x_name_uses__mutmut_{n}": Note(line, _READ_INDEX) for n, line in (
        (19, "append((node, +1))"), (20, "append((node, -2))"),
        (26, "append((None, +1))"), (27, "append((None, -2))"),
    )},
    **{_VZ + f"x__{fn}__mutmut_{n}": Note(line, _RANK_KNOWN) for fn, n, line in (
        ("concat", 5, "rank = _rank(None, inputs[0])"),
        ("reduce", 9, "_rank(None, inputs[0])"), ("squeeze", 11, "_rank(None, inputs[0])"),
        ("transpose", 2, "rank = _rank(None, inputs[0])"),
    )},
    _VZ + "x__concat__mutmut_9": Note(
        "rank = _rank(b, inputs[1])",
        "equivalent on IR that validate passes: a Concat's inputs have one rank, and here "
        "every one is a per-iteration value (checked just before), so input 1 gives the "
        "rank input 0 does"),
    _VZ + "x__concat__mutmut_28": Note("dict(axis=str(axis)))", _ONLY_AXIS),
    _VZ + "x__softmax__mutmut_5": Note("attrs = dict(axis=str(", _ONLY_AXIS),
    _VZ + "x__reshape__mutmut_13": Note(
        "(b.trip_dim, *out), None)]",
        "equivalent: only the new Reshape layer's name changes (the builder names it); a "
        "layer name carries no value, and a model output's tensor names are kept on ports"),
    **{_VZ + f"x_loops__mutmut_{n}": Note(line, _DELETED) for n, line in (
        (1, 'if layer.type not in ("Loop", "TensorIterator")'),
        (2, '"XXLoopXX"'), (3, '("loop", "TensorIterator")'), (4, '("LOOP", "TensorIterator")'),
        (5, '"XXTensorIteratorXX"'), (6, '"tensoriterator"'), (7, '"TENSORITERATOR"'),
    )},
    # The batching rules (tests/passes/test_vectorize_rules.py kills the rest).
    **{_VZ + f"x__{fn}__mutmut_{n}": Note(line, _RANK_KNOWN) for fn, n, line in (
        ("elementwise", 21, "rank = _rank(None, v)"), ("gather", 10, "rank = _rank(None, data)"),
        ("matmul", 3, "_rank(None, a), _rank(b, c)"), ("matmul", 7, "_rank(b, a), _rank(None, c)"),
        ("rank", 3, "raise b.refuse(None)"),
    )},
    **{_VZ + f"x__{fn}__mutmut_{n}": Note(line, _LAYER_NAME) for fn, n, line in (
        ("elementwise", 31, "None)"), ("gather", 59, "None)]"), ("gather", 121, "None)]"),
    )},
    **{_VZ + f"x__{fn}__mutmut_{n}": Note(line, _CASE_OF_LETTERS) for fn, n, line in (
        ("elementwise", 54, 'attrs["auto_broadcast"] = "NUMPY"'),
        ("matmul", 66, 'attrs["transpose_a"] = "FALSE"'),
        ("matmul", 91, 'transpose_a="FALSE"'), ("matmul", 95, 'transpose_b="FALSE" if ta'),
        ("matmul", 97, 'else "TRUE")'),
    )},
    **{_VZ + f"x__{fn}__mutmut_{n}": Note(line, _FALSE_DEFAULT) for fn, n, line in (
        ("elementwise", 11, '"auto_broadcast", "NUMPY").lower()'),
        ("matmul", 19, '"transpose_a", "XXfalseXX").lower()'),
        ("matmul", 20, '"transpose_a", "FALSE").lower()'),
        ("matmul", 33, '"transpose_b", "XXfalseXX").lower()'),
        ("matmul", 34, '"transpose_b", "FALSE").lower()'),
    )},
    _VZ + "x__const_ints__mutmut_3": Note(
        "if (not v.batched) or True else None",
        "equivalent: no caller passes a per-iteration value (_with_axes and _transpose refuse "
        "one before, _gather refuses a per-iteration axis before), so the condition is "
        "always true already"),
    _VZ + "x__const_ints__mutmut_9": Note(
        'not in "XXiuXX"',
        "equivalent: a numpy dtype's kind is one of the letters biufcmMOSUV, never X, so a "
        'kind is in "XXiuXX" exactly when it is in "iu"'),
    _VZ + "x__const_ints__mutmut_15": Note(
        "values.reshape(-2)",
        "equivalent: numpy's reshape takes any negative size as the one unknown dimension, so "
        "reshape(-2) flattens as reshape(-1) does"),
    _VZ + "x__gather__mutmut_81": Note(
        'attrs = dict(batch_dims="1")',
        "equivalent: Gather-7/8 have no attribute but batch_dims, which is set here (Gather-1, "
        "which has none, is refused just before)"),
    _VZ + "x__gather__mutmut_96": Note(
        "assert info.shape is not None or data.value.shape is not None",
        "equivalent: both shapes are always known (batched_info refuses a port of unknown "
        "dims, and every value of the batched graph declares its shape), so the assert holds "
        "either way"),
    **{_VZ + f"x__with_axes__mutmut_{n}": Note(line, _AXES_TYPE) for n, line in (
        (29, ".reshape(inputs[1].value.shape), None)"), (31, ".reshape(inputs[1].value.shape), )"),
        (33, "np.array(axes).astype(None)"),
    )},
    _VZ + "x__with_axes__mutmut_41": Note(
        "*[v.value for v in inputs[3:]]",
        "equivalent: the ops with axes rules (Reduce*, Squeeze, Unsqueeze) take at most two "
        "inputs, so inputs[2:] is empty as inputs[3:] is"),
    **{_SQ + f"x_deferred_empties__mutmut_{n}": Note(line, (
        "equivalent: reads is only taken for its truth value before it is read (if reads "
        "and ...), and None is false like []")) for n, line in (
        (15, "uses.get(node.output[0], None)"), (17, "uses.get(node.output[0], )"),
    )},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, _CONST_ET) for n, line in (
        (4, "ctx.const(np.asarray(v, et.dtype), None)"),
        (6, "ctx.const(np.asarray(v, et.dtype), )"),
    )},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, _CONST_DTYPE) for n, line in (
        (8, "ctx.const(np.asarray(v, None), et)"), (10, "ctx.const(np.asarray(v, ), et)"),
    )},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, _GATHER_DEFAULT)
       for n, line in (
        (44, "i64(ctx, 1)], None)[0]"), (48, "i64(ctx, 1)], )[0]"),
        (64, '{"XXbatch_dimsXX": 0}'), (65, '{"BATCH_DIMS": 0}'),
        (72, "i64(ctx, 1)], None)[0]"), (76, "i64(ctx, 1)], )[0]"),
        (92, '{"XXbatch_dimsXX": 0}'), (93, '{"BATCH_DIMS": 0}'),
        (182, "i64(ctx, 1)], None)[0]"), (186, "i64(ctx, 1)], )[0]"),
        (202, '{"XXbatch_dimsXX": 0}'), (203, '{"BATCH_DIMS": 0}'),
    )},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, _RESHAPE_DEFAULT)
       for n, line in (
        (267, "i64(ctx, [-1])], None)[0]"), (271, "i64(ctx, [-1])], )[0]"),
        (283, '{"XXspecial_zeroXX": False}'), (284, '{"SPECIAL_ZERO": False}'),
        (285, '{"special_zero": True}'),
    )},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, (
        "equivalent: in this branch no leaf weighs class 1 (has1 is false), so s1 is "
        "replaced by the constant 0 column a few lines on (if not has1), and what it held "
        "here is never read (onnxruntime too leaves class 1's column 0, base value or not)"))
       for n, line in ((140, "s1 = None"), (152, 's1 = binary(ctx, "Add", s1, const(None))'))},
    **{_ML + f"x__binary_classifier__mutmut_{n}": Note(line, (
        "not equivalent, and not pinned: it refuses, besides the original's case, a "
        "classifier whose leaves weigh no class, with one base value and a PROBIT transform, "
        "which the original converts to one score column; there onnxruntime writes one of "
        "the two columns and leaves the other uninitialised (4.6e-41 seen), so no reference "
        "says what that converts to")) for n, line in (
        (349, 'post != "XXPROBITXX"'), (350, 'post != "probit"'),
    )},
    **{_ML + f"x__forest_v3__mutmut_{n}": Note(line, (
        "equivalent: nodes_modes is a list of MODES indices (Python ints), which numpy makes "
        "int64 without being told; an empty list (no nodes, no trees) is float64 but read "
        "only by comparisons and the I64 Const, which converts")) for n, line in (
        (45, "dtype=None)"), (47, "for m in modes_text], )"),
    )},
    **{_ML + f"x__forest_v3__mutmut_{n}": Note(line, (
        "equivalent: a float list attribute becomes float64 without being told, and a "
        "*_as_tensor attribute (double; float or float16 widen exactly) keeps values that "
        "float64 holds exactly; thresholds are only read through astype(et.dtype), and "
        "weights are only stored into the float64 weight table, so every value is the "
        "same")) for n, line in (
        (54, 'floats(ctx, "nodes_values", None)'), (57, 'floats(ctx, "nodes_values", )'),
        (167, 'f"{prefix}_weights", None)'), (170, 'f"{prefix}_weights", )'),
    )},
    **{_ML + f"x__forest_v{v}__mutmut_{n}": Note(line, (
        "equivalent: the table then holds 0.0/1.0 instead of False/True, and every reader "
        "takes its truth value (any(), all(), np.where) or makes it a BOOL Const, which "
        "converts 0.0/1.0 to False/True (v5's table never reaches the classifier's boolean "
        "indexing)")) for v, n, line in (
        (3, 103, "np.zeros(count, None)"), (3, 105, "np.zeros(count, )"),
        (5, 143, "np.zeros(count, None)"), (5, 145, "np.zeros(count, )"),
        (5, 207, "np.zeros((count, targets), None)"), (5, 209, "np.zeros((count, targets), )"),
    )},
    **{_ML + f"x__forest_v{v}__mutmut_{n}": Note(line, (
        "equivalent: np.zeros makes float64 when no dtype is given, the dtype named"))
       for v, n, line in (
        (3, 143, "np.zeros((count, targets), None)"), (3, 145, "np.zeros((count, targets), )"),
        (5, 202, "np.zeros((count, targets), None)"), (5, 204, "np.zeros((count, targets), )"),
    )},
    **{_ML + f"x__forest_v{v}__mutmut_{n}": Note(line, (
        "equivalent: feature ids and roots are small integers, exact as float64 (or int64 "
        "from a list of Python ints; no roots: an empty array no loop reads); they are read "
        "through I64 Consts (i64() and the feature table), which convert, and through "
        "comparisons and len")) for v, n, line in (
        (3, 249, "features.astype(None)"), (3, 251, "np.asarray(roots, None)"),
        (3, 253, "np.asarray(roots, )"), (5, 256, "np.zeros(leaves, None)"),
        (5, 258, "np.zeros(leaves, )"),
    )},
    **{_ML + f"x__forest_v5__mutmut_{n}": Note(line, (
        "equivalent: the tensor attribute keeps its own type (nodes_splits, leaf_weights, "
        "membership_values: float, double or float16; nodes_modes: uint8), whose values "
        "float64/int64 hold exactly: splits and modes are concatenated with float64/int64 "
        "arrays of the leaves (the result is float64/int64 either way), weights are stored "
        "into the float64 table, members are read by float() and isnan, and the modes' "
        "range checks compare the same numbers")) for n, line in (
        (55, "np.asarray(splits, None)"), (57, "np.asarray(splits, )"),
        (60, "np.asarray(modes, None)"), (62, "np.asarray(modes, )"),
        (65, "np.asarray(leaf_weights, None)"), (67, "np.asarray(leaf_weights, )"),
        (164, "np.asarray(member_values, None)"), (166, "np.asarray(member_values, )"),
    )},
    _ML + "x__forest_v5__mutmut_151": Note(
        "members: list[list[float]] = None",
        "equivalent: members is only read for a BRANCH_MEMBER node, and then the "
        "membership branch has assigned it"),
    _ML + "x__forest_v5__mutmut_221": Note(
        "weights[inner + j, k] = w",
        "equivalent: each leaf j has one target and one weight, so its row inner + j is "
        "written once, from 0: = and += store the same"),
    **{_ML + f"x__aggregate__mutmut_{n}": Note(line, _CONST_ET) for n, line in (
        (37, "ctx.const(weights.astype(et.dtype), None)"),
        (39, "ctx.const(weights.astype(et.dtype), )"),
        (106, "ctx.const(np.asarray(forest.trees, et.dtype), None)"),
        (108, "ctx.const(np.asarray(forest.trees, et.dtype), )"),
        (153, "ctx.const(np.asarray(0, et.dtype), None)"),
        (155, "ctx.const(np.asarray(0, et.dtype), )"),
    )},
    **{_ML + f"x__aggregate__mutmut_{n}": Note(line, (
        "equivalent: has_weight is a bool array, so the Const is BOOL without being told"))
       for n, line in ((64, "ctx.const(forest.has_weight, None)"),
                       (66, "ctx.const(forest.has_weight, )"))},
    **{_ML + f"x__aggregate__mutmut_{n}": Note(line, _CONST_DTYPE) for n, line in (
        (40, "weights.astype(None)"), (110, "np.asarray(forest.trees, None)"),
        (112, "np.asarray(forest.trees, )"), (157, "np.asarray(0, None)"),
        (159, "np.asarray(0, )"),
    )},
    **{_ML + f"x__aggregate__mutmut_{n}": Note(line, (
        "equivalent: the has tensor is then built where has_all holds too (trees, one tree "
        "for mutant 5, whose leaves weigh every target), and there it is true everywhere, "
        "so each reader passes "
        "the score unchanged: the Selects of _aggregate, _regress and the binary "
        "classifier's class 0 take the score, the classifier's LogicalOr stays true, and "
        "argmax_first's Select and LogicalAnd keep every column")) for n, line in (
        (2, "has_all = None"), (5, "has_all = forest.trees > 1 and bool("), (6, "None)"),
    )},
    _ML + "x__regress__mutmut_37": Note(
        "base = np.zeros(1) if base is None else base",
        "equivalent: one 0 base value adds nothing: with one target origin is 0.0 and no "
        "Add is made; with several, one value is not one per target and is not added"),
    **{_ML + f"x__regress__mutmut_{n}": Note(line, _CONST_ET) for n, line in (
        (42, "ctx.const(np.asarray(v, et.dtype), None)"),
        (44, "ctx.const(np.asarray(v, et.dtype), )"),
    )},
    **{_ML + f"x__regress__mutmut_{n}": Note(line, _CONST_DTYPE) for n, line in (
        (46, "ctx.const(np.asarray(v, None), et)"), (48, "ctx.const(np.asarray(v, ), et)"),
    )},
    **{_ML + f"x__regress__mutmut_{n}": Note(line, (
        "equivalent: second_class compares how only with \"complement\" and \"negate\"; "
        "any other value takes the \"none\" path (the score itself, or PROBIT of it)"))
       for n, line in ((75, "second_class(ctx, score, None, post)"),
                       (81, '"XXnoneXX"'), (82, '"NONE"'))},
    **{_ML + f"x__forest_v3__mutmut_{n}": Note(line, (
        "equivalent: how is only compared with \"MIN\" and \"MAX\" (any other value sums "
        "a leaf's weights of one target); the regressor always passes its aggregate, and the "
        "classifier, which takes the default, sums either way")) for n, line in (
        (1, 'how: str = "XXSUMXX"'), (2, 'how: str = "sum"'),
    )},
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, (
        "equivalent: every table already has the element type named, so GraphBuilder.const "
        "takes the same one from the array: feature ids, modes and children are int64 "
        "(_forest_v3 casts them; _forest_v5 concatenates ints()' int64 with int64 arrays), "
        "missing-value tracks bool, thresholds and member sets cast to et's dtype just "
        "before; at the roots pick slices those arrays, and below them it ignores the type"))
       for n, line in (
        (19, "ctx.const(np.asarray(a), None)"), (21, "ctx.const(np.asarray(a), )"),
        (25, "table(forest.feature, None)"), (27, "table(forest.feature, )"),
        (30, "table(forest.threshold.astype(et.dtype), None)"),
        (32, "table(forest.threshold.astype(et.dtype), )"),
        (36, "table(forest.true_next, None), table"), (38, "table(forest.true_next, ), table"),
        (40, "table(forest.false_next, None)"), (42, "table(forest.false_next, )"),
        (51, "table(forest.mode, None)"), (53, "table(forest.mode, )"),
        (60, "table(forest.missing_true, None)"), (62, "table(forest.missing_true, )"),
        (83, "member_c = table(matrix, None)"), (85, "member_c = table(matrix, )"),
        (117, "table(forest.threshold[roots].astype(et.dtype), None)"),
        (119, "table(forest.threshold[roots].astype(et.dtype), )"),
        (124, "table(a[roots], None)"), (126, "table(a[roots], )"),
        (196, "pick(member_c, matrix, None)"), (295, "pick(mode_c, forest.mode, None)"),
        (346, "pick(missing_c, forest.missing_true, None)"),
        (372, "pick(true_c, forest.true_next, None)"),
        (378, "pick(false_c, forest.false_next, None)"),
    )},
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, (
        "equivalent: the float64 array is converted to et's dtype by the table's Const "
        "(GraphBuilder.const casts to the type named), which rounds each value once, as "
        "astype(et.dtype) does")) for n, line in (
        (33, "table(forest.threshold.astype(None), et)"),
        (80, "matrix = matrix.astype(None)"),
        (120, "table(forest.threshold[roots].astype(None), et)"),
    )},
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, (
        "equivalent: with one branch mode the test is ANDed with mode == that mode, which "
        "is false only for a (row, tree) pair already on its leaf (every other node has "
        "that mode), and a leaf's true and false child are both the leaf itself")) for n, line in (
        (49, "if (len(branch_modes) > 1) or True else None"),
        (54, "if len(branch_modes) >= 1 else None"),
    )},
    _ML + "x__leaves__mutmut_58": Note(
        "if (forest.missing_true.any()) or True else None",
        "equivalent: without a true missing-value track the table is all false, so the "
        "missing term (IsNaN AND the track) is false and ORs nothing into go_true; the IsNaN "
        "it needs is then made as nan_sensitive turns true"),
    _ML + "x__leaves__mutmut_63": Note(
        'member_c = matrix = ""',
        "equivalent: member_c and matrix are read only for a BRANCH_MEMBER node (m == "
        "MEMBER in the level), and then the membership branch has assigned both"),
    _ML + "x__leaves__mutmut_70": Note(
        "size = max(2, max(len(m) for m in forest.members))",
        "equivalent: the sets only get more NaN padding columns, and Equal(x, NaN) is false "
        "for every x, so ReduceLogicalOr over a row of the set is unchanged"),
    _ML + "x__leaves__mutmut_74": Note(
        "np.full((len(forest.mode), size), None)",
        "equivalent: the padding is None in an object array, which astype(et.dtype) just "
        "after turns into NaN (et is f32 or f64: _compute_type), as np.nan is"),
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, (
        "equivalent: the IsNaN is then made on every level, but it is read only where "
        "missing_c is set or a mode is GTE/GT, the original condition; elsewhere the layer "
        "has no reader and changes no value")) for n, line in (
        (171, "bool({2, 3} | set(branch_modes))"),
        (177, 'if (nan_sensitive) or True else None'),
    )},
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, _GATHER_DEFAULT) for n, line in (
        (92, "i64(ctx, 1)], None)[0]"), (96, "i64(ctx, 1)], )[0]"),
        (111, '{"XXbatch_dimsXX": 0}'), (112, '{"BATCH_DIMS": 0}'),
    )},
    **{_ML + f"x__leaves__mutmut_{n}": Note(line, (
        "equivalent: Broadcast-3's mode defaults to numpy (the spec; irtool's Broadcast "
        "reads it so, lower-cased, and OpenVINO too: test_tree_regressor_trees_of_one_leaf "
        "runs this depth-0 Broadcast on OpenVINO), the value given; an attribute of another "
        "name is read by neither")) for n, line in (
        (408, "None)[0]"), (412, ")[0]"), (422, '{"XXmodeXX": "numpy"}'),
        (423, '{"MODE": "numpy"}'), (425, '{"mode": "NUMPY"}'),
    )},
    **{_SQ + f"x_element_types__mutmut_{n}": Note(line, (
        "not equivalent, and not pinned: it differs only where a tensor inserted into a "
        "list has no type at all in the model after ONNX shape inference (then the original "
        "leaves the list's elements unknown, and this mutant takes the other inserts' "
        "type); graph inputs, initializers and every op output shape inference types have "
        "one, and no model of the tests (nor one onnxruntime runs) inserts an untyped "
        "tensor")) for n, line in (
        (127, "unknown.add(None)"), (139, "None if (root in unknown) and False else"),
    )},
    _SQ + "x_element_types__mutmut_25": Note(
        "empties.extend(node.output[:2])",
        "equivalent: only a SequenceEmpty's first output is ever looked up "
        "(ctx.sequence_element(node.output[0])); a second output, which ONNX's schema does "
        "not have, is refused when the node converts (\"output 'e2' was not produced\") "
        "whatever element_types says of it"),
    _SQ + "x_append_form__mutmut_19": Note(
        'if a.name == "new_axis"), None)',
        "equivalent: new_axis is read only for its truth value (if new_axis: continue), "
        "and None is false like 0"),
    _SQ + "x_append_form__mutmut_58": Note(
        "if len(concat_axes) > 2",
        "equivalent: each reader adds one axis at most to concat_axes, so two axes mean two "
        "readers, which the second clause (concat_axes and len(reads) > 1) refuses all the "
        "same"),
    _SQ + "x_appended_carries__mutmut_37": Note(
        "for i in range(len(node.input) + 2):",
        "equivalent: the extra indices are past the Loop's carried values; on a body with "
        "2 + carried inputs the loop breaks there, and where a body has more, "
        "translate_loop refuses it before asking, and deferred_empties asks only about the "
        "Loop's own inputs (k - 2 < carried)"),
    **{_SQ + f"x_appended_carries__mutmut_{n}": Note(line, _NESTED_READS) for n, line in (
        (32, "reads[name] = reads.get(name, 1) + 1"),
        (33, "reads[name] = reads.get(name, 0) + 2"),
    )},
    _SQ + "x__joined__mutmut_3": Note(
        "for v in items[2:]:",
        "equivalent: the union only declares the stacked tensor's type, of items whose "
        "element types are one and whose static shapes agree (_same_shapes refuses others); "
        "a run in which item 1's shape differs from the others' fails at the stacking "
        "Concat either way, and in every other run the type declared without it fits every "
        "value the stacking computes"),
    **{_SQ + f"x__pick__mutmut_{n}": Note(line, _GATHER_DEFAULT) for n, line in (
        (4, "None, outputs=[TensorInfo(shape.element_type,"),
        (9, "outputs=[TensorInfo(shape.element_type,"),
        (25, '{"XXbatch_dimsXX": 0}'), (26, '{"BATCH_DIMS": 0}'),
    )},
    **{_SQ + f"x__pick__mutmut_{n}": Note(line, _INFERRED) for n, line in (
        (5, '{"batch_dims": 0}, outputs=None)[0]'), (10, '{"batch_dims": 0}, )[0]'),
    )},
    _SQ + "x__pick__mutmut_29": Note(
        "None)])[0]",
        "equivalent in values: the Gather's output is declared of unknown shape instead of "
        "[len(indices)]; the Multiply and Concat reading it declare their own outputs, and "
        "irtool's runtime and OpenVINO compute the same [len(indices)] dims"),
    **{_SQ + f"x__uniform_value__mutmut_{n}": Note(line, _CONST_LAYER) for n, line in (
        (20, "Value(src[0], None, value.info)"), (21, "Value(src[0], src[1], None)"),
    )},
    **{_SQ + f"x__uniform_value__mutmut_{n}": Note(line, _RESHAPE_NEG) for n, line in (
        (37, "known == known.reshape(-2)[0]"), (42, "return int(known.reshape(-2)[0])"),
    )},
    _DC + "x_exact_source__mutmut_13": Note(
        "or et.bitwidth > 17:",
        "equivalent: no element type has 17 bits, so > 16 and > 17 agree on all of them"),
    _DC + "x_exact_source__mutmut_14": Note("np.asarray(value).astype(None)", _SHADOW_F64),
    _DC + "x_fold__mutmut_3": Note(
        "or len(consts) != len(layer.inputs) and not consts:",
        "equivalent: fold is only called for a step one of whose inputs has a shadow, so "
        "consts is never empty, and it has one entry per input of the layer"),
    _DC + "x_fold__mutmut_51": Note(
        "elif exact[0] is None and not chained[0]:",
        "equivalent: any(chained) holds here, and only the data input of a Reshape, "
        "Unsqueeze, Squeeze or Transpose can be chained (the others are integer shapes, axes "
        "or permutations, never a Convert to f16 or bf16); a chained value has a shadow"),
    _DC + "x_fold__mutmut_64": Note(
        "with np.errstate(all=None):",
        "equivalent: numpy's error state only decides whether an overflow to inf warns; the "
        "values are the same"),
    **{_DC + f"x_fold__mutmut_{n}": Note(line, _COPY) for n, line in (
        (74, "shadow.astype(_F32, copy=None)"), (76, "shadow.astype(_F32, )"),
        (77, "shadow.astype(_F32, copy=True)"),
    )},
    _RV + "xǁVariablesǁ__init____mutmut_1": Note(
        "self.values: Mapping[str, np.ndarray] = None",
        "equivalent: only a ReadValue kernel reads values, and only inside Variables.run, "
        "which binds values before the plan runs and puts {} back after"),
    **{_RV + f"xǁVariablesǁ__init____mutmut_{n}": Note(line, _BOUND_IN_RUN) for n, line in (
        (2, "self.written: dict[str, np.ndarray] = None"),
        (3, "self.draws: dict[str, int] = None"),
    )},
    _RV + "xǁVariablesǁ__init____mutmut_7": Note(
        "self.used = None",
        "equivalent: used is only read for its truth value (Executor._run), and None is "
        "false like False"),
    _RV + "xǁVariablesǁ__init____mutmut_8": Note(
        "self.used = True",
        "equivalent in values: a plan without ReadValue, Assign or RandomUniform then runs "
        "inside Variables.run's binding instead of the stateless one; its kernels read and "
        "write none of the store, so only the lock taken and the empty dicts bound differ"),
    _RV + "x_compile_read_value__mutmut_10": Note(
        ".append(None)",
        "equivalent: what readers lists per variable is never read; only its keys are "
        "(Variables.ids, the variable ids in compile order)"),
    **{_RV + f"x_compile_read_value__mutmut_{n}": Note(line, _DYNAMIC_TYPE) for n, line in (
        (27, 'port.precision.kind != "XXdynamicXX"'), (28, 'port.precision.kind != "DYNAMIC"'),
    )},
    _PF + "x__commuting__mutmut_57": Note(
        "bias.ndim > spatial + 3",
        "equivalent on IR a MaxPool accepts: a bias of spatial + 3 dims makes the Add's "
        "output, the pool's input, of rank spatial + 3 or more, where a MaxPool whose kernel "
        "has `spatial` axes takes rank spatial + 2; and with the computed input declared of "
        "that rank _keeps_shape refuses the longer bias anyway"),
    _PF + "x__commuting__mutmut_35": Note(
        '"auto_broadcast", "NUMPY").lower()',
        "equivalent: the default is lower-cased before the comparison, so \"NUMPY\" is "
        "\"numpy\""),
    _PF + "x__floats__mutmut_3": Note(
        "if (len(layer.outputs) == 1) or True else None",
        "equivalent: the step produces the slot the pool (or the next step) reads, so it has "
        "an output; with more than one, _commuting refuses it right after "
        "(len(step.outputs) != 1) whatever _floats says"),
    **{_PF + f"x__floats__mutmut_{n}": Note(line, _ET_KIND) for n, line in (
        (11, 'getattr(et, "kind", None)'), (14, 'getattr(et, "kind", )'),
        (17, 'getattr(et, "kind", "XXXX")'),
    )},
    **{_LF + f"x__exact__mutmut_{n}": Note(line, _NO_SUCH_TYPE) for n, line in (
        (4, '"destination_type", None)'), (6, '"destination_type", )'),
        (9, '"destination_type", "XXXX")'),
    )},
    **{_LF + f"x__slice_index__mutmut_{n}": Note(line, _NO_AXES_INPUT) for n, line in (
        (42, "if (len(pick.inputs) > 4) or True else None"),
        (54, "if len(pick.inputs) >= 4 else None"),
    )},
    _LF + "x__slice_index__mutmut_98": Note(
        "0 <= begin <= rank and end == begin + 1",
        "equivalent: end is min(..., rank), so end == begin + 1 already needs begin < rank"),
    _LF + "x__source_type__mutmut_25": Note(
        "if produced is None and (declared",
        "equivalent: when produced is None the function returns None whichever branch it "
        "takes (the early return, or `return produced`)"),
    _LF + "x_exact_convert__mutmut_44": Note(
        'if source.kind == "float" or target.kind == "float":',
        "equivalent: an integer source returned in the branches above, so the mutant only adds "
        "a boolean, string or dynamic source into a float, for which the float branch answers "
        "False too (its name is neither bf16 nor in (f16, f32, f64))"),
    _LF + "x_exact_convert__mutmut_72": Note(
        "order.index(target.name) > order.index(source.name)",
        "equivalent: equal indices in (f16, f32, f64) mean the same type, which returned True "
        "at `source == target` before"),
    _LF + "x_offset_from__mutmut_24": Note(
        "limit = bound if (limit is None) or True else",
        "equivalent on IR whose ports declare what their layers compute (the executor checks "
        "every declaration when it runs): walking back from the end, Add/Subtract/Reshape keep "
        "their input's type and an exact Convert's input is narrower or the same, so each "
        "port's bound is at most the one before it and the last bound is the minimum"),
    _LF + "x_scalar_int__mutmut_7": Note(
        '"XXiuXX"',
        "equivalent: a dtype's kind is one letter, and no kind is X: `kind in \"XXiuXX\"` is "
        "`kind in \"iu\"`"),
    _LF + "x_scalar_int__mutmut_11": Note("value.reshape(+1)", _ONE_ELEMENT_INT),
    _LF + "x_scalar_int__mutmut_12": Note("value.reshape(-2)", _ONE_ELEMENT_INT),
    _LF + "x_const_of__mutmut_5": Note(
        'if layer.type != "Const" and layer.const is None:',
        "equivalent: only Const layers hold data (the reader reads a .bin slice for a Const "
        "alone, the builder's const() makes Consts), so a layer with data is a Const; a Const "
        "without data raises ValueError in const_value, caught, giving the same None"),
    _IT + "x_slice_bounds__mutmut_56": Note(
        "if length > part and (length - part) % step:",
        "equivalent: the two conditions differ only when length == part, where "
        "(length - part) % step is 0 and neither raises"),
    _IT + "x_slice_parts__mutmut_39": Note("if spec.stride >= 0 else rows[hi - 1::-step]",
                                           _STRIDE_ZERO),
    _IT + "x_slice_parts__mutmut_50": Note("first = lo if spec.stride >= 0", _STRIDE_ZERO),
    _IT + "x_slice_parts__mutmut_57": Note("sign = 1 if spec.stride >= 0", _STRIDE_ZERO),
    **{_IT + f"x_stack__mutmut_{n}": Note(line, _STACK_SHORTCUT) for n, line in (
        (7, "if (fusion.axis < 0) and False else fusion.axis"),
        (8, "if (fusion.axis < 0) or True else fusion.axis"),
        (9, "axis = fusion.axis - rank"),
        (10, "if fusion.axis <= 0 else fusion.axis"),
        (11, "if fusion.axis < 1 else fusion.axis"),
        (12, "cat = None"),
        (13, "if (spec.axis < 0) and False else spec.axis"),
        (14, "if (spec.axis < 0) or True else spec.axis"),
        (15, "cat = spec.axis - rank"),
        (16, "if spec.axis <= 0 else spec.axis"),
        (17, "if spec.axis < 1 else spec.axis"),
        (19, "if 1 <= axis < rank and axis == cat:"),
        (20, "if 0 < axis < rank and axis == cat:"),
        (21, "if 0 <= axis <= rank and axis == cat:"),
    )},
    **{_CF + f"x_compile_loop__mutmut_{n}": Note(line, _CONSTANT_TRUE) for n, line in (
        (20, "slot = None"),
        (21, "constant = None"),
        (22, "constant = it.body.constants.get(None)"),
        (30, "and bool(None):"),
    )},
    _CF + "x_compile_loop__mutmut_31": Note(
        "and bool(constant.reshape(None)):",
        "equivalent: reshape(None) leaves the one-element array as it is, and bool() of a "
        "one-element array is that element, as for the 0-d reshape"),
    _CF + "x__scalar__mutmut_3": Note(
        "if value.__class__ is not np.ndarray and value.ndim == 0",
        "equivalent: the first branch of _scalar is a shortcut for a 0-d ndarray; with it "
        "inverted, 0-d ndarrays take the general path (asarray, reshape, item), which gives "
        "the same value, and numpy scalars take the shortcut, which gives what the general "
        "path gives them"),
    **{_CF + f"x__scalar__mutmut_{n}": Note(line, _TRUTH) for n, line in (
        (8, 'if (kinds == "b") and False else int(item)'),
        (12, 'if kinds == "XXbXX" else int(item)'),
        (13, 'if kinds == "B" else int(item)'),
        (43, 'if (kinds == "b") and False else int(item)'),
        (47, 'if kinds == "XXbXX" else int(item)'),
        (48, 'if kinds == "B" else int(item)'),
    )},
    _CF + "x__scalar__mutmut_42": Note(
        "item = arr.reshape(None).item()",
        "equivalent: arr has exactly one element here (checked just before); reshape(None) "
        "leaves it as it is, and item() of a one-element array is that element, as after "
        "the 0-d reshape"),
    _IT + "x_stack__mutmut_39": Note(
        "error = body._failure(fusion.step, None, err)",
        "equivalent: Plan._failure reads its inputs argument only for index -1 (binding the "
        "plan's inputs); a step's index is never -1, so () and None give the same error"),
    **{_CF + f"x__{fn}__mutmut_{n}": Note(line, _RESULT_INPUT) for fn, n, line in (
        ("concat_spec", 4, "if (res_layer.inputs) or True else None"),
        ("concat_spec", 65, "precision if (res_layer.inputs) or True else None)"),
        ("zero_source", 8, "if (res_layer.inputs) or True else None"),
        ("zero_source", 47, "port = res_layer.inputs[0] if (res_layer.inputs) or True"),
        ("zero_source", 51, "dims = port.dims if (port is not None) or True else None"),
        ("zero_source", 56, "port.precision if (port is not None) or True else None"),
    )},
    _CF + "x__concat_spec__mutmut_21": Note(
        "shape = list(candidate) or [2]",
        "equivalent: the list stands for a scalar body Result, which has rank 1 once "
        "stacked, so the concat axis is 0 (or -1) and that one dim is set to 0: [0] from "
        "[1] as from [2]"),
    **{_CF + f"x__concat_spec__mutmut_{n}": Note(line, (
        "not equivalent, only on IR validate refuses: it differs only for stride 0 on a "
        "concatenated output (forward or reversed order), which validate refuses "
        "(SLICE_PARAMS: stride=0 never advances) and for which no engine or spec defines "
        "an order")) for n, line in (
        (91, "entry.slicing().stride <= 0"),
        (92, "entry.slicing().stride < 1"),
    )},
    **{_CF + f"x__compile_iteration__mutmut_{n}": Note(line, (
        "equivalent: every Loop and TensorIterator has a port_map list here: the IR reader "
        "and the builder always set one (empty when the file has none), so the default is "
        "never used")) for n, line in (
        (36, 'layer.port_maps.get("port_map", None)'),
        (38, 'layer.port_maps.get("port_map", )'),
    )},
    _CF + "x__compile_iteration__mutmut_95": Note(
        "if shape in ((), (2,)) else (1,)",
        "equivalent on IR that passes validate: a declared (1,) still becomes (1,) through "
        "the else branch; only a current_iteration Parameter declared [2] would differ, "
        "and validate refuses it (a current_iteration is a scalar or a 1-element tensor)"),
    **{_CF + f"x__compile_iteration__mutmut_{n}": Note(line, (
        "not equivalent, on an open reading: it differs only for a Loop output port with "
        "id 0 (outputs numbered before the inputs); irtool reads external_port_id as the "
        "port's id, OpenVINO's reader refuses such a file (\"node index is out of range\": "
        "it takes the number as a position), so no reference backs a test")) for n, line in (
        (144, "if entry.external_port_id <= 0:"),
        (145, "if entry.external_port_id < 1:"),
    )},
    _CF + "x__zero_source__mutmut_14": Note(
        "if src is not None or graph.layer(src[0])",
        "equivalent: src is never None here: compile_graph refuses a body whose Result input "
        "has no producer (\"input port N is not connected\") before _zero_source runs"),
    _CF + "x__zero_source__mutmut_25": Note(
        "if (src[0] in ids) or True else None",
        "equivalent: plan.parameters is every Parameter of the body (graph.parameters()), "
        "so a Parameter feeding the Result is always among them"),
    **{_CF + f"x__dtype__mutmut_{n}": Note(line, (
        "equivalent: the dynamic element type's dtype is None, so et.dtype gives it the "
        "None the guard gives")) for n, line in (
        (6, 'et.kind == "XXdynamicXX"'),
        (7, 'et.kind == "DYNAMIC"'),
    )},
    _CF + "x__run__mutmut_26": Note(
        "parts = None",
        "equivalent: parts stays this value only without sliced inputs, and the generated "
        "loop reads parts[k] only for sliced input k"),
    **{_CF + f"x__run__mutmut_{n}": Note(line, (
        "equivalent: slice_parts raises only what slice_bounds raises (it calls it first), "
        "and the loop just above called slice_bounds on the same input with the right "
        "layer and scope without an error")) for n, line in (
        (68, "lim, None, scope, k in squeezed)"),
        (69, "lim, layer, None, k in squeezed)"),
    )},
    _CF + "x__run__mutmut_143": Note(
        "result[o] = np.array(source, )",
        "equivalent: np.array copies by default (copy=True)"),
    **{_CF + f"x__batch_fits__mutmut_{n}": Note(line, (
        "equivalent: it differs only for a batched form built for 0 iterations (a sliced "
        "input declared with 0 rows); the caller asks only for trip > 0, which needs that "
        "input to have trip > 0 rows, against its declared 0: the executor refuses such "
        "an input before the loop runs")) for n, line in (
        (4, "if form.count > 0 and form.count != count:"),
        (5, "if form.count >= 1 and form.count != count:"),
    )},
    _CF + "x__batch_fits__mutmut_14": Note(
        "axis <= len(shape) or shape[axis] != count",
        "equivalent where inputs have their declared rank: it differs only when a slicing "
        "or whole-read axis equals the input's rank, which validate refuses against the "
        "declared rank and the executor against the fed shape"),
    **{_CF + f"x_{fn}__mutmut_{n}": Note(line, _SCOPE_OF_BATCHED) for fn, n, line in (
        ("compile_loop", 48, "batched = _batched_plan(layer, None, options)"),
        ("compile_tensor_iterator", 34, "batched = _batched_plan(layer, None, options)"),
        ("_batched_plan", 6, "compile_graph(form.graph, None, options)"),
        ("_batched_plan", 12, "layer_path(layer, None)}/batched"),
    )},
    **{_CF + f"x__concat_spec__mutmut_{n}": Note(line, (
        "equivalent: _concat_spec is only called for port-map outputs that have an axis "
        "(it.concat gets an entry only when entry.axis is not None), so the default is "
        "never used")) for n, line in (
        (9, "if (entry.axis is not None) or True else 0"),
        (11, "if entry.axis is not None else 1"),
    )},
    _CF + "x__concat_spec__mutmut_34": Note(
        "break",
        "not equivalent, but only on inconsistent IR: it differs when the body Result's "
        "declared rank cannot hold the concat axis while the Loop output's can; such a "
        "Loop fails on its first iteration (numpy cannot concatenate rank-r values along "
        "an axis >= r), so only its zero-iteration output differs (an empty tensor shaped "
        "from the output's dims, or this mutant's error), and no independent reference says "
        "which is right"),
    _CF + "x__concat_spec__mutmut_14": Note(
        "why = None",
        "equivalent: `why` is only read when no shape was found, and then `not why` is true "
        "for None as for \"\"; the reason is set before it is read"),
    **{_CF + f"x_compile_tensor_iterator__mutmut_{n}": Note(line, (
        "equivalent: a TensorIterator has no body condition (compile_tensor_iterator sets "
        "it.condition to None first), so the generated loop never calls the condition "
        "check this mutant breaks")) for n, line in (
        (23, "it.iterate = generate(it, layer, scope, None)"),
        (28, "_condition_check(None, scope))"),
        (29, "_condition_check(layer, None))"),
    )},
    _CF + "x_compile_loop__mutmut_67": Note(
        '"XXiuXX"',
        "equivalent: the kinds string is only tested with `in` against numpy dtype kinds "
        "(one lower-case letter each, never 'X') and compared with \"b\"; \"XXiuXX\" "
        "admits exactly the kinds \"iu\" does"),
    _SI + "x__slice_loop__mutmut_39": Note(
        'e.purpose == "execution_condition"), )',
        "equivalent: slice_loop_inputs runs only inside convert, and every Loop the "
        "converter builds has an execution_condition output (translate_loop from the ONNX "
        "body's condition output, emit_iteration a constant true), so next() always finds "
        "one and its default is never used"),
    _SI + "x__slice_loop__mutmut_47": Note(
        "or cond is None or cond not in body and iteration not in body:",
        "equivalent: it differs only when exactly one of the two port-map entries names a "
        "layer missing from the body; slice_loop_inputs runs only inside convert, whose "
        "builder makes port maps name body layers, and prune_model never removes a "
        "Parameter or a Result (nor does drop_identities), so both are always there"),
    **{_SI + f"x__add_input__mutmut_{n}": Note(line, (
        "equivalent: src is the producer of the Loop's X input, read from an edge of the "
        "graph, so the producer layer has that output port and `src_port` is never None; "
        "the guard never takes its else branch")) for n, line in (
        (36, "src_port.precision if (src_port) or True else None"),
        (38, "src_port.dims if (src_port) or True else None"),
    )},
    _VCF + "x__check_loop_specials__mutmut_34": Note(
        "if result is None and result.type != \"Result\":", _REAL_SPECIAL),
    _VCF + "x__check_loop_specials__mutmut_40": Note("break", _REAL_SPECIAL),
    _VCF + "x__check_loop_specials__mutmut_102": Note(
        "if param is None and param.type != \"Parameter\":", _REAL_SPECIAL),
    _VCF + "x__check_loop_specials__mutmut_108": Note("break", _REAL_SPECIAL),
    **{_VCF + f"x__openvino_reads_alike__mutmut_{n}": Note(line, (
        "equivalent: it differs only for end=0 walking forward from start=0 (a range "
        "naming no element, which _parts reports as SLICE_DIM before this is asked) or "
        "for stride 0 (SLICE_PARAMS; _check_sliced_input returns before _parts)")
    ) for n, line in ((6, "end <= 0)"), (7, "end < 1)"), (8, "if stride >= 0 else"))},
    **{_VCF + f"x__check_sliced_input__mutmut_{n}": Note(line, (
        "message wording only: the last word of the SLICE_OPENVINO message (a string "
        "without a space, which the wording check leaves to a note); the code, layer, line "
        "and the range the message names are pinned")) for n, line in (
        (113, '"XXwrittenXX", entry.line)'), (114, '"WRITTEN", entry.line)'))},
    _VCF + "x__check_sliced_input__mutmut_15": Note(
        "if not -rank < axis < rank:",
        "not equivalent, on a case the engines read differently: a sliced input's "
        "axis=-rank; irtool reads it as numpy does (axis 0), OpenVINO's IR reader refuses "
        "any negative port-map axis (\"not an unsigned 64 bit integer\"), so no engine "
        "backs either verdict"),
    _VCF + "x__check_iteration_count__mutmut_58": Note(
        "if stride >= 0 else (-1, 0)):",
        "equivalent: it differs only for stride 0, and the line just above skips an output "
        "of stride 0 (SLICE_PARAMS reports it)"),
    _VCF + "x__check_iteration_count__mutmut_37": Note(
        'reading = "" if start in (0, -2) else (', _REMARK),
    **{_VCF + f"x__parts__mutmut_{n}": Note(line, (
        "message wording only: whether \" every N\" is named when the stride equals "
        "part_size; the code, line and the sizes are pinned")) for n, line in (
        (31, 'every = f" every {step}" if (step != part) or True else ""'),
        (33, 'every = f" every {step}" if step != part else "XXXX"'),
    )},
    **{_LG + f"x__counter_value__mutmut_{n}": Note(line, _COUNTER_INDEX) for n, line in (
        (2, "return np.array(i, None)"),
        (4, "return np.array(i, )"),
    )},
    _LG + "xǁ_Generatorǁbuild__mutmut_45": Note(
        "= _counter_value(None)", _COUNTER_INDEX),
    **{_LG + f"x__emit_condition__mutmut_{n}": Note(line, (
        "equivalent: it differs only for a constant body condition of rank 2 or more, "
        "which validate refuses (LOOP_BODY_CONDITION, as OpenVINO's read_model does: "
        "rank 0 or 1 only) before any run")) for n, line in (
        (12, "and const.size == 1 and const.ndim <= 2:"),
        (13, "and const.size == 1 and const.ndim < 3:"),
    )},
    _LG + "x__emit_condition__mutmut_15": Note(
        'code.add(f"cond = {bool(None)}")',
        "equivalent: compile_loop drops a one-element constant true body condition, so a "
        "constant reaching _emit_condition is false and the line written is `cond = False` "
        "either way (test_constant_false_body_condition_runs_once)"),
    _LG + "x__emit_condition__mutmut_16": Note(
        "bool(const.reshape(None))",
        "equivalent: reshape(None) leaves the one-element array as it is, and bool() of a "
        "one-element array is that element, as for the 0-d reshape"),
    **{_LG + f"x_counter_block__mutmut_{n}": Note(line, (
        "equivalent: the first block is only cached, never changed; counter_block is "
        "called with start 0 or a multiple of BLOCK (never 1), so this mutant only builds "
        "an equal fresh block instead of reusing the cached one")) for n, line in (
        (3, "if start == 1 and dtype in _FIRST_BLOCKS:"),
        (16, "if start == 1:"),
    )},
    _LG + "x_generate__mutmut_11": Note(
        "gen.build(squeeze=None)",
        "equivalent: build only tests `squeeze` for truth, and None is false as False is"),
    _LG + "x_generate__mutmut_15": Note(
        "if (gen.squeeze) or True else None",
        "equivalent: without squeezable sliced inputs build(squeeze=True) writes the same "
        "code as build(squeeze=False), so _run's choice of run_squeezed (with no squeezed "
        "parts) runs the same loop"),
    _LG + "xǁ_Generatorǁ__init____mutmut_49": Note(
        "or any(k not in self.fused or k not in self.skip",
        "equivalent: need_counter only decides whether the counter array is kept up to "
        "date; this mutant keeps it also when the counter's only readers are fused Gathers "
        "(which index with the loop's i) or skipped steps, so no value changes"),
    **{_LG + f"xǁ_Generatorǁ_emit_counter_gather__mutmut_{n}": Note(line, (
        "equivalent: `safe` only lets the row be a view instead of a copy; this mutant "
        "always copies, as the Gather kernel does, which gives the same values and never "
        "shares memory with X")) for n, line in (
        (5, "safe = None"),
        (32, "{'' if (safe) and False else '.copy()'}"),
    )},
    _LG + "xǁ_Generatorǁ_find_stacking__mutmut_26": Note(
        "if (len(steps[u].inputs) == 2) or True",
        "equivalent: an Unsqueeze step always has its two inputs (data and axes; validate "
        "refuses an Unsqueeze with another count), so the guard never takes its else "
        "branch"),
    **{_LG + f"xǁ_Generatorǁ_find_stacking__mutmut_{n}": Note(line, _ONE_ELEMENT)
       for n, line in ((67, "int(axes.reshape(+1)[0])"), (68, "int(axes.reshape(-2)[0])"))},
    **{_LG + f"xǁ_Generatorǁ_find_squeezes__mutmut_{n}": Note(line, _ONE_ELEMENT)
       for n, line in ((52, "int(axes.reshape(+1)[0])"), (53, "int(axes.reshape(-2)[0])"))},
    **{_LG + f"xǁ_Generatorǁ_find_{what}__mutmut_{n}": Note(
        'axes.dtype.kind not in "XXiuXX"',
        "equivalent: the kinds string is only tested with `in` against a numpy dtype kind "
        "(one lower-case letter, never 'X'); \"XXiuXX\" admits exactly the kinds \"iu\" "
        "does") for what, n in (("stacking", 37), ("squeezes", 45))},
    **{_LG + f"xǁ_Generatorǁbuild__mutmut_{n}": Note(line, (
        "equivalent: the generated code only compares classes and dtypes with these names "
        "(`x.__class__ is ndarray`, `x.dtype is BOOL`); with the name bound to something "
        "else the test fails and the code takes its general branch (the Gather kernel for "
        "a counter Gather, check_condition for the body condition), which gives the same "
        "value; and emit_steps binds `ndarray` again whenever an inlined step uses it"))
       for n, line in (
        (7, "ndarray=None, BOOL=np.dtype(np.bool_)"),
        (8, "ndarray=np.ndarray, BOOL=None"),
        (17, "BOOL=np.dtype(None)"),
    )},
    _LG + "xǁ_Generatorǁbuild__mutmut_123": Note(
        "(self.need_counter or slot == counter)",
        "equivalent: with the counter kept, every last value is copied into L<r> each "
        "iteration (as a back edge's target is) instead of being read from its variable "
        "after the loop; both hold the last iteration's value, and after zero iterations "
        "the Loop kernel gives such outputs from _zero_source, not from the loop's "
        "variables (test_a_const_output_next_to_a_counter_is_the_constant_after_zero_"
        "iterations runs both against OpenVINO)"),
    _LG + "xǁ_Generatorǁbuild__mutmut_188": Note(
        "error = body._failure(step, None, err)",
        "equivalent: Plan._failure reads its inputs argument only for index -1 (binding the "
        "plan's inputs); here step >= 0, so () and None give the same error"),
    **{_LG + f"xǁ_Generatorǁbuild__mutmut_{n}": Note(line, _NO_STEP) for n, line in (
        (193, "error = None"),
        (194, "error = ExecutionError(None,"),
        (195, "layer=None)"),
        (196, "error = ExecutionError(layer=describe_layer(layer, scope))"),
        (197, ")"),
        (198, "{type(None).__name__}: {err}"),
        (199, "layer=describe_layer(None, scope))"),
        (200, "layer=describe_layer(layer, None))"),
        (201, "layer=describe_layer(scope))"),
        (202, "layer=describe_layer(layer, ))"),
    )},
    _LG + "xǁ_Generatorǁbuild__mutmut_222": Note(
        "code.indented(3)",
        "equivalent: every line of the loop body moves one level deeper together; Python "
        "only needs a body indented more than its `for`, so the function compiled is the "
        "same"),
    _LG + "xǁ_Generatorǁbuild__mutmut_243": Note(
        '"    RAISE",',
        "equivalent: the clause is reached only by an IRToolError that is not an "
        "ExecutionError (caught by the clause before); no kernel, nested plan or check of "
        "the generated loop raises another kind at run time (the opset and runtime "
        "packages raise only ExecutionError), so the line never runs"),
    _LG + "x_counter_block__mutmut_13": Note(
        "block.flags.writeable = None",
        "equivalent: numpy takes the truth value of what is assigned to a flag, so None "
        "makes the block read-only as False does"),
    **{_LG + f"xǁ_Generatorǁ_find_squeezes__mutmut_{n}": Note("break", (
        "equivalent: folding a Squeeze into the cut is a shortcut the generated loop may "
        "skip; stopping the search at a sliced input that does not qualify only leaves the "
        "later ones unfolded, and their Squeeze steps run as written, with the same values "
        "(test_sliced_input_with_squeeze runs both forms)")) for n in (18, 48)},
    _LG + "xǁ_Generatorǁ_find_squeezes__mutmut_29": Note(
        'axes.dtype.kind not in "iu" and q in self.skip:',
        "equivalent: `skip` holds only the Unsqueeze (and Identity) steps that stacking "
        "replaced, never a Squeeze, so `q in self.skip` is false for the Squeeze step q "
        "and dropping it from the or-chain changes nothing; an axes constant is always "
        "integer (validate checks Squeeze's axes type)"),
    _LG + "xǁ_Generatorǁ_emit_counter_gather__mutmut_12": Note(
        "self.steps[c].inlined is not None and c in skip",
        "equivalent: the row becomes a view only when every reader is a step that stacking "
        "skipped (an Unsqueeze whose input is collected and stacked by np.stack, which "
        "copies), else a copy as before; X is loop-invariant, so the stacked values are "
        "the same"),
    _LG + "xǁ_Generatorǁ_emit_counter_gather__mutmut_19": Note(
        'if (axis == 0) and False else f"d{k}[l{k} + (i,)]"',
        "equivalent: for axis 0 the prologue sets l = (slice(None),) * 0 = (), so "
        "d[l + (i,)] is d[(i,)], the same view as d[i]"),
    **{_LG + f"xǁ_Generatorǁ_emit_counter_gather__mutmut_{n}": Note(line, (
        "equivalent: the step index of a generated line only names the layer when that "
        "line raises a non-irtool exception; these lines cannot raise: `if i < n` compares "
        "two ints, `else:` is no statement, and `d[i]` / `d[l + (i,)]` index within the "
        "bounds just checked (the Gather kernel's line, which can raise, keeps its index: "
        "test_counter_gather_on_an_axis_past_the_rank_names_the_gather)")) for n, line in (
        (25, 'code.add(f"if i < n{k}:", None)'),
        (27, 'code.add(f"if i < n{k}:", )'),
        (29, "{'' if safe else '.copy()'}\", None)"),
        (31, "{'' if safe else '.copy()'}\", )"),
        (38, 'code.add("else:", None)'),
        (40, 'code.add("else:", )'),
    )},
    _LG + "xǁ_Generatorǁ_find_squeezes__mutmut_11": Note(
        "if spec.part_size != 1 and len(users) != 1",
        "not equivalent, only on IR that is wrong: it differs only for a part of size "
        "other than 1 whose one reader is a Squeeze of the slicing axis (squeezes_match "
        "refuses any other axis); Squeeze-1 cannot squeeze a dim that is not 1, so "
        "validate refuses that IR where the dims are static, and otherwise the run fails "
        "either way (no independent reference gives a value)"),
    _LG + "xǁ_Generatorǁbuild__mutmut_106": Note(
        "or (self.need_counter or slot == counter):",
        "equivalent: it only routes more last values out of the generated loop through a "
        "variable L<r> (None before the loop, the slot's value at the end of every "
        "iteration, so the last iteration's value after it); _run reads the lasts only "
        "when at least one iteration ran, where both give that value"),
    **{_OCF + f"x__grown_by_concat__mutmut_{n}": Note(line, (
        "equivalent: GraphBuilder.const converts the array to the element type's dtype "
        "when one is given (and et is given here), so the empty start is the same "
        "array whatever dtype np.zeros made it in")) for n, line in (
        (25, "dtype=None), et)"),
        (27, "*dims[axis + 1:]), ), et)"),
    )},
    **{_OCF + f"x__grown_by_concat__mutmut_{n}": Note(line, (
        "not equivalent only for element types that share their numpy dtype with another "
        "(4-bit integers kept in uint8/int8): without `et` the Const's type is read back "
        "from the array's dtype, which is `et` itself for every other type; no test grows "
        "a list of 4-bit tensors in a Loop (onnxruntime has no SequenceInsert for them)"))
       for n, line in ((21, "dtype=et.dtype), None)"), (23, "dtype=et.dtype), )"))},
    _OCF + "x__grown_by_concat__mutmut_42": Note(
        "param = scope.builder.parameter(info, name=None)",
        "equivalent: only the body Parameter's friendly name changes (a default one is "
        "made); nothing reads it, OpenVINO and irtool identify it by its layer id"),
    **{_OCF + f"x__zero_iteration_outputs__mutmut_{n}": Note(line, (
        "not killed, no independent reference: it differs only for a Loop that runs zero "
        "times (a constant trip count 0) while growing a ragged list by Concat; the reader "
        "tested for such a list is ConcatFromSequence, and onnxruntime refuses it on the "
        "empty sequence that Loop leaves (\"Must have 1 or more inputs\"), so nothing says "
        "what the output should be")) for n, line in (
        (3, "pending = None"),
        (11, "outputs.append(next(None))"),
    )},
    _OCF + "x__length__mutmut_11": Note(
        "rank = -1 if (value.rank is None) and False else value.rank",
        "not killed: it differs only when the first Scan-8 input (or a nested Scan's first "
        "scan input) has no known rank and a batch only known at run time; ONNX's checker "
        "wants a shape on every graph input, so such a value comes only from an op whose "
        "output rank irtool cannot infer, and no test builds one"),
    _OCF + "x__check_sequence_lens__mutmut_16": Note(
        "and len(full) == 1 and -2 not in full",
        "equivalent on every meaningful model: with one sequence length (len(full) == 1) "
        "the two tests differ only when that length is dynamic (-1), and then the mutant "
        "accepts only a constant sequence_lens of all -1, a negative length that Scan-8's "
        "sequence_lens cannot mean; a real length never equals -1, so both refuse"),
    **{_OCF + f"x__grown_by_concat__mutmut_{n}": Note(line, (
        "equivalent: without `outputs` the builder infers the Concat's output, which is "
        "`info` exactly: both inputs have the element's type, the Parameter is -1 along "
        "the axis (so the sum is -1), and the other dims are static and equal (checked "
        "above)")) for n, line in ((51, "outputs=None)[0]"), (56, ")[0]"))},
    _VCF + "x__check_back_edges__mutmut_7": Note(
        "bad = None",
        "equivalent: `bad` is only read as a truth value (`if bad or ...`), and None is "
        "false as False is"),
    _VCF + "x__check_back_edges__mutmut_91": Note(
        "if bad or src is None and dst is None:",
        "equivalent: `bad` is set whenever src or dst is None (each is then reported as "
        "BACK_EDGE_ENDPOINT), so `bad or ...` is already true in every case the dropped "
        "`src is None or dst is None` adds"),
    _VCF + "x__check_concat_output__mutmut_19": Note(
        "if not -rank < axis < rank:",
        "not equivalent, on a case the engines read differently: a concatenated output's "
        "axis=-rank; irtool reads it as numpy does (axis 0), OpenVINO's IR reader refuses "
        "any negative port-map axis (\"not an unsigned 64 bit integer\"), so no engine "
        "backs either verdict"),
    **{_VCF + f"x__check_entry_tensors__mutmut_{n}": Note(line, (
        "not equivalent, not pinned: the mutant also compares static dims for an If's "
        "inputs (and, for 61, for every output entry); the original deliberately leaves "
        "those to the rank check. No IR here has an If branch Parameter, or a body Result, "
        "whose static dims differ from its outer port, so no test checks what OpenVINO "
        "makes of one")) for n, line in (
        (61, 'elif entry.kind == "input" or ctx.layer.type != "If":'),
        (66, 'ctx.layer.type != "XXIfXX":'),
        (67, 'ctx.layer.type != "if":'),
        (68, 'ctx.layer.type != "IF":'),
    )},
    **{_VCF + f"x__check_iterator__mutmut_{n}": Note(line, (
        "equivalent: a current_iteration entry is an input entry, and _check_port_map puts "
        "every input entry whose body layer is a Parameter into mapped.inputs as well, so "
        "the `pid in current` test never adds a Parameter `pid in mapped.inputs` misses")
    ) for n, line in (
        (87, "mapped.special.get(None, [])"),
        (91, 'mapped.special.get("XXcurrent_iterationXX", [])'),
        (92, 'mapped.special.get("CURRENT_ITERATION", [])'),
    )},
    _VCF + "x__check_port_map__mutmut_16": Note(
        'special: str | None = ""',
        "equivalent: with \"\" an entry without a purpose lands in mapped.special[\"\"], "
        "a key no rule reads (they read \"execution_condition\" and \"current_iteration\")"),
    _VCF + "x_check_control_flow__mutmut_26": Note(
        "_check_iterator(ctx, is_loop=None)",
        "equivalent: is_loop is only read as a truth value, and None is false as False is"),
    _VST + "x__check_cycles__mutmut_20": Note("source=None)]", _CYCLE_START),
    _VST + "x__check_cycles__mutmut_22": Note("nx.find_cycle(sub.subgraph(component), )]",
                                               _CYCLE_START),
    _VST + "x__check_cycles__mutmut_23": Note("nx.find_cycle(sub.subgraph(None), source=first)",
                                               _CYCLE_START),
    **{_VST + f"x__check_cycles__mutmut_{n}": Note(line, (
        "equivalent: the line is the fallback for nx.NetworkXNoCycle, which find_cycle "
        "never raises on a strongly connected component of more than one node or with a "
        "self-loop (the only components that get there)")) for n, line in (
        (24, "path = None"),
        (25, "path = sorted(None)"),
    )},
    _VST + "x__check_edges__mutmut_22": Note(
        'e[2].get("line") or 1))',
        "equivalent: `or 1` only changes the key of edges without a line, and gives them all "
        "the same key as `or 0` did, so the (stable) sort keeps the same order"),
    **{_VST + f"x__check_edges__mutmut_{n}": Note(line, (
        "equivalent: an edge naming a missing layer never has a line (the XML reader "
        "refuses such a file even with strict=False, so it can only be connected in "
        "memory), and with line None the Reporter takes the line of the layer given, as "
        "the original does")) for n, line in (
        (45, '"exist", layer=present, line=None, scope=scope,'),
        (51, '"exist", layer=present, scope=scope,'),
    )},
    _VST + "x__check_edges__mutmut_59": Note(
        "layer_id=None if (present) and False else missing[0])",
        "equivalent: Reporter.add reads layer_id only when no layer is given; with a layer "
        "(present) it takes that layer's id, so passing missing[0] then changes nothing"),
    _VST + "x__check_edges__mutmut_177": Note(
        "if (ra == rb) or True else None",
        "equivalent: when the ranks differ the edge is reported whatever `axis` is (`ra != "
        "rb or axis is not None`), and static_dims_differ (a zip) does not fail on "
        "different lengths"),
    **{_OCF + f"x__trip_count__mutmut_{n}": Note(line, (
        "equivalent: the Convert is never built: the converter's input type check "
        "refuses a Loop whose M is not tensor(int64) before _trip_count runs (\"Loop "
        "takes tensor(int64) there\", as onnxruntime refuses it: INVALID_GRAPH), so M is "
        "always i64 here; the branch is dead code")) for n, line in (
        (79, '{"DESTINATION_TYPE": "i64"}'),
        (80, '{"destination_type": "XXi64XX"}'),
    )},
    **{_OCF + f"x__trip_count__mutmut_{n}": Note(line, (
        "equivalent: Maximum-1's auto_broadcast defaults to numpy, and a misspelt "
        "attribute leaves it at that default (OpenVINO and irtool read only the attributes "
        "they know), so the layer broadcasts the same way")) for n, line in (
        (108, '{"XXauto_broadcastXX": "numpy"}'),
        (109, '{"AUTO_BROADCAST": "numpy"}'),
    )},
    **{_XR + f"x_parse_xml__mutmut_{n}": Note(line, _NONE_IS_FALSE) for n, line in (
        (11, "resolve_entities=None"), (13, "load_dtd=None"), (14, "dtd_validation=None"),
        (15, "huge_tree=None"),
    )},
    **{_XR + f"x_parse_xml__mutmut_{n}": Note(line, _LXML_DEFAULT) for n, line in (
        (19, "XMLParser(resolve_entities=False, load_dtd=False,"),
        (20, "no_network=True, dtd_validation=False, huge_tree=False"),
        (21, "huge_tree=False, remove_comments=True,"),
        (22, "dtd_validation=False, remove_comments=True,"),
    )},
    **{_XR + f"x_parse_xml__mutmut_{n}": Note(line, _NO_FETCH) for n, line in (
        (12, "no_network=None"), (26, "no_network=False"),
    )},
    _XR + "x_parse_xml__mutmut_27": Note(
        "load_dtd=True",
        "equivalent: a DTD would be loaded only to be refused: without dtd_validation or "
        "attribute_defaults lxml takes nothing from it into the tree (no entity is resolved), "
        "and a document with a DOCTYPE is refused once parsed (_refuse_doctype)"),
    _XR + "x_parse_xml__mutmut_39": Note(
        "if (err.position) or True else None",
        "equivalent: lxml's XMLSyntaxError.position is always a (line, column) tuple, which "
        "is true, so the else branch is never taken"),
    **{_XR + f"xǁ_Readerǁback_edges__mutmut_{n}": Note(line, _BACK_EDGE_KEY) for n, line in (
        (42, '("XXfrom-layerXX", "to-layer")'), (43, '("FROM-LAYER", "to-layer")'),
        (44, '("from-layer", "XXto-layerXX")'), (45, '("from-layer", "TO-LAYER")'),
    )},
    **{_XR + f"xǁ_Readerǁport_map__mutmut_{n}": Note(line, _ENTRY_KEY) for n, line in (
        (52, '("XXexternal_port_idXX", "internal_layer_id")'),
        (53, '("EXTERNAL_PORT_ID", "internal_layer_id")'),
        (54, '("external_port_id", "XXinternal_layer_idXX")'),
        (55, '("external_port_id", "INTERNAL_LAYER_ID")'),
    )},
    **{_XR + f"xǁ_Readerǁconst__mutmut_{n}": Note(line, (
        "equivalent: the default matters only for a Const without element_type, and "
        "element_type() knows none of '', None and 'XXXX' (KeyError for each): the same "
        "ELEMENT_TYPE problem, whose message shows the attribute as the file has it (None; "
        "test_a_broken_const_is_one_problem_on_its_layer[no-type])")) for n, line in (
        (102, 'attrs.get("element_type", None)'), (104, 'attrs.get("element_type", )'),
        (107, 'attrs.get("element_type", "XXXX")'),
    )},
    _XR + "xǁ_Readerǁstream__mutmut_1": Note(
        'model: Model | None = ""',
        "equivalent: the first event of a stream is the root's start, which sets the model "
        "before anything reads it (libxml2 raises on a document without a root), so the "
        "initial value is never seen"),
    _XR + "x_read_bin__mutmut_4": Note(
        'with open(path, ) as f:',
        "equivalent: the file object is only asked for its descriptor (fstat, mmap), never "
        "read, so text mode changes nothing"),
    **{_XW + f"_sample__mutmut_{n}": Note(line, _SAMPLE) for n, line in (
        (2, "if n < 256:"), (3, "if n <= 257:"), (5, "payload.read(None, 0, n)"),
        (11, "payload.read(fd, 1, n)"), (14, "step = n // 17"), (17, 'b"XXXX".join('),
        (19, "payload.read(None, i, i + 8)"), (30, "for i in range(n - 8, step)"),
        (31, "for i in range(0, step)"), (32, "for i in range(0, n - 8, ))"),
        (33, "for i in range(1, n - 8, step)"), (35, "for i in range(0, n - 9, step)"),
        (37, "payload.read(None, n - 8, n)"), (44, "payload.read(fd, n - 9, n)"),
    )},
    **{_XW + f"_same__mutmut_{n}": Note(line, _SAME) for n, line in (
        (1, "_opened(None) as fa"), (2, "_opened(None) as fb"),
        (5, "a.read(None, i, min(n, i + _COPY_CHUNK))"),
        (17, "b.read(None, i, min(n, i + _COPY_CHUNK))"),
        (33, "for i in range(0, n, ))"), (34, "for i in range(1, n, _COPY_CHUNK))"),
    )},
    # passes/vectorize.py, the batching core (_Batcher, _splice)
    **{_VZ + f"xǁ_Batcherǁ_stacked__mutmut_{n}": Note(line, (
        "equivalent: v is never None and always batched here. The Unsqueeze was translated "
        "before (its inputs are in values), and _output calls _stacked only for a Result "
        "whose value is batched; _translate makes the Unsqueeze's output batched only when "
        "an input is, and refuses one whose axes differ per iteration (_with_axes), so its "
        "data input v is the batched one")) for n, line in (
        (33, "not v.batched and axes is None"), (34, "if v is None and not v.batched"),
    )},
    _VZ + "xǁ_Batcherǁ_stacked__mutmut_41": Note(
        'axes.dtype.kind not in "XXiuXX"',
        "equivalent: a dtype's kind is one character, and 'XXiuXX' holds i and u as 'iu' "
        "does, and X, which is no numpy kind"),
    **{_VZ + f"xǁ_Batcherǁ_stacked__mutmut_{n}": Note(line, _ONE_ELEMENT) for n, line in (
        (46, "axes.reshape(+1)"), (47, "axes.reshape(-2)"),
    )},
    **{_VZ + f"xǁ_Batcherǁ{fn}__mutmut_{n}": Note(line, (
        "equivalent: the None dropped is the attrs argument's default, so the call is the "
        "same")) for fn, n, line in (
        ("transpose", 12, "self.const(perm)], outputs="),
        ("unsqueeze", 18, "self.const(axes)], outputs="),
    )},
    **{_VZ + f"xǁ_Batcherǁ_sliced_input__mutmut_{n}": Note(line, (
        "equivalent: the check cannot fail: outer is a Parameter of the batched graph made "
        "by build() from self.info(port), which refuses a port of unknown rank first, and "
        "_bind_input takes this path only for an entry whose axis is not None")) for n, line in (
        (10, "if outer.shape is None and entry.axis is None:"), (13, "raise self.refuse(None)"),
    )},
    _VZ + "xǁ_Batcherǁcount__mutmut_21": Note(
        'self.const([0])], outputs=',
        "equivalent: the None dropped is the attrs argument's default, so the call is the "
        "same"),
    **{_VZ + f"xǁ_Batcherǁconst__mutmut_{n}": Note(line, (
        "equivalent: every caller passes a Python int or a non-empty list of them (a "
        "Squeeze without axes that would have none is no Squeeze now), which numpy 2 makes "
        "int64 on every platform")) for n, line in (
        (3, "np.array(values, dtype=None)"), (5, "np.array(values, )"),
    )},
    _VZ + "x__splice__mutmut_70": Note(
        "next_id += 2",
        "equivalent: layer ids only identify layers; the spliced layers get distinct ids "
        "above every id in the graph either way, in the same order (topological_order "
        "breaks ties by id), and the writer, OpenVINO and irtool take ids as given"),
    # vectorize: the batcher's flags and look-ups (mutv2a)
    **{_VZ + name: Note(line, (
        "equivalent: _V.batched is read only for its truth (any(v.batched ...), if / not / "
        "and v.batched in the batcher and every rule); _V values are never compared or "
        "hashed, so None reads as False everywhere"))
        for name, line in (("xǁ_Batcherǁ_bind_input__mutmut_78", "_V(outer, None)"),
                           ("xǁ_Batcherǁ_translate__mutmut_29", "_V(value, None)"))},
    _VZ + "xǁ_Batcherǁ_translate__mutmut_46": Note(
        'op.batching or "XXXX"',
        "equivalent: _RULES has no key '' nor 'XXXX', so an op without a batching kind "
        "finds no rule either way and is refused with the same message"),
    _VZ + "xǁ_Batcherǁ__init____mutmut_24": Note(
        'self.iteration: tuple[int, int] | None = ""',
        "equivalent: iteration is read only in _gather, as 'b.iteration is not None and "
        "b.src(layer, 1) == b.iteration'; src gives a (layer, port) tuple, never equal to "
        "'', so a loop without a scalar iteration number takes no Gather for a whole "
        "input either way"),
    _VZ + "xǁ_Batcherǁ_copy__mutmut_21": Note(
        "values[0].layer if (values) and False else max(self.g.graph.nx)",
        "equivalent: GraphBuilder.op adds the layer with the graph's next id, one above "
        "every id in it (Graph.next_id), so the layer of the highest id is the layer just "
        "added, which is also the layer of its first output"),
    **{_VZ + f"xǁ_Batcherǁ_copy__mutmut_{n}": Note(line, (
        "equivalent on IR that validate passes: values is empty only for a copied layer "
        "without output ports; in such IR a layer without outputs is a Result (never "
        "copied) or a sink that writes state (Assign), and build() refuses a body with one "
        "of those (impure_layer) before any layer is copied, so values[0] is always there"))
        for n, line in ((22, "if (values) or True else"), (24, "max(None)"))},
}
