"""Encode: segments packed into fixed-shape batches (packing), the JAX encoder on this
worker's devices (runtime), and Beam's RunInference contract around it (handler)."""
