"""IR passes that know ONNX-frontend conventions (e.g. the sliced loop inputs pass)."""
