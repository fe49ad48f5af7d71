"""ONNX models written by the real exporters, through irtool and OpenVINO.

For every fixture in ``tests/fixtures/onnx_exporters/MANIFEST.json`` (TorchScript and
dynamo exporters, onnxscript, tf2onnx, skl2onnx, onnxmltools; see that folder's
``export.py``), one row:

* **converts**: ``irtool.convert`` on the ``.onnx`` (or the first line of its error);
* **irtool**: irtool's runtime on the saved IR matches onnxruntime;
* **OV (irtool IR)**: OpenVINO's CPU runtime on irtool's IR matches onnxruntime;
* **OV frontend**: OpenVINO's own ONNX frontend (``ov.Core().read_model(onnx_path)``)
  matches onnxruntime, for comparison.

onnxruntime on the fixture's checked-in inputs is the reference. Every backend runs in
a child process (``irtool.engines.isolate``), so a crash or hang is that cell's
reason and the other rows still run. Tolerances are ``irtool.tools.compare``'s
defaults (f64 compared at f32's, since OpenVINO's CPU plugin computes f64 in f32).

    python bench/exporter_models.py [NAME ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
from tqdm import tqdm

import irtool
from irtool.engines.base import EngineResult, first_line
from irtool.engines.isolate import Isolated
from irtool.engines.onnxruntime import OnnxRuntimeEngine
from irtool.engines.openvino import OpenVINOEngine, OpenVINOFrontendEngine
from irtool.engines.runtime import IrtoolEngine
from irtool.tools.compare import compare_outputs

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "onnx_exporters"
COLUMNS = ("converts", "irtool", "OV (irtool IR)", "OV frontend")


@dataclass
class Row:
    """One fixture's cells: ``ok`` or a one-line reason each."""

    name: str
    producer: str
    converts: str
    irtool: str
    ov_ir: str
    ov_frontend: str

    def cells(self) -> list[str]:
        return [self.name, self.producer, self.converts, self.irtool, self.ov_ir,
                self.ov_frontend]


def load_manifest(folder: Path = FIXTURES) -> list[dict]:
    """The fixture entries of the folder's MANIFEST.json."""
    return json.loads((folder / "MANIFEST.json").read_text())["fixtures"]


def load_inputs(entry: dict, folder: Path = FIXTURES) -> dict[str, np.ndarray]:
    """The fixture's inputs by ONNX input name."""
    with np.load(folder / entry["inputs_file"]) as npz:
        return {name: npz[name] for name in npz.files}


def verdict(outcome: EngineResult, reference: EngineResult, outputs: list[str]) -> str:
    """``ok`` when every output matches the reference, else what is wrong, in one line."""
    if outcome.error is not None:
        return f"error: {outcome.error}"
    rows = compare_outputs(outputs, outcome.outputs or {}, reference.outputs or {})
    bad = [f"{r.output}: {r.describe()}" for r in rows if not r.ok]
    return "ok" if not bad else "WRONG: " + "; ".join(bad)


def run_fixture(entry: dict, workdir: Path, folder: Path = FIXTURES) -> Row:
    """Convert one fixture and compare every backend with onnxruntime."""
    onnx_path = folder / entry["file"]
    feed = load_inputs(entry, folder)
    proto = onnx.load(str(onnx_path))
    outputs = [o.name for o in proto.graph.output]
    reference = Isolated(OnnxRuntimeEngine(proto)).try_run(feed)
    frontend = Isolated(OpenVINOFrontendEngine(onnx_path)).try_run(feed)
    row = Row(entry["name"], entry["producer"], "ok", "-", "-", "-")
    try:
        model = irtool.convert(onnx_path)
        xml = irtool.save(model, workdir / f"{entry['name']}.xml")
    except Exception as err:  # a converter bug is this row's reason too
        row.converts = first_line(err).replace(f"{onnx_path}: ", "")
        xml = None
    if reference.error is not None:
        no_ref = f"no reference (onnxruntime: {reference.error})"
        row.irtool = row.ov_ir = row.ov_frontend = no_ref
        return row
    if xml is not None:
        row.irtool = verdict(Isolated(IrtoolEngine(xml)).try_run(feed), reference, outputs)
        row.ov_ir = verdict(Isolated(OpenVINOEngine(xml)).try_run(feed), reference, outputs)
    row.ov_frontend = verdict(frontend, reference, outputs)
    return row


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def format_table(rows: list[Row], what: str = "fixture") -> str:
    """A Markdown table, then one line of totals per column (``what``: the rows' noun)."""
    head = [what, "producer", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row.cells()) + " |" for row in rows]
    totals = [sum(row.cells()[2 + i] == "ok" for row in rows) for i in range(len(COLUMNS))]
    lines.append("")
    lines.append(f"{len(rows)} {what}s: " + ", ".join(
        f"{name} {count}" for name, count in zip(COLUMNS, totals)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these fixtures (default: all)")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)

    entries = load_manifest()
    unknown = sorted(set(args.names) - {e["name"] for e in entries})
    if unknown:
        print(f"unknown fixture(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="irtool-exporters-") as tmp:
        chosen = [e for e in entries if not args.names or e["name"] in args.names]
        # A bar on a terminal; elsewhere each model's name as it is done.
        bar = tqdm(chosen, desc="exporter models", unit="model", leave=False,
                   disable=not sys.stderr.isatty())
        for entry in bar:
            bar.set_postfix_str(entry["name"])
            rows.append(run_fixture(entry, Path(tmp)))
            if bar.disable:
                print(f"  {entry['name']}", file=sys.stderr, flush=True)
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
