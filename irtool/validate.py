"""Validate OpenVINO IR: the XSD plus the spec's semantic rules, every problem at once.

``validate(path)`` parses the file safely (no DTD, no entities, no network),
checks it against ``schemas/ir_v10.xsd`` / ``ir_v11.xsd``, reads it leniently
(problems collected, never raised) and runs the semantic rules on the model,
descending into every Loop/TensorIterator/If body with its scope (``"3/body"``).
``validate(model)`` runs the semantic rules only. Nothing raises for bad input:
every finding is a ``Diagnostic`` (code, message, file, line, layer id/name,
scope, severity). Warnings (``severity="warning"``) do not make an IR invalid.

The rules live in ``irtool/validation/`` (one module per family: ``structure``,
``tensors``, ``control_flow``, ``variables``, ``ops``, ``xsd``); their codes are stable.

===========================  =======  ===========================================================
code                         sev.     meaning
===========================  =======  ===========================================================
FILE_UNREADABLE              error    the .xml (or its .bin) cannot be read
XML_MALFORMED                error    the XML is not well formed
XML_DTD                      error    DOCTYPE/ENTITY declarations (XXE, entity bombs) refused
XSD                          error    the XML breaks the IR schema (line, nearest <layer>)
XSD_UNAVAILABLE              warning  no schema found or it does not compile: XSD skipped
XML_STRUCTURE                error    root is not <net>, or a graph lacks <layers>
IR_VERSION                   error    <net version> is not 10 or 11
LAYER_ATTR                   error    layer id/name/type/version missing or malformed
PORT_ATTR                    error    port id missing or not an integer
EDGE_ATTR                    error    edge from/to layer/port missing or not an integer
PORT_MAP_ATTR                error    port_map entry attribute missing or malformed
BACK_EDGE_ATTR               error    back edge attribute missing or malformed
DUPLICATE_LAYER_ID           error    two layers of one graph share an id
LAYER_ID_MISMATCH            error    a Layer's id differs from its graph node key (in memory)
DUPLICATE_PORT_ID            error    two ports of one layer share an id
EDGE_UNKNOWN_LAYER           error    an edge names a layer that does not exist
EDGE_UNKNOWN_PORT            error    from-port not an output of the source / to-port not an
                                      input of the destination
MULTIPLE_PRODUCERS           error    an input port is fed by more than one edge
CYCLE                        error    the data-flow graph has a cycle
UNCONNECTED_INPUT            error    an input port of a non-Parameter layer has no producer
PARAMETER_HAS_INPUT          error    a Parameter or Const has input ports or incoming edges
RESULT_HAS_OUTPUT            error    a Result has output ports
PORT_COUNT                   error    a Parameter/Const without exactly one output, a Result
                                      without exactly one input
UNKNOWN_OP                   warning  type/version known neither to irtool's registry nor to
                                      OpenVINO's opsets
AXIS_RANGE                   error    an axis (attribute, or Const input: Unsqueeze, Squeeze,
                                      Gather, Split, Reduce*, Concat...) outside the rank it
                                      indexes; a Transpose order that is no permutation
ATTR_VALUE                   error    an attribute the operation cannot read: an unknown mode
                                      (auto_broadcast="9999"), an int outside int64
ELEMENT_TYPE                 error    unknown/missing element type (port precision, data
                                      element_type, destination_type, output_type, ...)
BAD_DIM                      error    a dim that is not -1 or within 0..2**40
SHAPE_ATTR                   error    a Parameter/Const shape attribute missing or unparsable
ATTR_PORT_MISMATCH           error    Parameter/Const element_type or shape disagrees with its
                                      output port
EDGE_TYPE_MISMATCH           error    an edge's source and destination precisions differ
EDGE_SHAPE_MISMATCH          error    an edge's ports differ in rank or in a static dim
CONST_DATA                   error    a Const without data, offset or size
CONST_OUT_OF_BOUNDS          error    a Const's bytes lie beyond the end of the .bin
CONST_SIZE                   error    a Const's size is not element count x bit width
CONST_SHAPE                  error    a Const shape that is not static
BIN_SIZE                     error    the .bin is longer than the Consts' bytes reach (OpenVINO
                                      and irtool write it exactly): another model's weights
BIN_MISMATCH                 error    irtool's record of the weights (rt_info irtool_weights)
                                      says the .bin is not the one saved with this .xml
BODY_MISSING                 error    Loop/TensorIterator without <body>, If without
                                      <then_body> or <else_body>
PORT_MAP_UNKNOWN_LAYER       error    internal_layer_id names no layer of the body
PORT_MAP_WRONG_KIND          error    input entry not on a body Parameter, output entry not
                                      on a body Result
PORT_MAP_BAD_PORT            error    external_port_id not an input (input entry) / output
                                      (output entry) port of the layer, or -1 with no purpose
PORT_MAP_DUPLICATE           error    two entries share an external port (OpenVINO keeps one)
                                      or feed the same body Parameter
PORT_MAP_PURPOSE             error    unknown purpose, purpose on the wrong entry kind, or any
                                      purpose on TensorIterator/If
PORT_MAP_TYPE                error    outer port and body Parameter/Result differ in type
PORT_MAP_SHAPE               error    outer port and body Parameter/Result differ in rank (or
                                      static dims of an unsliced input; slice size on axis)
PARAMETER_UNMAPPED           error    a body Parameter fed by no port map entry, back edge or
                                      current_iteration purpose
INPUT_UNMAPPED               error    a Loop input beyond 0/1, or any TensorIterator input,
                                      that feeds no body Parameter
OUTPUT_UNMAPPED              error    a Loop/TensorIterator output without a body Result, an
                                      If output missing from then or else port map
BACK_EDGE_ENDPOINT           error    a back edge not from a body Result to a body Parameter
BACK_EDGE_DUPLICATE          error    a body Parameter fed by two back edges
BACK_EDGE_NO_INIT            error    a back edge's Parameter has no port_map input for its
                                      first-iteration value (OpenVINO drops such an edge)
BACK_EDGE_MISMATCH           error    back edge Result and Parameter differ in type or rank
SLICE_AXIS                   error    a sliced input's axis is outside the input's rank
CONCAT_AXIS                  error    a concatenated output's axis is outside its rank
SLICE_PARAMS                 error    part_size < 1 or stride 0 (sliced input/concat output)
SLICE_DIM                    error    start/end outside the static sliced dim, stride running
                                      away from end, or a range that does not split into
                                      parts of part_size every |stride|
SLICE_OPENVINO               warning  a sliced range OpenVINO's CPU plugin reads otherwise: it
                                      cuts from the first (last) element whatever start says,
                                      and refuses a forward end >= 0 or backward end < 0
ITERATION_COUNT              error    a TensorIterator's sliced inputs and concatenated outputs
                                      (their static dims, start/end/stride/part_size) give
                                      different numbers of iterations (one, without sliced
                                      inputs)
LOOP_TRIP_COUNT              error    Loop input 0 missing, not i32/i64, or not one element
LOOP_CONDITION               error    Loop input 1 missing, not boolean, or not one element
LOOP_BODY_CONDITION          error    not exactly one body Result with purpose=
                                      "execution_condition", or it is not a boolean scalar/1D
LOOP_CURRENT_ITERATION       error    more than one current_iteration Parameter, its
                                      external_port_id not -1, or not an i32/i64 scalar/1D
IF_CONDITION                 error    If input 0 missing or not a boolean scalar/1D
IF_BRANCH_MISMATCH           error    then/else produce different numbers or types of outputs
VARIABLE_ID                  error    a ReadValue or Assign without variable_id
VARIABLE_NO_ASSIGN           error    a variable a ReadValue reads that no Assign writes
VARIABLE_NO_READ             error    an Assign of a variable no ReadValue reads
VARIABLE_TYPE                error    ReadValue input/output or Assign input differs from the
                                      variable's declared type or shape
VARIABLE_CONFLICT            error    one variable_id for two variables (ReadValues declaring
                                      different types or shapes, or two Assigns)
OPENVINO_COMPAT              error    (with --openvino VERSION) an operation, opset, attribute or
                                      element type that OpenVINO release does not know
===========================  =======  ===========================================================

"One element" means a scalar or a 1D tensor of one element. Ranks are compared
only where the IR states them: OpenVINO writes no ``<dim>`` both for a scalar
and for a dynamic rank, so a port without dims fixes nothing.
"""

from __future__ import annotations

import os

from .diagnostics import Diagnostic
from .ir.graph import Model
from .validation import RULES, validate_file, validate_model

__all__ = ["RULES", "errors_only", "validate"]


def validate(model_or_path: Model | str | os.PathLike) -> list[Diagnostic]:
    """Every problem of an IR file (XSD + semantics) or of a ``Model`` (semantics only).

    Never raises for bad input; returns an empty list when the IR is sound.
    """
    if isinstance(model_or_path, Model):
        return validate_model(model_or_path)
    return validate_file(model_or_path)


def errors_only(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that make an IR invalid (warnings dropped)."""
    return [d for d in diagnostics if d.severity == "error"]
