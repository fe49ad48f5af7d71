"""Frontends: other model formats turned into irtool's IR (``onnx``)."""
