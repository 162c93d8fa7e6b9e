"""Tensor data: fiber-tree storage (fibertree), files (io), random inputs (gen), graph data sets."""
