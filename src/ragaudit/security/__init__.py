"""Security audits: tenant isolation, stale versions, the error rate of a run.

- :mod:`~ragaudit.security.tenant_audit`: probe a retriever as every other tenant and as hostile
  tenant ids (``ragaudit audit-tenants``); :mod:`~ragaudit.security.request_plan` says what it sends
  and how hard that looks (owner first, ``top_k`` values, concurrency levels, rounds, detection power),
  :mod:`~ragaudit.security.request_loop` sends it, :mod:`~ragaudit.security.hostile_tenants` lists the
  hostile ids;
- :mod:`~ragaudit.security.leak_checker`: the audit's check of each answer (its chunks and the rest of
  the response) and the leak records it writes;
- :mod:`~ragaudit.security.ownership`: who owns a returned chunk, from the corpus (id, content,
  canary, and every other field :mod:`~ragaudit.security.item_fields` lists: title, snippet,
  highlight, metadata, source ids; templated variants told apart by the parts that differ), never
  from the retriever's label (what it finds: :mod:`~ragaudit.security.ownership_evidence`; how it
  reads ids: :mod:`~ragaudit.security.ownership_ids`); :mod:`~ragaudit.security.verified` wraps a retriever so label-trusting
  tests (the lesson's) become sound; :mod:`~ragaudit.security.audit_verdict` turns the audit's
  counts into clean / leak / incomplete / not-verified;
- :mod:`~ragaudit.security.response_fields`: every value of the whole response beside the chunk list
  (``debug``, ``facets``, ``suggest``, ...), with JSON paths; values decoded by
  :mod:`~ragaudit.security.decoding` (base64, percent-encoding, HTML entities, JSON in strings);
  names and codes one tenant alone uses, :mod:`~ragaudit.security.exclusive_terms`;
- :mod:`~ragaudit.security.probes` and :mod:`~ragaudit.security.canaries`: what the audit asks;
- :mod:`~ragaudit.security.leaky`, :mod:`~ragaudit.security.leaky_output` and
  :mod:`~ragaudit.security.leaky_response`: deliberately leaky retrievers that prove the audit catches
  leaks (the response ones with honest twins that must stay clean);
- :mod:`~ragaudit.security.stale_audit`: superseded versions in the top k (``ragaudit audit-stale``);
- :mod:`~ragaudit.security.error_rate`: failed cases by kind, and a gate on their share.

See ``docs/security.md``.
"""
