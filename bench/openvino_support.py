"""Make ``irtool/data/openvino_support.json``: what each OpenVINO release knows, read from
its own wheel.

    python bench/openvino_support.py [--releases 2023.0 2024.6 ...] [--work DIR]
                                     [-o irtool/data/openvino_support.json]

For every OpenVINO release from 2023.0 on (the newest patch of each ``YEAR.N`` that
``pip index versions openvino`` lists, or ``--releases``), the script downloads the
CPython 3.11 manylinux wheel (``pip download openvino==X --no-deps``), installs it with its
dependencies into a throw-away venv under ``--work`` (default: a folder in the system's
temporary directory, kept between runs as a cache) and runs itself there (``--probe``) to
read, from that release's own code:

- its opsets: ``NodeFactory("opsetN")`` for N = 1, 2, ... until the release has no such
  opset;
- the operations of each opset: every candidate type name is created with
  ``NodeFactory("opsetN").create(name)``; a created node's ``get_type_info()`` gives the
  version it belongs to (``Add`` in ``opset13`` is ``Add-opset1``). The candidates are the
  type names the releases' own Python op factories pass to their node factories (string
  constants of the functions of ``openvino.opsetN`` / ``openvino.runtime.opsetN``, taken
  from every release first, so that an op without a factory in an old release is still
  tried there) and the (type, opset) pairs irtool's own registry knows. A name the factory
  refuses for a reason other than not knowing it (``Constant``: the factory makes no
  constants) counts as known; the IR writes ``Constant`` as ``Const``, which the script
  reads from an IR the release serializes;
- each operation's attributes: ``get_attributes()`` of the default-constructed node (what
  its ``visit_attributes`` writes); an attribute whose default is an element type name is
  recorded as typed, so that its values are checked as element types;
- attributes ``get_attributes`` leaves out (values its Python visitor cannot convert,
  such as a Parameter's ``shape`` before 2024.1): every attribute another release reports
  for the op is set to ``0`` when making it, and the visitor's complaint about that value
  shows it reads the attribute (``--hidden``);
- its element types: the names its IR reader accepts, one ``Convert(destination_type=T)``
  IR per candidate read with ``Core.read_model`` (``--types``); the candidates are the
  members of every release's ``openvino.Type`` and irtool's element types. (``openvino.Type``
  itself lags behind: it lists u2 from 2026.0, the reader takes it from 2024.1.)

A probe that crashes the interpreter (a default-constructed op whose visitor dereferences
something unset: ReadValue and Assign in some releases) is run again without the step it
was at: the op is then recorded without attributes (``attributes_unread`` lists those
releases), or, if making it crashed, as known in that opset with its version unknown. The
output lists, for every opset, operation, attribute and element type, the
releases that know it as ranges (``"2024.0..2026.4"``), and records the script's version,
the Python it ran, and each release's wheel (file name, sha256) and full version string.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT_VERSION = 3
# Each probe's own version: a probe's kept result is reused while its version and
# candidates are the same.
PROBE_VERSIONS = {"--probe": 2, "--hidden": 1, "--types": 2}
FIRST_RELEASE = (2023, 0)
OUTPUT = Path(__file__).resolve().parent.parent / "irtool" / "data" / "openvino_support.json"
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")


# -- inside a release's venv --------------------------------------------------------------


def _opset_modules() -> list:
    import importlib

    found = []
    for n in range(1, 100):
        for prefix in ("openvino", "openvino.runtime"):
            try:
                found.append(importlib.import_module(f"{prefix}.opset{n}"))
            except ImportError:
                continue
    return found


def _factory_names() -> set[str]:
    """String constants of the opset modules' functions that look like op type names."""
    import inspect

    names: set[str] = set()
    seen: set[int] = set()

    def consts(code) -> None:
        for c in code.co_consts:
            if isinstance(c, str) and re.fullmatch(r"[A-Z][A-Za-z0-9_]*", c):
                names.add(c)
            elif inspect.iscode(c):
                consts(c)

    for module in _opset_modules():
        for value in vars(module).values():
            fn = inspect.unwrap(value) if callable(value) else None
            code = getattr(fn, "__code__", None)
            if code is not None and id(code) not in seen:
                seen.add(id(code))
                consts(code)
    return names


def _runtime():
    """``openvino.runtime`` where the release has it (2023.x, 2024.x), else ``openvino``."""
    try:
        import openvino.runtime as runtime
    except ImportError:
        import openvino as runtime
    return runtime


def _element_types() -> list[str]:
    Type = _runtime().Type
    found = set()
    for attr in dir(Type):
        value = getattr(Type, attr)
        if isinstance(value, Type):
            name = value.get_type_name() if hasattr(value, "get_type_name") else str(value)
            found.add(name)
    return sorted(found)


