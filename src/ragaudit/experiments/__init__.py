"""Experiments that answer "is it better?": comparisons, benchmarks, ablations, sweeps."""
