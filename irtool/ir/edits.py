"""Edits of the in-memory IR made visible: one edit counter for the whole process.

``irtool.run(model, feed)`` reuses the plan compiled for ``model`` while the model is
unchanged (``irtool.runtime.cache``). Telling "unchanged" by comparing the whole model
costs a walk over every layer on every call; instead every way of changing an IR object
in place moves this counter, and a call that finds it where it was is a call on an
unchanged model, at the cost of reading one integer.

What moves it:

* setting any attribute of a ``Model``, ``Graph``, ``Layer``, ``Port``,
  ``PortMapEntry``, ``BackEdge``, ``RTNode`` or ``ConstData`` (``layer.type = ...``,
  ``port.dims = ...``, ``model.name = ...``, ``layer.const = ...``) or deleting one;
* changing a container those objects hold, in place: their dicts (``layer.attrs``,
  ``extra``, ``bodies``, ``port_maps``, ``weights_record``...) and lists (``inputs``,
  ``outputs``, ``back_edges``, a port map's entries, ``rt_info``, ``unknown``, an
  ``RTNode``'s ``children``) are ``EditedDict`` / ``EditedList``, which move the counter on
  every change; a plain dict or list assigned to such a field is copied into one (so is a
  list given as ``dims`` or ``names``, into a tuple: a list kept there could change unseen);
* the graph's structure: ``Graph.nx`` is an ``EditedMultiDiGraph``, whose every mutating
  method (``add_node``, ``add_edge``, ``remove_edge``, ``update``, ``clear``...) moves the
  counter, as do changes to a node's or an edge's data dict (``g.nx.nodes[i]["layer"] =``,
  ``g.nx.edges[u, v, k]["to_port"] =``).

A layer in a nested body is an IR object like any other, so an edit anywhere moves the
one counter; it cannot say *which* model changed, so a moved counter makes the cache
compare the model it holds with the model as it is now (the fingerprint) before it
compiles anything again. Making an object moves the counter too (its constructor sets its
attributes), which costs a later cache lookup one fingerprint, never a wrong plan.

Not seen: bytes changed inside a Const's buffer. ``ConstData`` holds bytes irtool never
writes to (``from_array`` copies a writable array; a file's bytes are mapped read-only);
a buffer handed to ``ConstData`` directly must not be changed afterwards.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, SupportsIndex, TypeVar

import networkx as nx

_counter = itertools.count(1)
_count = 0

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


def edit_count() -> int:
    """A number that differs from every earlier one once any IR object was changed."""
    return _count


def edited() -> None:
    """Record that an IR object changed (call it after the change, not before: a reader
    that took ``edit_count()`` during the change must see it move)."""
    global _count
    _count = next(_counter)  # itertools' next is atomic: two threads never get one number


class EditedDict(dict[K, V]):
    """A dict that moves the edit counter on every change (see the module)."""

    __slots__ = ()

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, observed(value))
        edited()

    def __delitem__(self, key: K) -> None:
        super().__delitem__(key)
        edited()

    def __ior__(self, other: Any) -> EditedDict[K, V]:  # type: ignore[override,misc]
        self.update(other)
        return self

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            super().__setitem__(key, observed(value))
        edited()

    def setdefault(self, key: K, default: Any = None) -> V:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, *args: Any) -> Any:
        value = super().pop(*args)
        edited()
        return value

    def popitem(self) -> tuple[K, V]:
        item = super().popitem()
        edited()
        return item

    def clear(self) -> None:
        super().clear()
        edited()


class EditedList(list[T]):
    """A list that moves the edit counter on every change (see the module)."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        edited()

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        super().__delitem__(index)
        edited()

    def __iadd__(self, other: Iterable[T]) -> EditedList[T]:  # type: ignore[override,misc]
        super().__iadd__(other)
        edited()
        return self

    def __imul__(self, n: SupportsIndex) -> EditedList[T]:
        super().__imul__(n)
        edited()
        return self

    def append(self, value: T) -> None:
        super().append(value)
        edited()

    def extend(self, values: Iterable[T]) -> None:
        super().extend(values)
        edited()

    def insert(self, index: SupportsIndex, value: T) -> None:
        super().insert(index, value)
        edited()

    def pop(self, index: SupportsIndex = -1) -> T:
        value = super().pop(index)
        edited()
        return value

    def remove(self, value: T) -> None:
        super().remove(value)
        edited()

    def clear(self) -> None:
        super().clear()
        edited()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        edited()

    def reverse(self) -> None:
        super().reverse()
        edited()


_PLAIN = (dict, list)


def observed(value: Any) -> Any:
    """``value`` as it is stored in an IR object: a plain dict or list copied into an
    ``EditedDict`` / ``EditedList``, anything else as it is."""
    kind = type(value)
    if kind is dict:
        return EditedDict(value)
    if kind is list:
        return EditedList(value)
    return value


