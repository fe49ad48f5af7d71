"""What irtool does with models beyond converting and running them: ``check`` (convert, run
onnxruntime, irtool and OpenVINO, compare), ``compare`` (tolerances, verdicts), ``inputs``
(random feeds of the declared shapes), ``inspection`` (the ``inspect`` summary and drawing),
``conformance`` (the ONNX node-case runner) and ``corpus`` (IR OpenVINO wrote for those
cases). Only numpy is imported here; onnx, onnxruntime and OpenVINO load inside the
functions that need them."""
