"""Golden datasets, corpora ids, runs: schema, loaders and validation with file:line errors."""
