"""Engines: ways of computing a model's outputs from inputs named by tensor, behind one
interface (``base.Engine``): onnxruntime, irtool's own runtime, OpenVINO's CPU runtime;
``isolate`` runs any of them in a worker process. ``irtool.run(backend=...)``, the ONNX
backend and ``irtool check`` use them."""
