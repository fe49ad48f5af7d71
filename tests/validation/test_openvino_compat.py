"""``validate --openvino VERSION``: what an OpenVINO release would not load, flagged offline.

The expected releases are OpenVINO's own behaviour, not the table's: each IR below (written
by the installed OpenVINO) was read with ``ov.Core().read_model`` by every release's wheel
installed in a throw-away venv, when the table was made, and ``FIRST_READ`` records the
first release that read it (the older ones refused it: "Incorrect type: F8E8M0", "Cannot
create SearchSorted layer ... opset15", "Opset opset15 doesn't contain the operation").
The check must flag exactly the releases before that one. An attribute an old release
does not know is read as absent, not refused: for that, each release's ``serialize`` said
whether it writes the attribute.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from fixtures.ir_producers.producer_irs import load_manifest
from openvino import opset13 as o13
from openvino import opset15 as o15

import irtool
from irtool.validation.compat import check_openvino, known_releases, resolve_release

# what OpenVINO's read_model first loads (releases before it refuse the IR)
FIRST_READ = {
    "search_sorted": "2024.5",  # 2024.4 has an opset15 without SearchSorted
    "search_sorted_in_if": "2024.5",
    "convert_nf4": "2023.2",
    "convert_string": "2023.3",
    "convert_f8e4m3": "2024.0",
    "convert_u2": "2024.1",
    "convert_f8e8m0": "2024.3",
    "convert_f4e2m1": "2024.3",
}


def _models() -> dict[str, ov.Model]:
    models = {}
    s = o13.parameter([4], np.float32, name="s")
    v = o13.parameter([3], np.float32, name="v")
    models["search_sorted"] = ov.Model([o15.search_sorted(s, v, name="ss")], [s, v])
    x = o13.parameter([4], np.float32, name="x")
    then_x = o13.parameter([4], np.float32, name="then_x")
    else_x = o13.parameter([4], np.float32, name="else_x")
    then = ov.Model([o15.search_sorted(then_x, then_x, name="inner")], [then_x])
    other = ov.Model([o13.convert(o13.relu(else_x), "i64")], [else_x])
    branch = o13.if_op(o13.constant(np.array(True)))
    branch.set_friendly_name("branch")
    branch.set_then_body(then)
    branch.set_else_body(other)
    branch.set_input(x.output(0), then_x, else_x)
    out = branch.set_output(then.get_results()[0], other.get_results()[0])
    models["search_sorted_in_if"] = ov.Model([out], [x])
    for t in ("nf4", "string", "f8e4m3", "u2", "f8e8m0", "f4e2m1"):
        p = o13.parameter([4], np.float32, name="p")
        models[f"convert_{t}"] = ov.Model([o13.convert(p, t, name="to")], [p])
    return models


@pytest.fixture(scope="module")
def irs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compat")
    found = {}
    for name, model in _models().items():
        found[name] = folder / f"{name}.xml"
        ov.save_model(model, str(found[name]), compress_to_fp16=False)
    return found


def _line_of(xml: Path, text: str) -> int:
    return next(i + 1 for i, ln in enumerate(xml.read_text().splitlines()) if text in ln)


@pytest.mark.parametrize("name", sorted(FIRST_READ))
def test_flagged_exactly_for_the_releases_that_refuse_it(name: str, irs: dict[str, Path]
                                                         ) -> None:
    xml = irs[name]
    releases = known_releases()
    first = releases.index(FIRST_READ[name])
    model = irtool.load(xml)
    for i, release in enumerate(releases):
        found = check_openvino(model, release, file=str(xml))
        assert bool(found) == (i < first), (name, release, [d.format() for d in found])
        assert all(d.code == "OPENVINO_COMPAT" and d.severity == "error" for d in found)
        for d in found:
            assert release in d.message and d.layer_name is not None, d.format()
    # and said through validate, where the layer is
    [d] = [d for d in irtool.validate(xml, openvino=releases[first - 1])
           if d.code == "OPENVINO_COMPAT"][:1]
    assert f"first in {FIRST_READ[name]}" in d.message
    if name.startswith("convert_"):
        assert d.layer_name == "to" and d.line is not None
        assert name.removeprefix("convert_") in d.message
    elif name == "search_sorted":
        assert (d.layer_name, d.line) == ("ss", _line_of(xml, 'name="ss"'))


def test_an_attribute_an_old_release_does_not_read(tmp_path: Path) -> None:
    """RandomUniform-8's ``alignment``: OpenVINO 2024.2's serializer writes no such
    attribute (its op has none, and its reader would ignore it: the numbers would follow
    another framework's convention), 2024.3's writes ``alignment="tensorflow"``; checked
    with each release's ``serialize`` when the table was made."""
    from openvino import opset8 as o8

    shape = o13.parameter([2], np.int64, name="shape")
    rand = o8.random_uniform(shape, o13.constant(np.float32(0)), o13.constant(np.float32(1)),
                             "f32", name="rand")
    xml = tmp_path / "rand.xml"
    ov.save_model(ov.Model([rand], [shape]), str(xml))
    assert 'alignment="' in xml.read_text()
    old = [d for d in irtool.validate(xml, openvino="2024.2") if d.code == "OPENVINO_COMPAT"]
    assert [(d.layer_name, d.line) for d in old] == [("rand", _line_of(xml, 'name="rand"'))]
    assert "attribute alignment of RandomUniform-opset8 is not in OpenVINO 2024.2 " \
           "(first in 2024.3)" in old[0].message
    assert [d for d in irtool.validate(xml, openvino="2024.3") if d.code == "OPENVINO_COMPAT"
            ] == []


def test_a_body_layer_is_named_with_its_scope(irs: dict[str, Path]) -> None:
    xml = irs["search_sorted_in_if"]
    found = [d for d in irtool.validate(xml, openvino="2024.4")
             if d.code == "OPENVINO_COMPAT"]
    assert [(d.layer_name, d.line) for d in found] == [("inner", _line_of(xml, 'name="inner"'))]
    branch_id = next(layer.id for layer in irtool.load(xml).graph.layers
                     if layer.name == "branch")
    assert found[0].scope == f"{branch_id}/then_body"
    assert "SearchSorted-opset15 is not in OpenVINO 2024.4's opset15" in found[0].message


def test_openvinos_own_irs_are_clean_for_the_installed_release(
        ov_control_flow_irs: dict[str, Path]) -> None:
    installed = resolve_release(ov.get_version())
    files = [ir.xml for ir in load_manifest()] + list(ov_control_flow_irs.values())
    for xml in files:
        found = [d.format() for d in irtool.validate(xml, openvino=installed)
                 if d.code == "OPENVINO_COMPAT"]
        assert found == [], xml


def test_releases_and_their_spellings() -> None:
    releases = known_releases()
    assert releases[0] == "2023.0" and "2026.4" in releases
    assert resolve_release("2024.6.0") == resolve_release("2024.6") == "2024.6"
    assert resolve_release("2026.4.1-22982-e213a147257-releases/2026/4") == "2026.4"
    with pytest.raises(ValueError, match=r"known are 2023\.0, 2023\.1"):
        resolve_release("2022.3")


def test_the_table_says_where_it_came_from() -> None:
    from importlib import resources

    table = json.loads(resources.files("irtool").joinpath(
        "data/openvino_support.json").read_text())
    assert table["generator"]["script"] == "bench/openvino_support.py"
    for release, info in table["releases"].items():
        assert info["version"].startswith(release) and info["wheel"].startswith(
            f"openvino-{info['version'].split('-')[0]}"), release
        assert len(info["sha256"]) == 64


def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", "validate", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_command_line(irs: dict[str, Path]) -> None:
    xml = irs["convert_f8e8m0"]
    old = _cli(xml, "--openvino", "2024.2")
    assert old.returncode == 1
    assert f"{xml}:" in old.stdout and "OPENVINO_COMPAT" in old.stdout
    assert "element type f8e8m0" in old.stdout and "first in 2024.3" in old.stdout
    new = _cli(xml, "--openvino", "2024.3")
    assert new.returncode == 0, new.stdout
    plain = _cli(xml)
    assert plain.returncode == 0
    unknown = _cli(xml, "--openvino", "2019.1")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.count("\n") == 1
    assert unknown.stderr.startswith("irtool validate: unknown OpenVINO release '2019.1': "
                                     "known are 2023.0, ")
