"""Paired statistics for "is B better than A?": randomization and t tests, bootstrap CIs, Holm correction.

All randomness comes from a seeded ``numpy.random.Generator`` passed in or built from ``seed``;
the global RNG is never touched.
"""
