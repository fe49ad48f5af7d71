"""Differential testing of irtool against onnxruntime (issue 21), shared by the test suite
(``tests/differential/``) and the long runs of ``bench/differential.py``.

* ``generate``: random valid ONNX models with Loop, Scan and If, and their inputs, every
  decision drawn from a ``support.fuzzing.Chooser`` (hypothesis or a seeded
  ``random.Random``); ``cases()`` is the hypothesis strategy.
* ``forms``: the irtool forms compared with onnxruntime (one list, ``FORMS``), how each
  runs, and the verdict of each form on one case, with OpenVINO's own ONNX frontend as the
  arbiter between an irtool bug and an engine disagreement.
* ``shrink``: a failing case reduced by replaying a shorter, smaller choice sequence.
"""
