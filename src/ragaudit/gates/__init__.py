"""Release gates: the policy file (:mod:`.policy`), the metric self-test (:mod:`.selftest`), the four
gate checks (:mod:`.checks`) and the verdict with its exit code (:mod:`.verdict`). See docs/gates.md."""
