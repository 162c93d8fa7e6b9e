"""`fuseflowc import`: ONNX models to fuseflowc programs with the model's values (docs/import.md)."""
