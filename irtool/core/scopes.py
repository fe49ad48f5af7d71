"""Where a layer sits in nested bodies, as every message and diagnostic names it.

A *scope* is the path of the body a graph is: ``""`` for the main graph, ``"3/body"``
for the body of layer 3, ``"3/body/7/then_body"`` one level deeper. A layer's *path*
is its scope and its id: ``"3/body/7"``.
"""

from __future__ import annotations


def layer_path(scope: str, layer_id: int) -> str:
    """``"<scope>/<id>"``, or the bare id at top level."""
    return f"{scope}/{layer_id}" if scope else str(layer_id)


def body_scope(scope: str, layer_id: int, body: str) -> str:
    """The scope of body ``body`` (``"body"``, ``"then_body"``...) of layer ``layer_id``."""
    return f"{layer_path(scope, layer_id)}/{body}"
