"""Engines other than irtool's runtime that run an IR: OpenVINO's CPU runtime
(``irtool.engines.openvino``). ``irtool.run(backend=...)``, the ONNX backend and the
cross-check use them; none of them imports anything above ``irtool.ir``."""