def observed_lists(value: Any) -> Any:
    """A dict of lists (``Layer.port_maps``) stored: the dict and each list observed."""
    if type(value) is not dict and type(value) is not EditedDict:
        return value
    return EditedDict({k: observed(v) for k, v in value.items()})


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class Observed:
    """Base of the IR's classes: setting or deleting an attribute moves the edit counter,
    and a container stored in a field is one that does too (``_STORED`` says how a field's
    value is stored when that is not ``observed``)."""

    __slots__ = ()
    _STORED: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    _CONTAINER_FIELDS: ClassVar[tuple[str, ...]] = ()  # set by ``ir_dataclass``

    def __setattr__(self, name: str, value: Any) -> None:
        store = self._STORED.get(name, observed)
        object.__setattr__(self, name, store(value))
        edited()

    def __delattr__(self, name: str) -> None:
        object.__delattr__(self, name)
        edited()

    def fill(self, **fields: Any) -> None:
        """Set fields of an object being made, which nothing refers to yet (a reader
        filling in what it read): stored as ``__setattr__`` stores them, but no edit."""
        for name, value in fields.items():
            object.__setattr__(self, name, self._STORED.get(name, observed)(value))

    def __post_init__(self) -> None:
        # The constructor stored its arguments as given: store the containers as ``_STORED``
        # or ``observed`` does. (Making an object is no edit: nothing refers to it yet.)
        values = self.__dict__
        for name in self._CONTAINER_FIELDS:
            if type(values[name]) in _PLAIN:
                values[name] = self._STORED.get(name, observed)(values[name])


if TYPE_CHECKING:
    from dataclasses import dataclass as ir_dataclass
else:
    def ir_dataclass(cls=None, /, **options):
        """``dataclasses.dataclass`` for a subclass of ``Observed``, whose constructor sets
        fields without going through ``Observed.__setattr__``: made as a frozen dataclass
        (whose ``__init__`` sets fields with ``object.__setattr__``, a tenth of the cost
        of a Python ``__setattr__``: reading a model of 10^5 layers sets millions), then
        made mutable again by removing what ``frozen`` added. Type checkers see a plain
        dataclass."""
        def wrap(cls):
            cls = dataclasses.dataclass(cls, frozen=True, **options)
            del cls.__setattr__, cls.__delattr__  # Observed's, which count edits
            cls.__hash__ = None  # mutable, as a plain dataclass with eq=True
            cls._CONTAINER_FIELDS = tuple(
                f.name for f in dataclasses.fields(cls)
                if f.name in cls._STORED or "dict" in str(f.type) or "list" in str(f.type))
            return cls
        return wrap if cls is None else wrap(cls)


AS_TUPLE = _as_tuple
"""How ``Port.dims`` and ``Port.names`` are stored: a list becomes a tuple."""
NESTED = observed_lists
"""How ``Layer.port_maps`` is stored: its lists observed too."""


class EditedMultiDiGraph(nx.MultiDiGraph):  # type: ignore[misc]
    """``networkx.MultiDiGraph`` whose structure and node/edge data moving the edit counter
    on every change (see the module). The methods networkx builds on (``add_edges_from``
    calls ``add_edge``...) are covered too; each change is counted after it is made."""

    node_attr_dict_factory = EditedDict
    edge_attr_dict_factory = EditedDict
    graph_attr_dict_factory = EditedDict

    def add_node(self, *args: Any, **kwargs: Any) -> None:
        super().add_node(*args, **kwargs)
        edited()

    def add_nodes_from(self, *args: Any, **kwargs: Any) -> None:
        super().add_nodes_from(*args, **kwargs)
        edited()

    def remove_node(self, *args: Any, **kwargs: Any) -> None:
        super().remove_node(*args, **kwargs)
        edited()

    def remove_nodes_from(self, *args: Any, **kwargs: Any) -> None:
        super().remove_nodes_from(*args, **kwargs)
        edited()

    def add_edge(self, *args: Any, **kwargs: Any) -> Any:
        key = super().add_edge(*args, **kwargs)
        edited()
        return key

    def add_edges_from(self, *args: Any, **kwargs: Any) -> Any:
        keys = super().add_edges_from(*args, **kwargs)
        edited()
        return keys

    def remove_edge(self, *args: Any, **kwargs: Any) -> None:
        super().remove_edge(*args, **kwargs)
        edited()

    def remove_edges_from(self, *args: Any, **kwargs: Any) -> None:
        super().remove_edges_from(*args, **kwargs)
        edited()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        edited()

    def clear(self) -> None:
        super().clear()
        edited()

    def clear_edges(self) -> None:
        super().clear_edges()
        edited()


__all__ = ["AS_TUPLE", "NESTED", "EditedDict", "EditedList", "EditedMultiDiGraph", "Observed",
           "edit_count", "edited", "ir_dataclass", "observed"]
