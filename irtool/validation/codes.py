"""Every diagnostic code the validator emits: its severity, family and meaning.

This table is the one list of the codes. Codes are stable: scripts and tests match on
them. A code's family is the module of ``irtool.validation`` that checks it (``reading``
also passes on what the lenient IR reader, ``irtool.ir.serde.xml_reader``, reports);
a test keeps families, modules and codes in step.
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    severity: str
    family: str
    summary: str


RULES: dict[str, Rule] = {
    # -- the file ----------------------------------------------------------------
    "FILE_UNREADABLE": Rule("error", "reading", "the .xml (or its .bin) cannot be read"),
    "XML_MALFORMED": Rule("error", "reading", "the XML is not well formed"),
    "XML_DTD": Rule("error", "reading", "DOCTYPE/ENTITY declarations (XXE, entity bombs) refused"),
    "XSD": Rule("error", "xsd", "the XML breaks the IR schema (schemas/ir_v1x.xsd)"),
    "XSD_UNAVAILABLE": Rule("warning", "xsd", "no schema found/compiled: XSD checks skipped"),
    # -- reading (reported by irtool.ir.serde.xml_reader in lenient mode) --------------
    "XML_STRUCTURE": Rule("error", "reading", "root is not <net>, or a graph lacks <layers>"),
    "IR_VERSION": Rule("error", "reading", "<net version> is not 10 or 11"),
    "LAYER_ATTR": Rule("error", "reading", "layer id/name/type/version missing or malformed"),
    "PORT_ATTR": Rule("error", "reading", "port id missing or not an integer"),
    "EDGE_ATTR": Rule("error", "reading", "edge from/to layer/port missing or not an integer"),
    "PORT_MAP_ATTR": Rule("error", "reading", "port_map entry attribute missing or malformed"),
    "BACK_EDGE_ATTR": Rule("error", "reading", "back edge attribute missing or malformed"),
    # -- graph structure ---------------------------------------------------------
    "DUPLICATE_LAYER_ID": Rule("error", "structure", "two layers of one graph share an id"),
    "LAYER_ID_MISMATCH": Rule("error", "structure", "a Layer's id differs from its graph node key"),
    "DUPLICATE_PORT_ID": Rule("error", "structure", "two ports of one layer share an id"),
    "EDGE_UNKNOWN_LAYER": Rule("error", "structure", "an edge names a layer that does not exist"),
    "EDGE_UNKNOWN_PORT": Rule("error", "structure",
                              "an edge's from-port is not an output port of its source, or its "
                              "to-port not an input port of its destination"),
    "MULTIPLE_PRODUCERS": Rule("error", "structure", "an input port is fed by more than one edge"),
    "CYCLE": Rule("error", "structure", "the data-flow graph has a cycle"),
    "UNCONNECTED_INPUT": Rule("error", "structure", "an input port has no producer"),
    "PARAMETER_HAS_INPUT": Rule("error", "structure", "a Parameter or Const has input ports/edges"),
    "RESULT_HAS_OUTPUT": Rule("error", "structure", "a Result has output ports"),
    "PORT_COUNT": Rule("error", "structure",
                       "a Parameter/Const lacks its one output, or a Result its one input"),
    "UNKNOWN_OP": Rule("warning", "ops",
                       "neither irtool's registry nor OpenVINO's opsets know type/version"),
    "AXIS_RANGE": Rule("error", "axes", "an axis (attribute or constant input) outside the "
                       "rank of the tensor it indexes, or a Transpose order no permutation"),
    "ATTR_VALUE": Rule("error", "ops", "an operation's attribute its op cannot read: an "
                       "unknown mode, a number outside int64 (OpenVINO refuses these too)"),
    # -- element types, shapes, constants ----------------------------------------
    "ELEMENT_TYPE": Rule("error", "tensors", "an unknown or missing element type / precision"),
    "BAD_DIM": Rule("error", "tensors", "a dimension that is not -1 or in 0..2**40"),
    "SHAPE_ATTR": Rule("error", "tensors", "a Parameter/Const shape attribute that does not parse"),
    "ATTR_PORT_MISMATCH": Rule("error", "tensors",
                               "a Parameter/Const element_type/shape disagrees with its port"),
    "EDGE_TYPE_MISMATCH": Rule("error", "structure", "an edge joins ports of different precision"),
    "EDGE_SHAPE_MISMATCH": Rule("error", "structure",
                                "an edge joins ports of different rank or static dims"),
    "CONST_DATA": Rule("error", "tensors", "a Const without data, offset or size"),
    "CONST_OUT_OF_BOUNDS": Rule("error", "tensors",
                                "a Const's bytes lie beyond the end of the .bin"),
    "CONST_SIZE": Rule("error", "tensors", "a Const's size is not element count x bit width"),
    "CONST_SHAPE": Rule("error", "tensors", "a Const shape that is not static"),
    "BIN_SIZE": Rule("error", "weights", "the .bin is longer than the Consts' bytes reach: "
                     "another model's weights"),
    "BIN_MISMATCH": Rule("error", "weights", "the .bin's bytes differ from those irtool saved "
                         "with this .xml (its irtool_weights record)"),
    # -- Loop / TensorIterator / If ----------------------------------------------
    "BODY_MISSING": Rule("error", "control_flow", "a Loop/TensorIterator without <body>, or an If "
                         "without <then_body>/<else_body>"),
    "PORT_MAP_UNKNOWN_LAYER": Rule("error", "control_flow",
                                   "internal_layer_id names no layer of the body"),
    "PORT_MAP_WRONG_KIND": Rule("error", "control_flow",
                                "internal_layer_id of an input entry is not "
                                "a Parameter, or of an output entry not a Result"),
    "PORT_MAP_BAD_PORT": Rule("error", "control_flow", "external_port_id is not an input (input "
                              "entries) / output (output entries) port, or -1 without purpose"),
    "PORT_MAP_DUPLICATE": Rule("error", "control_flow", "two entries of one port map share an "
                               "external port or a body layer (OpenVINO keeps only one)"),
    "PORT_MAP_PURPOSE": Rule("error", "control_flow",
                             "an unknown purpose, or one on the wrong kind "
                             "of entry or operation"),
    "PORT_MAP_TYPE": Rule("error", "control_flow",
                          "outer port and body Parameter/Result differ in element type"),
    "PORT_MAP_SHAPE": Rule("error", "control_flow",
                           "outer port and body Parameter/Result differ in rank or static dims"),
    "PARAMETER_UNMAPPED": Rule("error", "control_flow", "a body Parameter that nothing feeds"),
    "INPUT_UNMAPPED": Rule("error", "control_flow",
                           "a Loop (beyond ports 0/1) or TensorIterator input port that feeds "
                           "no body Parameter"),
    "OUTPUT_UNMAPPED": Rule("error", "control_flow", "an output port of a Loop/TensorIterator/If "
                            "that no body Result produces (for If: in each body)"),
    "BACK_EDGE_ENDPOINT": Rule("error", "control_flow",
                               "a back edge not from a body Result to a body Parameter"),
    "BACK_EDGE_DUPLICATE": Rule("error", "control_flow", "a body Parameter fed by two back edges"),
    "BACK_EDGE_NO_INIT": Rule("error", "control_flow",
                              "a back edge's Parameter has no port_map input "
                              "giving its first-iteration value (OpenVINO ignores the edge)"),
    "BACK_EDGE_MISMATCH": Rule("error", "control_flow",
                               "back edge Result and Parameter differ in element type or rank"),
    "SLICE_AXIS": Rule("error", "control_flow",
                       "a sliced input's axis is outside the input's rank"),
    "CONCAT_AXIS": Rule("error", "control_flow",
                        "a concatenated output's axis is outside the output's rank"),
    "SLICE_PARAMS": Rule("error", "control_flow", "part_size < 1 or stride 0 on a sliced input or "
                         "concatenated output"),
    "SLICE_DIM": Rule("error", "control_flow", "start/end/stride/part_size do not fit the sliced "
                      "static dimension"),
    "SLICE_OPENVINO": Rule("warning", "control_flow", "a sliced range OpenVINO's CPU plugin cuts "
                           "from elsewhere than written, or refuses (start not 0 / -1)"),
    "ITERATION_COUNT": Rule("error", "control_flow", "a TensorIterator's sliced inputs and "
                            "concatenated outputs give different numbers of iterations"),
    "LOOP_TRIP_COUNT": Rule("error", "control_flow",
                            "Loop input 0 missing, not i32/i64, or not a 1-element scalar/1D"),
    "LOOP_CONDITION": Rule("error", "control_flow",
                           "Loop input 1 missing, not boolean, or not a 1-element scalar/1D"),
    "LOOP_BODY_CONDITION": Rule("error", "control_flow", "not exactly one body Result with "
                                "purpose=execution_condition, or it is not a boolean scalar"),
    "LOOP_CURRENT_ITERATION": Rule("error", "control_flow", "more than one current_iteration "
                                   "Parameter, external_port_id not -1, or not an i32/i64 scalar"),
    "IF_CONDITION": Rule("error", "control_flow", "If input 0 missing or not a boolean scalar/1D"),
    "IF_BRANCH_MISMATCH": Rule("error", "control_flow",
                               "then/else bodies produce different numbers or types of outputs"),
    # -- variables (ReadValue / Assign) -----------------------------------------
    "VARIABLE_ID": Rule("error", "variables", "a ReadValue or Assign without variable_id"),
    "VARIABLE_NO_ASSIGN": Rule("error", "variables", "a variable a ReadValue reads that no "
                               "Assign writes"),
    "VARIABLE_NO_READ": Rule("error", "variables", "an Assign of a variable no ReadValue reads"),
    "VARIABLE_TYPE": Rule("error", "variables", "a ReadValue's input or output, or an Assign's "
                          "input, differs from the variable's declared type or shape (or "
                          "variable_type is not a type)"),
    "VARIABLE_CONFLICT": Rule("error", "variables", "one variable_id for two variables: "
                              "ReadValues declaring different types or shapes, or two Assigns"),
}


def severity(code: str) -> str:
    """``"error"`` or ``"warning"`` (unknown codes count as errors)."""
    rule = RULES.get(code)
    return rule.severity if rule else "error"
