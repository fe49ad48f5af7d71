"""irtool on IRs made the way Intel deployment flows make them: validate, round trip, and
irtool's runtime against OpenVINO over a multi-step decode.

With the producers installed (optimum-intel, nncf, torch, transformers, openvino-tokenizers:
pyproject's ``deploy`` extra; tests/fixtures/ir_producers/export.py says how to install
them), the IRs are built afresh into a temporary folder at wider sizes (GPT2 / Llama / T5 /
Whisper through optimum-cli, NNCF int8 / int4 / nf4 / mxfp4 / fp8 weights and FakeQuantize,
CNNs through ov.convert_model and ovc, an IR v10, a tokenizer). Without them, or with
``--fixtures``, it runs over the small IRs checked in under tests/fixtures/ir_producers.

Per IR it prints:

* validate: ``clean``, or the number of errors / warnings and the first one;
* round trip: ``irtool.save(irtool.load(x))`` against ``x``: ``exact`` when the XML is
  canonically equal (irtool.ir.serde.canonical) and the .bin byte-identical, else the first
  difference; then whether irtool validates its own copy;
* runtime: irtool against OpenVINO (run in a child process, one infer request for all the
  steps of a stateful model) on every step of the recorded decode: ``match`` with the largest
  difference, or the first disagreement, or irtool's one-line error; and the wall time of
  each side for the whole session (OpenVINO's includes compiling and the trip to its child).

    python bench/deployment_irs.py [--fixtures] [--only NAME,NAME] [--keep DIR] [--irs DIR]

``--irs DIR`` reads IRs built earlier (``export.py --heavy --out DIR``) instead of building.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "ir_producers"
sys.path.insert(0, str(FIXTURES))

import producer_irs  # noqa: E402  (beside the fixtures it reads)
from tqdm import tqdm  # noqa: E402

import irtool  # noqa: E402
from irtool.engines.base import first_line  # noqa: E402
from irtool.ir import round_trip_difference  # noqa: E402

PRODUCERS = ("optimum.intel", "nncf", "torch", "transformers")
# OpenVINO's CPU plugin runs FakeQuantize with int8 kernels: close, not equal.
ATOL = {"cnn_int8_fq": 2e-3}


def producers_missing() -> list[str]:
    return [m for m in PRODUCERS if importlib.util.find_spec(m.split(".")[0]) is None
            or importlib.util.find_spec(m) is None]


def build_heavy(folder: Path) -> None:
    sys.path.insert(0, str(FIXTURES))
    import export

    export.export_all(folder, heavy=True)


def validate_cell(xml: Path) -> str:
    problems = irtool.validate(xml)
    errors = [p for p in problems if p.severity == "error"]
    if not problems:
        return "clean"
    first = (errors or problems)[0]
    return f"{len(errors)} errors, {len(problems) - len(errors)} warnings: {first.code} " \
           f"{first.message}"


def round_trip_cells(xml: Path, scratch: Path) -> tuple[str, str]:
    copy = scratch / xml.name
    try:
        irtool.save(irtool.load(xml), copy)
    except Exception as err:  # the reason is the finding
        return first_line(err), "-"
    found = round_trip_difference(xml, copy)
    errors = [p for p in irtool.validate(copy) if p.severity == "error"]
    saved = "clean" if not errors else f"{len(errors)} errors: {errors[0].message}"
    return ("exact" if found is None else found), saved


def runtime_cell(ir: producer_irs.ProducerIR) -> tuple[str, float, float]:
    start = time.perf_counter()
    try:
        expected = producer_irs.openvino_steps(ir)
    except Exception as err:
        return f"OpenVINO: {first_line(err)}", time.perf_counter() - start, 0.0
    ov_seconds = time.perf_counter() - start
    if producer_irs.openvino_extensions(ir) is None:
        ov_seconds = 0.0  # OpenVINO's outputs recorded at export (no openvino-tokenizers here)
    start = time.perf_counter()
    try:
        ours = producer_irs.irtool_steps(ir)
    except Exception as err:
        return f"irtool: {first_line(err).replace(str(ir.folder) + '/', '')}", ov_seconds, 0.0
    ours_seconds = time.perf_counter() - start
    found = producer_irs.steps_difference(ours, expected, atol=ATOL.get(ir.name, 1e-4))
    if found:
        return f"differs: {found}", ov_seconds, ours_seconds
    return f"match (max diff {producer_irs.max_abs_diff(ours, expected):.2g})", ov_seconds, \
        ours_seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", action="store_true",
                        help="use the checked-in IRs even when the producers are installed")
    parser.add_argument("--only", default="", help="comma-separated IR names")
    parser.add_argument("--keep", type=Path, help="build the heavy IRs into this folder")
    parser.add_argument("--irs", type=Path, help="use the IRs (and MANIFEST.json) built "
                        "earlier into this folder by export.py")
    args = parser.parse_args(argv)

    missing = producers_missing()
    with tempfile.TemporaryDirectory(prefix="deployment-irs-") as tmp:
        if args.irs:
            folder = args.irs
            print(f"IRs: built earlier, in {folder}")
        elif args.fixtures or missing:
            folder = FIXTURES
            why = "--fixtures" if args.fixtures else f"missing: {', '.join(missing)}"
            print(f"IRs: the checked-in fixtures in {folder.relative_to(ROOT)} ({why})")
        else:
            folder = args.keep or Path(tmp) / "irs"
            print(f"IRs: built now, wider, into {folder}")
            build_heavy(folder)
        info = producer_irs.manifest_info(folder)
        versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
        print(f"made with: {versions}")
        if info["skipped"]:
            print(f"skipped: {info['skipped']}")
        wanted = {n for n in args.only.split(",") if n}
        irs = [ir for ir in producer_irs.load_manifest(folder)
               if not wanted or ir.name in wanted]
        scratch = Path(tmp) / "copies"
        scratch.mkdir()
        print()
        print("| IR | producer | steps | validate | round trip | irtool validates its copy "
              "| irtool vs OpenVINO | OpenVINO s | irtool s |")
        print("|---|---|---|---|---|---|---|---|---|")
        # The table goes to stdout as it grows; a bar on a terminal's stderr says how far.
        for ir in tqdm(irs, desc="deployment IRs", unit="IR", leave=False,
                       disable=not sys.stderr.isatty()):
            validated = validate_cell(ir.xml)
            trip, saved = round_trip_cells(ir.xml, scratch)
            runtime, ov_seconds, ours_seconds = runtime_cell(ir)
            steps = len(ir.entry["feeds"])
            ours = f"{ours_seconds:.2f}" if ours_seconds else "-"
            theirs = f"{ov_seconds:.2f}" if ov_seconds else "recorded"
            print(f"| {ir.name} | {ir.entry['producer']} | {steps} | {validated} | {trip} | "
                  f"{saved} | {runtime} | {theirs} | {ours} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
