"""What ``irtool reduce`` leaves in its output folder: a bug report a user can paste.

``reduced.xml`` and ``reduced.bin`` (the smallest IR found), ``inputs.npz`` (its inputs by
name), for ``disagree`` ``expected.npz`` (irtool's executor's outputs, which OpenVINO's
miss), and ``README.md``: one paragraph saying what goes wrong, where (OpenVINO's version,
the CPU and its vector extensions, the platform), how small the IR is and what it was
reduced from, then the few lines of OpenVINO's Python API that show it. All the files are
written at once, or none.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...core.files import PathLike, npz_bytes, write_files
from ...engines.openvino import REFERENCE_CONFIG
from ...ir import Model
from ...ir.graph import tensor_name
from ..compare import default_tolerance
from .conditions import Command, Condition, Disagree, OpenVINOCrash, ValidateCode, Verdict

XML_NAME = "reduced.xml"

# The CPU features OpenVINO's CPU plugin chooses its kernels by.
_ISA_FLAGS = ("sse4_2", "avx", "avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16",
              "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve")


def openvino_version() -> str:
    try:
        import openvino as ov

        return str(ov.get_version())
    except Exception:  # OpenVINO missing or broken: the report says so
        return "not importable"


def cpu_description() -> str:
    """``AMD EPYC (avx2, avx512f, avx512_bf16), Linux x86_64``: the CPU's name and the vector
    extensions OpenVINO's CPU plugin picks its kernels by (from /proc/cpuinfo where there is
    one), then the system."""
    name, flags = platform.processor() or "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name in ("unknown CPU", platform.machine()):
                name = value.strip()
            elif key.strip() in ("flags", "Features"):
                flags.update(value.split())
    except OSError:
        pass
    isa = [f for f in _ISA_FLAGS if f in flags]
    return (f"{name}" + (f" ({', '.join(isa)})" if isa else "")
            + f", {platform.system()} {platform.machine()}")


def layer_list(model: Model) -> str:
    """The top graph in topological order: ``Parameter x, Sin, Result``."""
    graph = model.graph
    parts = []
    for lid in graph.topological_order():
        layer = graph.layer(lid)
        if layer.type == "Parameter":
            parts.append(f"Parameter {tensor_name(layer, layer.outputs[0])}")
        elif layer.bodies:
            inner = sum(1 for body in layer.bodies.values() for _ in body.walk())
            parts.append(f"{layer.type} (bodies of {inner} layers)")
        else:
            parts.append(layer.type)
    return ", ".join(parts)


def write_report(out_dir: Path, model_bytes: tuple[bytes, bytes], feed: dict[str, np.ndarray],
                 model: Model, condition: Condition, verdict: Verdict, *,
                 source: str, before: tuple[int, int], after: tuple[int, int]) -> Path:
    """Write the folder's files (see the module), all or none; the ``.xml``'s path."""
    xml_bytes, bin_bytes = model_bytes
    files: dict[PathLike, bytes | Sequence[bytes | memoryview]] = {
        out_dir / "reduced.bin": bin_bytes}
    files[out_dir / "inputs.npz"] = npz_bytes(feed)
    expected = verdict.outputs.get("irtool") if isinstance(condition, Disagree) else None
    if expected is not None:
        files[out_dir / "expected.npz"] = npz_bytes(expected)
    files[out_dir / "README.md"] = readme(model, condition, verdict, source=source,
                                          before=before, after=after,
                                          inputs=list(feed)).encode()
    files[out_dir / XML_NAME] = xml_bytes  # last: readers look for the .xml first
    write_files(files)
    return out_dir / XML_NAME


def readme(model: Model, condition: Condition, verdict: Verdict, *, source: str,
           before: tuple[int, int], after: tuple[int, int], inputs: list[str]) -> str:
    """The README: a title, the paragraph, the layers, the code that reproduces it."""
    ov_version = openvino_version()
    title = {OpenVINOCrash: "OpenVINO's CPU plugin crashes on this IR",
             Disagree: "OpenVINO's CPU plugin computes other values than irtool on this IR",
             ValidateCode: "irtool validate reports a problem in this IR",
             Command: "A command fails on this IR"}.get(type(condition), "A reduced IR")
    if isinstance(condition, OpenVINOCrash) and condition.signal:
        title = f"OpenVINO's CPU plugin dies of {condition.signal} on this IR"
    size = f"{after[0]} layer{'s' * (after[0] != 1)}"
    if after[1] != after[0]:
        size += f", {after[1]} with those of its bodies"
    feeds = f"the inputs in `inputs.npz` ({', '.join(inputs)})" if inputs else "no inputs"
    paragraph = (
        f"With OpenVINO {ov_version} on {cpu_description()}, Python "
        f"{platform.python_version()}: {verdict.detail}. The IR (`{XML_NAME}`, `reduced.bin`, "
        f"{size}) takes {feeds}. It was reduced by `irtool reduce` from `{Path(source).name}` "
        f"({before[0]} layers, {before[1]} with bodies) keeping one condition true: "
        f"{condition.describe()}.")
    lines = [f"# {title}", "", paragraph, "", f"Layers: {layer_list(model)}.", "",
             "To reproduce:", ""]
    lines += _reproducer(model, condition, verdict)
    return "\n".join(lines) + "\n"


def _reproducer(model: Model, condition: Condition, verdict: Verdict) -> list[str]:
    if isinstance(condition, ValidateCode):
        return ["```sh", f"irtool validate {XML_NAME}   # reports {condition.code}", "```"]
    if isinstance(condition, Command):
        return ["```sh", condition.command_for(Path(XML_NAME)), "```"]
    config = ", ".join(f'"{k}": "{v}"' for k, v in REFERENCE_CONFIG.items())
    code = ["```python", "import numpy as np", "import openvino as ov", "",
            "core = ov.Core()",
            f'model = core.read_model("{XML_NAME}")',
            "# f32 everywhere: OpenVINO's exact modes",
            f'compiled = core.compile_model(model, "CPU", {{{config}}})',
            'with np.load("inputs.npz") as data:',
            "    inputs = {name: data[name] for name in data.files}"]
    if isinstance(condition, OpenVINOCrash):
        dies = f"dies of {condition.signal}" if condition.signal else "fails"
        code += [f"outputs = compiled(inputs)  # {dies} (in compile_model above, or here)"]
    else:
        names = model.output_names()
        expected = verdict.outputs.get("irtool", {})
        first = next((np.asarray(expected[n]) for n in names if n in expected), None)
        rtol, atol = default_tolerance(first.dtype) if first is not None else (1e-4, 1e-5)
        if isinstance(condition, Disagree):
            rtol = condition.rtol if condition.rtol is not None else rtol
            atol = condition.atol if condition.atol is not None else atol
        code += ["outputs = compiled(inputs)",
                 'expected = np.load("expected.npz")  # irtool\'s executor',
                 f"for port, name in zip(compiled.outputs, {names!r}):",
                 f"    np.testing.assert_allclose(outputs[port], expected[name], "
                 f"rtol={rtol:g}, atol={atol:g})  # fails"]
    return [*code, "```"]
