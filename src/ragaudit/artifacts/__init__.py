"""The ground floor every report producer writes through: the artifact envelope and its JSON Schema
(:mod:`~ragaudit.artifacts.envelope`), provenance, strict-JSON escaping, and the run history.
Nothing here renders; renderers live in :mod:`ragaudit.report`."""
