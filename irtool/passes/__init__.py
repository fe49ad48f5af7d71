"""Every rewrite, behind one interface (``base.Pass``: ``apply(target) -> PassResult``).

IR -> IR passes rewrite an in-memory ``Model`` (no ONNX, no files): ``prune``,
``identity``, ``fp16``, ``vectorize``, ``slice_inputs``. The compile-time passes rewrite
the steps of a plan being compiled (``program.Program``): ``constant_folding`` (with
``decompression``) and ``pool_fusion``. ``pipelines`` says which run when.
"""
