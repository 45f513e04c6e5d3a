"""The Python API that matches the command line (:mod:`ragaudit.api.calls`), with typed results (:mod:`ragaudit.api.results`)."""