def _const_type_name() -> str:
    """The type name this release writes for a Constant in IR (``Const``)."""
    import numpy as np

    runtime = _runtime()
    ops = _opset_modules()[0]
    param = ops.parameter([1], np.float32)
    model = runtime.Model([ops.add(param, ops.constant(np.ones(1, np.float32)))], [param])
    with tempfile.TemporaryDirectory() as tmp:
        runtime.serialize(model, str(Path(tmp) / "m.xml"))
        text = (Path(tmp) / "m.xml").read_text()
    types = set(re.findall(r'<layer [^>]*type="([^"]+)"', text))
    return next(t for t in types if t not in ("Parameter", "Add", "Result"))


def probe(candidates_file: str, out_file: str, progress_file: str, skip: list[str]) -> None:
    """Write what this interpreter's openvino knows (``--probe``)."""
    try:
        from openvino._pyopenvino import NodeFactory
    except ImportError:  # 2023.x
        from openvino.runtime import NodeFactory  # type: ignore[no-redef]

    candidates = json.loads(Path(candidates_file).read_text()) if candidates_file else []
    result: dict = {"version": _runtime().get_version(),
                    "factory_names": sorted(_factory_names()),
                    "element_types": _element_types(), "const_type": _const_type_name(),
                    "opsets": {}, "ops": {}, "crashed": list(skip)}
    type_names = set(result["element_types"]) | {"undefined"}
    for n in range(1, 100):
        opset = f"opset{n}"
        try:
            factory = NodeFactory(opset)
        except Exception:
            break
        members: dict[str, str] = {}
        for name in candidates:
            key = f"create:{opset}/{name}"
            if key in skip:
                members[name] = ""  # known, crashed while made: version unknown
                continue
            Path(progress_file).write_text(key)
            try:
                node = factory.create(name)
            except Exception as err:
                if "op_node != nullptr" not in str(err) and "not found" not in str(err):
                    members[name] = ""  # known to the opset, but the factory makes none
                continue
            info = node.get_type_info()
            members[name] = info.version_id
            op_key = f"{info.name}-{info.version_id}"
            if op_key not in result["ops"]:
                attrs = {}
                if f"attributes:{op_key}" not in skip:
                    Path(progress_file).write_text(f"attributes:{op_key}")
                    try:
                        attrs = node.get_attributes()
                    except Exception:
                        attrs = None
                result["ops"][op_key] = {
                    "attributes": sorted(attrs or {}),
                    "typed": sorted(k for k, v in (attrs or {}).items()
                                    if isinstance(v, str) and v in type_names),
                    "read": attrs is not None}
        result["opsets"][opset] = members
    Path(out_file).write_text(json.dumps(result))


VISITED = ("No AttributeVisitor support for accessing attribute named",
           "Unable to cast Python instance")


def probe_hidden(candidates_file: str, out_file: str) -> None:
    """Which of the attributes other releases report for an op this release's visitor
    also visits (``--hidden``): ``get_attributes`` leaves out those its Python visitor
    cannot convert (a Parameter's PartialShape ``shape`` before 2024.1). Making the op
    with ``{name: 0}`` makes the visitor touch the attribute if it has it: it then fails
    on the value ("No AttributeVisitor support..." or "Unable to cast...")."""
    try:
        from openvino._pyopenvino import NodeFactory
    except ImportError:  # 2023.x
        from openvino.runtime import NodeFactory  # type: ignore[no-redef]

    found: dict[str, list[str]] = {}
    for op_key, names in json.loads(Path(candidates_file).read_text()).items():
        op, version = op_key.rsplit("-", 1)
        for name in names:
            try:
                NodeFactory(version).create(op, [], {name: 0})
            except Exception as err:
                if any(v in str(err) for v in VISITED):
                    found.setdefault(op_key, []).append(name)
    Path(out_file).write_text(json.dumps(found))


_TYPE_IR = """<?xml version="1.0"?>
<net name="t" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>
<layer id="1" name="c" type="Convert" version="opset1"><data destination_type="{t}"/>
<input><port id="0" precision="FP32"><dim>1</dim></port></input>
<output><port id="1" precision="{t}"><dim>1</dim></port></output></layer>
<layer id="2" name="y" type="Result" version="opset1">
<input><port id="0" precision="{t}"><dim>1</dim></port></input></layer></layers>
<edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>
"""


