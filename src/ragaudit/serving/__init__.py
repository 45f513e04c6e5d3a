"""``ragaudit serve``: a pipeline behind HTTP, the tenant bound to the API key (docs/serve.md).

``keys`` (the server's keys file: hashes to tenants), ``engine`` (the pipeline over the active
documents, the score threshold), ``persisted`` and ``index_dir`` (the first stage saved in
``--index-dir``, keyed by its inputs, switched in atomically, reloaded at start), ``metrics``
(Prometheus text), ``app`` (the Starlette app and its limits). Needs the ``serve`` extra (starlette and uvicorn).
"""
