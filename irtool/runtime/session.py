"""``CompiledModel``: a stateful session over a compiled plan, like OpenVINO's infer request.

``run`` keeps the variables (ReadValue/Assign) from one call to the next; ``reset_state``
returns every variable to its initial value; ``state`` reads and sets them by variable id
(setting it as a whole replaces it: a variable not named goes back to its initial value).
The session's random generators (RandomUniform) move on from call to call too, and
``reset_state`` leaves them where they are, as OpenVINO's does
(``irtool.opset.math_random``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ..core.errors import ExecutionError
from ..ir.graph import Model
from ..ir.types import ElementType
from .executor import Executor


class State(MutableMapping[str, np.ndarray]):
    """The variables of a session that hold a value, by variable id.

    A variable holds a value once a run has assigned it, or once it is set here; until
    then (and after ``reset_state`` or ``del state[id]``) its ReadValue gives its initial
    value, and it is not in this mapping. Setting a variable checks the id, and the
    element type and shape against what its ReadValue declares.
    """

    def __init__(self, session: CompiledModel) -> None:
        self._session = session

    @property
    def _values(self) -> dict[str, np.ndarray]:
        return self._session._values

    def __getitem__(self, variable_id: str) -> np.ndarray:
        return self._values[variable_id]

    def __setitem__(self, variable_id: str, value: Any) -> None:
        self._values[variable_id] = self._session._checked_value(variable_id, value)

    def __delitem__(self, variable_id: str) -> None:
        del self._values[variable_id]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k!r}: {v.dtype}{list(v.shape)}" for k, v in self._values.items())
        return f"State({{{shown}}})"


class CompiledModel(Executor):
    """A model compiled once (the plan cache's plan, shared with ``irtool.run``) with a
    session's variables: ``run`` is one inference step, and the values the step assigns
    are what the next step's ReadValues read.

    ``variables`` lists every variable id the model reads; ``state`` those that hold a
    value. A step that fails leaves the state as it was.
    """

    def __init__(self, model: Model, *, max_iterations: int | None = None,
                 check: bool = True, optimize: bool = True) -> None:
        super().__init__(model, max_iterations=max_iterations, check=check, cached=True,
                         optimize=optimize)
        self._values: dict[str, np.ndarray] = {}
        self._draws: dict[str, int] = {}  # each RandomUniform's generator position

    def run(self, inputs: Mapping[str, Any] | Sequence[Any]) -> dict[str, np.ndarray]:
        """One step: outputs by tensor name; the variables keep what it assigns, and the
        random generators move on."""
        return self._run(inputs, self._values, self._draws)

    def reset_state(self) -> None:
        """Every variable back to its initial value (as after compiling). Random
        generators go on from where they are, as in OpenVINO (a new session starts them
        afresh)."""
        self._values.clear()

    @property
    def variable_ids(self) -> list[str]:
        """Every variable id a ReadValue of the model reads."""
        return self.variables.ids

    @property
    def state(self) -> State:
        """The variables holding a value, by id: readable, settable, deletable."""
        return State(self)

    @state.setter
    def state(self, values: Mapping[str, Any]) -> None:
        """Replace the whole state: the variables named take the values given (all
        checked first; nothing changes when one is refused), every other variable goes
        back to its initial value, as after ``reset_state`` and setting each one."""
        checked = {k: self._checked_value(k, v) for k, v in values.items()}
        self._values.clear()
        self._values.update(checked)

    def _declared(self, variable_id: str) -> tuple[ElementType | None, tuple[int, ...] | None]:
        """The element type and shape the variable's ReadValue declares, or else gives on
        its output port (None: any)."""
        declared = self.variables.declared.get(variable_id)
        if declared is None:
            known = ", ".join(repr(v) for v in self.variable_ids) or "none"
            raise ExecutionError(f"no variable {variable_id!r} in the model (its variables: "
                                 f"{known})", file=self.model.path)
        return declared

    def _checked_value(self, variable_id: str, value: Any) -> np.ndarray:
        et, shape = self._declared(variable_id)
        array = np.asarray(value)
        if et is not None and et.dtype is not None and array.dtype != et.dtype:
            raise ExecutionError(f"variable {variable_id!r} holds {et.name} ({et.dtype}), "
                                 f"not {array.dtype}", file=self.model.path)
        if shape is not None and (len(shape) != array.ndim or any(
                d >= 0 and d != n for d, n in zip(shape, array.shape))):
            raise ExecutionError(f"variable {variable_id!r} has shape {list(shape)} (-1: any), "
                                 f"not {list(array.shape)}", file=self.model.path)
        return array