def probe_types(candidates_file: str, out_file: str) -> None:
    """The element type names this release's IR reader knows (``--types``): an IR of
    ``Convert(destination_type=T)`` (ports of precision T) per candidate, read with
    ``Core.read_model``; a name it does not know fails as "Incorrect type" ("Unsupported
    element type" in newer releases), a known one loads or fails later (2023.x refuses a
    Result of type ``undefined``, a name it knows). The members of ``openvino.Type`` lag
    behind the reader: u2 is read from 2024.1, listed from 2026.0."""
    core = _runtime().Core()

    def known(name: str, folder: Path) -> bool:
        xml = folder / "t.xml"
        xml.write_text(_TYPE_IR.format(t=name))
        try:
            core.read_model(str(xml))
        except Exception as err:
            return not any(w in str(err) for w in ("Incorrect type", "Unsupported element"))
        return True

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "t.xml").write_text(_TYPE_IR.format(t="f32"))
        core.read_model(str(Path(tmp) / "t.xml"))  # the probe IR itself must load
        found = [n for n in json.loads(Path(candidates_file).read_text())
                 if known(n, Path(tmp))]
    Path(out_file).write_text(json.dumps(found))


# -- outside: wheels, venvs, the table ----------------------------------------------------


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def releases_on_index() -> list[str]:
    """The newest patch of every ``YEAR.N`` release from 2023.0 on."""
    out = _run([sys.executable, "-m", "pip", "index", "versions", "openvino"]).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("Available versions:"))
    newest: dict[tuple[int, int], tuple[int, ...]] = {}
    for text in line.split(":", 1)[1].split(","):
        parts = tuple(int(p) for p in text.strip().split("."))
        key = parts[:2]
        if key >= FIRST_RELEASE and parts > newest.get(key, ()):
            newest[key] = parts
    return [".".join(map(str, v)) for _, v in sorted(newest.items())]


def wheel(version: str, work: Path) -> Path:
    folder = work / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", f"openvino=={version}", "--no-deps",
           "-d", str(folder), "--only-binary=:all:", "--python-version", "3.11", "-q"]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    _run(cmd)
    return next(folder.glob(f"openvino-{version}-*.whl"))


def venv_python(version: str, whl: Path, work: Path) -> Path:
    """A venv with the release installed (made once; ``done`` marks a finished install)."""
    env = work / "venvs" / version
    python = env / "bin" / "python"
    if (env / "done").exists():
        return python
    _run([sys.executable, "-m", "venv", "--clear", str(env)])
    _run([str(python), "-m", "pip", "install", "-q", str(whl)])
    imported = subprocess.run([str(python), "-c", "import openvino"], capture_output=True,
                              text=True)
    if imported.returncode:  # built against numpy 1: its C API fails to import under 2
        _run([str(python), "-m", "pip", "install", "-q", "numpy<2"])
        _run([str(python), "-c", "import openvino"])
    (env / "done").write_text(whl.name)
    return python


def run_probe(python: Path, candidates: object, work: Path, tag: str,
              mode: str = "--probe") -> dict:
    """The probe (``mode``) in ``python``'s venv, its result kept in ``work/probes`` and
    reused while the candidates are the same; rerun without an op that crashes it."""
    folder = work / "probes"
    folder.mkdir(parents=True, exist_ok=True)
    cand, out, progress, key = (folder / f"{tag}.{x}"
                                for x in ("candidates", "json", "progress", "key"))
    text = json.dumps({"probe": PROBE_VERSIONS[mode], "candidates": candidates},
                      sort_keys=True)
    if out.exists() and key.exists() and key.read_text() == text:
        return json.loads(out.read_text())
    cand.write_text(json.dumps(candidates))
    out.unlink(missing_ok=True)
    skip: list[str] = []
    while True:
        progress.write_text("")
        extra = [str(progress), *skip] if mode == "--probe" else []
        done = subprocess.run([str(python), __file__, mode, str(cand), str(out), *extra],
                              capture_output=True, text=True,
                              cwd=str(folder), env={**os.environ, "PYTHONPATH": ""})
        if done.returncode == 0:
            key.write_text(text)
            return json.loads(out.read_text())
        at = progress.read_text()
        if done.returncode > 0 or not at or at in skip:
            raise RuntimeError(f"probe of {python} failed: {done.stderr[-2000:]}")
        skip.append(at)


def irtool_registry() -> set[str]:
    """Type names irtool's own registry holds (extra candidates)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from irtool.opset import registered

    return {op_type for op_type, _ in registered()}


def irtool_types() -> set[str]:
    """Element type names irtool's table holds (extra candidates)."""
    from irtool.ir.types import ELEMENT_TYPES

    return set(ELEMENT_TYPES)


def ranges(present: list[str], order: list[str]) -> list[str]:
    """``["2023.0..2024.6", "2025.2"]``: the releases in ``present`` as runs of ``order``."""
    runs: list[list[str]] = []
    for i, release in enumerate(order):
        if release not in present:
            continue
        if runs and order.index(runs[-1][-1]) == i - 1:
            runs[-1].append(release)
        else:
            runs.append([release])
    return [r[0] if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs]


