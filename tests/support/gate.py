"""A folder of IR as a deployment gate sees it, for the tests of ``irtool validate PATH...``.

``make_zoo`` copies OpenVINO-written IR into a tree: good models, one with errors (a Loop
whose condition output is renamed: ``PORT_MAP_PURPOSE``, ``LOOP_BODY_CONDITION``), one
with a warning only (an If named in an opset without If: ``UNKNOWN_OP``), an XML file that
is not IR, and a broken IR in a hidden folder (never searched). ``HAZARD`` is an extension
whose operation crashes or hangs the process that reads its attributes, and
``hazard_ir`` an IR using it, for the rows of a model that takes its worker down.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HAZARD = '''"""An operation that takes down whoever reads its attributes (tests only)."""
import os
import signal
import time

from irtool.opset import Attrs, Op, register


@register("Hazard", "extension")
class Hazard(Op):
    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        action = (attrs or {}).get("action")
        if action == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif action == "hang":
            time.sleep(3600)
'''

_HAZARD_IR = """<?xml version="1.0"?>
<net name="hazard" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>2</dim></port></output>
    </layer>
    <layer id="1" name="h" type="Hazard" version="extension">
      <data action="{action}"/>
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
      <output><port id="1" precision="FP32" names="y"><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="y" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
  </edges>
</net>
"""


def copy_ir(xml: Path, to: Path, *, edit: tuple[str, str] | None = None) -> Path:
    """``xml`` and its .bin copied to ``to`` (.xml), the text ``edit[0]`` replaced."""
    to.parent.mkdir(parents=True, exist_ok=True)
    text = xml.read_text()
    if edit is not None:
        assert edit[0] in text, f"{edit[0]!r} not in {xml}"
        text = text.replace(*edit)
    to.write_text(text)
    shutil.copyfile(xml.with_suffix(".bin"), to.with_suffix(".bin"))
    return to


BROKEN = ('purpose="execution_condition"', 'purpose="cond"')
WARNED = ('type="If" version="opset8"', 'type="If" version="opset3"')


def make_zoo(irs: dict[str, Path], root: Path) -> dict[str, Path]:
    """The tree described above under ``root``; the IR files by role."""
    zoo = {
        "good": copy_ir(irs["test_scan9_sum"], root / "good.xml"),
        "nested": copy_ir(irs["test_if"], root / "sub" / "deep" / "nested.xml"),
        "broken": copy_ir(irs["test_loop11"], root / "sub" / "broken.xml", edit=BROKEN),
        "warned": copy_ir(irs["test_if"], root / "warned.xml", edit=WARNED),
    }
    copy_ir(irs["test_loop11"], root / ".cache" / "hidden.xml", edit=BROKEN)
    (root / "pom.xml").write_text("<project/>\n")
    return zoo


def hazard_ir(folder: Path, action: str) -> Path:
    """An IR whose one operation is ``Hazard`` (``action``: crash, hang, none)."""
    folder.mkdir(parents=True, exist_ok=True)
    xml = folder / f"hazard_{action}.xml"
    xml.write_text(_HAZARD_IR.format(action=action))
    xml.with_suffix(".bin").write_bytes(b"")
    return xml


def hazard_extension(folder: Path) -> Path:
    path = folder / "hazard.py"
    path.write_text(HAZARD)
    return path


def irtool(*args: str | Path, cwd: Path | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m irtool ARGS`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
