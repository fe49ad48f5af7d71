"""IR -> IR passes: transformations of an in-memory ``Model`` (no ONNX, no files)."""
