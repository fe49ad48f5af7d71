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
compiles anything again. Making an object does not move it: nothing refers to the object
yet, and a model only sees it once it is stored in one, which is an edit.

Not seen: writes that go around Python's attribute and container protocols (an object's
``__dict__`` or networkx's internal ``_adj`` / ``_node`` dicts written directly), and bytes
changed inside a Const's buffer. ``ConstData`` holds bytes irtool never
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
        new = dict(*args, **kwargs)
        for key, value in new.items():
            if type(value) in _PLAIN:
                new[key] = observed(value)
        super().update(new)
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
        values = self.__dict__
        for name, value in fields.items():
            values[name] = self._STORED.get(name, observed)(value) \
                if type(value) in _PLAIN else value


if TYPE_CHECKING:
    from dataclasses import dataclass as ir_dataclass
else:
    def ir_dataclass(cls=None, /, **options):
        """``dataclasses.dataclass`` for a subclass of ``Observed``, with a constructor of
        its own (``_fast_init``) that stores fields straight into the instance's
        ``__dict__``: the dataclass's would go through ``Observed.__setattr__`` for every
        field, and reading a model of 10^5 layers sets millions. Making an object is no
        edit (nothing refers to it yet). Type checkers see a plain dataclass."""
        def wrap(cls):
            cls = dataclasses.dataclass(cls, **options)
            cls.__init__ = _fast_init(cls)
            return cls
        return wrap if cls is None else wrap(cls)


def _fast_init(cls: type) -> Callable[..., None]:
    """The ``__init__`` of dataclass ``cls``, generated: each argument (or its default, or
    its default factory's product) stored in ``__dict__``, containers as ``_STORED`` or
    ``observed`` stores them."""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    # (``_type``: a field may be called ``type``, as ``Layer.type`` is)
    names: dict[str, Any] = {"_MISSING": dataclasses.MISSING, "_PLAIN": _PLAIN, "_type": type}
    params, body = [], ["    d = self.__dict__"]
    for f in fields:
        if f.default is not dataclasses.MISSING:
            names[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
        else:
            params.append(f.name)
        store = getattr(cls, "_STORED", {}).get(f.name)
        container = store is not None or "dict" in str(f.type) or "list" in str(f.type)
        value = f.name
        if container:  # a plain list or dict given is stored as a container that counts
            names[f"_s_{f.name}"] = store or observed
            value = f"_s_{f.name}({f.name}) if _type({f.name}) in _PLAIN else {f.name}"
        if f.default_factory is not dataclasses.MISSING:
            value = f"_f_{f.name}() if {f.name} is _MISSING else {value}"
        body.append(f"    d[{f.name!r}] = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, names)  # generated from the dataclass's own fields
    init: Callable[..., None] = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


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

    def fill_node(self, node: Any, data: dict[str, Any]) -> None:
        """Add a new ``node`` to a graph being made (a reader filling in what it read): no
        edit, as for ``Observed.fill``, and networkx's dicts written directly (its
        ``add_node`` costs several times more, which counts at 10^6 layers)."""
        self._succ[node] = {}
        self._pred[node] = {}
        self._node[node] = EditedDict(data)

    def fill_edges(self, edges: Iterable[tuple[Any, Any, dict[str, Any]]]) -> None:
        """Add edges ``(u, v, data)`` between nodes already there to a graph being made:
        what ``add_edge`` stores (the next free key of the pair), without counting an edit
        (in one loop over networkx's dicts: a reader adds 10^5)."""
        succ, pred = self._succ, self._pred
        for u, v, data in edges:
            targets = succ[u]
            keys = targets.get(v)
            if keys is None:
                targets[v] = pred[v][u] = {0: EditedDict(data)}
                continue
            key = len(keys)
            while key in keys:
                key += 1
            keys[key] = EditedDict(data)

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