def build_table(probes: dict[str, dict], wheels: dict[str, Path], candidates: list[str]) -> dict:
    order = list(probes)
    opsets: dict[str, dict[str, dict[str, list[str]]]] = {}
    ops: dict[str, dict[str, dict[str, list[str]]]] = {}
    types: dict[str, list[str]] = {}
    for release, found in probes.items():
        const = found["const_type"]
        for opset, members in found["opsets"].items():
            for name, version in members.items():
                ir_name = const if name == "Constant" else name
                entry = opsets.setdefault(opset, {}).setdefault(ir_name, {})
                entry.setdefault(version or "?", []).append(release)
        for key, info in found["ops"].items():
            name, version = key.rsplit("-", 1)
            ir_key = f"{const if name == 'Constant' else name}-{version}"
            entry = ops.setdefault(ir_key, {"attributes": {}, "typed": {}, "unread": []})
            if not info.get("read", True):
                entry["unread"].append(release)
            for attr in info["attributes"]:
                entry["attributes"].setdefault(attr, []).append(release)
            for attr in info["typed"]:
                entry["typed"].setdefault(attr, []).append(release)
        for name in found["element_types"]:
            types.setdefault(name, []).append(release)
    return {
        "about": "What each OpenVINO release knows, read from its wheel by "
                 "bench/openvino_support.py; do not edit by hand. Lists of releases are "
                 "runs of 'releases' (A..B: A, B and every release between them).",
        "generator": {"script": "bench/openvino_support.py", "version": SCRIPT_VERSION,
                      "python": sys.version.split()[0], "candidates": len(candidates)},
        "releases": {r: {"version": probes[r]["version"], "wheel": wheels[r].name,
                         "sha256": hashlib.sha256(wheels[r].read_bytes()).hexdigest(),
                         "crashed_probes": probes[r]["crashed"]} for r in order},
        "opsets": {opset: {name: {v or "?": ranges(rs, order) for v, rs in sorted(vs.items())}
                           for name, vs in sorted(members.items())}
                   for opset, members in sorted(opsets.items(), key=lambda kv: int(kv[0][5:]))},
        "ops": {key: {"attributes": {a: ranges(rs, order)
                                     for a, rs in sorted(info["attributes"].items())},
                      "typed": sorted(info["typed"]),
                      "attributes_unread": ranges(info["unread"], order)}
                for key, info in sorted(ops.items())},
        "element_types": {name: ranges(rs, order) for name, rs in sorted(types.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--releases", nargs="*", help="full versions (default: the index's)")
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "irtool-openvino-support")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    versions = args.releases or releases_on_index()
    wheels, pythons = {}, {}
    for version in versions:
        release = ".".join(version.split(".")[:2])
        wheels[release] = wheel(version, args.work)
        pythons[release] = venv_python(version, wheels[release], args.work)
        print(f"{release}: {wheels[release].name}", flush=True)
    names: set[str] = set(irtool_registry())
    for release, python in pythons.items():  # first pass: every release's factory names
        names |= set(run_probe(python, [], args.work, f"{release}.names")["factory_names"])
    candidates = sorted(names)
    probes = {}
    for release, python in pythons.items():
        probes[release] = run_probe(python, candidates, args.work, release)
        print(f"{release}: {len(probes[release]['opsets'])} opsets, "
              f"{len(probes[release]['ops'])} ops, {len(probes[release]['element_types'])} "
              "element types", flush=True)
    # Attributes some release reports for an op that another's visitor cannot convert,
    # and the element type names each reader accepts.
    reported: dict[str, set[str]] = {}
    for found in probes.values():
        for key, info in found["ops"].items():
            reported.setdefault(key, set()).update(info["attributes"])
    types = sorted({t for found in probes.values() for t in found["element_types"]}
                   | irtool_types())
    for release, python in pythons.items():
        ops = probes[release]["ops"]
        missing = {key: sorted(reported[key] - set(info["attributes"]))
                   for key, info in ops.items() if reported[key] - set(info["attributes"])}
        hidden = run_probe(python, missing, args.work, f"{release}.hidden", "--hidden")
        for key, names in hidden.items():
            ops[key]["attributes"] = sorted(set(ops[key]["attributes"]) | set(names))
        probes[release]["python_types"] = probes[release]["element_types"]
        probes[release]["element_types"] = run_probe(python, types, args.work,
                                                     f"{release}.types", "--types")
    table = build_table(probes, wheels, candidates)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        probe(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--hidden":
        probe_hidden(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--types":
        probe_types(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
