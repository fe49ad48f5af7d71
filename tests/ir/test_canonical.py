"""``irtool.ir.serde.canonical``: what counts as the same IR XML, and what does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from irtool.ir import round_trip_difference, xml_difference

BASE = b"""<?xml version="1.0"?>
<net name="m" version="11">
\t<layers>
\t\t<layer id="0" name="x" type="Parameter" version="opset1">
\t\t\t<data shape="2" element_type="f32" />
\t\t\t<rt_info><attribute name="fused_names" version="0" value="x" /></rt_info>
\t\t</layer>
\t\t<layer id="1" name="y" type="Result" version="opset1" />
\t</layers>
\t<edges>
\t\t<edge from-layer="0" from-port="0" to-layer="1" to-port="0" />
\t</edges>
\t<rt_info><Runtime_version value="2026.4" /></rt_info>
</net>
"""


def test_same_document_whitespace_quoting_and_empty_elements_aside() -> None:
    other = (BASE.replace(b"\t", b"  ").replace(b'"', b"'")
             .replace(b"<?xml version='1.0'?>\n", b"")
             .replace(b"<layer id='1' name='y' type='Result' version='opset1' />",
                      b"<layer id='1' name='y' type='Result' version='opset1'></layer>"))
    assert xml_difference(BASE, BASE) is None
    assert xml_difference(BASE, other) is None


def test_attribute_order_counts_only_when_asked() -> None:
    swapped = BASE.replace(b'shape="2" element_type="f32"', b'element_type="f32" shape="2"')
    assert xml_difference(BASE, swapped) is None
    found = xml_difference(BASE, swapped, attribute_order=True)
    assert found is not None and "attribute order" in found and "layer[id=0]/data" in found


@pytest.mark.parametrize("change, expected", [
    ((b'element_type="f32"', b'element_type="f16"'),
     "line 5 vs 5: net/layers/layer[id=0]/data: attribute 'element_type' 'f32' != 'f16'"),
    ((b'\t<rt_info><Runtime_version value="2026.4" /></rt_info>\n', b""),
     "net: 3 child elements != 2; only the first has <rt_info> at line 13"),
    ((b'<data shape="2" element_type="f32" />\n\t\t\t<rt_info>'
      b'<attribute name="fused_names" version="0" value="x" /></rt_info>',
      b'<rt_info><attribute name="fused_names" version="0" value="x" /></rt_info>\n\t\t\t'
      b'<data shape="2" element_type="f32" />'),
     "net/layers/layer[id=0]/data: element <data> != <rt_info>"),
    ((b"<rt_info><Runtime_version", b"<rt_info>note<Runtime_version"),
     "net/rt_info: text '' != 'note'"),
])
def test_first_difference_is_named(change: tuple[bytes, bytes], expected: str) -> None:
    changed = BASE.replace(*change)
    assert changed != BASE
    found = xml_difference(BASE, changed)
    assert found is not None and expected in found, found


def test_round_trip_compares_the_bin_bytes(tmp_path: Path) -> None:
    for name, weights in (("a", b"\x00\x01\x02"), ("b", b"\x00\x01\x02"), ("c", b"\x00\x09\x02"),
                          ("d", b"\x00\x01")):
        (tmp_path / f"{name}.xml").write_bytes(BASE)
        (tmp_path / f"{name}.bin").write_bytes(weights)
    assert round_trip_difference(tmp_path / "a.xml", tmp_path / "b.xml") is None
    assert round_trip_difference(tmp_path / "a.xml", tmp_path / "c.xml") == \
        ".bin: first differing byte at offset 1"
    assert round_trip_difference(tmp_path / "a.xml", tmp_path / "d.xml") == ".bin: 3 bytes != 2"
    (tmp_path / "e.xml").write_bytes(BASE.replace(b'"f32"', b'"i32"'))
    found = round_trip_difference(tmp_path / "a.xml", tmp_path / "e.xml")
    assert found is not None and found.startswith("XML: ")
