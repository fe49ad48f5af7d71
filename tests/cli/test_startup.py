"""Start-up: what ``import irtool`` and ``irtool --version`` import (a pre-commit hook pays
for it on every commit). Timings are bench/startup.py's; here, the modules: none of onnx,
onnxruntime, openvino; for ``--version`` not numpy or networkx either."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import SAMPLES

import irtool

PROBE = """
import contextlib, io, sys
{code}
heavy = ("numpy", "networkx", "onnx", "onnxruntime", "openvino", "tqdm", "lxml")
print(" ".join(m for m in heavy if m in sys.modules))
"""


def loaded(code: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(code=code)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_import_irtool_loads_nothing_heavy() -> None:
    assert loaded("import irtool") == set()


def test_version_loads_nothing_heavy() -> None:
    code = ("from irtool.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n        main(['--version'])\n    except SystemExit:\n        pass\n"
            "assert out.getvalue().startswith('irtool '), out.getvalue()")
    assert loaded(code) == set()


def test_validate_of_one_file_loads_no_onnx_nor_openvino(tmp_path: Path) -> None:
    """OpenVINO and onnx stay out of validating irtool's own IR (OpenVINO is asked only
    about an operation irtool does not know, ``validation.ops``)."""
    xml = irtool.save(irtool.convert(SAMPLES / "predict_net.onnx"), tmp_path / "p.xml")
    code = (f"from irtool.cli import main\nrc = main(['validate', '-q', {str(xml)!r}])\n"
            "assert rc == 0")
    assert loaded(code) & {"onnx", "onnxruntime", "openvino"} == set()


def test_every_export_is_reachable_and_typed_right() -> None:
    """The names ``import irtool`` binds on first use are the API's own objects."""
    from irtool import api
    from irtool.core.errors import IRToolError

    for name in irtool.__all__:
        assert getattr(irtool, name) is not None, name
    assert irtool.validate is api.validate and irtool.IRToolError is IRToolError
    assert set(irtool.__all__) <= set(dir(irtool))


def test_cli_defaults_written_out_match_the_api() -> None:
    """The parser of ``reduce`` writes the API's default out so that building it loads
    nothing heavy; the two must stay one value."""
    from irtool import api
    from irtool.cli import reduce

    assert reduce.REDUCE_TIMEOUT_S == api.REDUCE_TIMEOUT_S
