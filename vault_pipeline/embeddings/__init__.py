"""Sentence embedders shared by the index, the offline leak judge and the evaluation sets: the
offline MiniLM default (ONNX) and sentence-transformers models."""
