"""Ground-floor text helpers shared by context, experiments and security (imports nothing above floor 0).

* :mod:`ragaudit.text.words`: word patterns, the light singular, content words, the NFKC normaliser.
* :mod:`ragaudit.text.stopwords`: the one English stopword list.
* :mod:`ragaudit.text.tables`: the one month table, number words, time units, currencies.
* :mod:`ragaudit.text.values`: typed value extraction (dates, times, money, percent, durations,
  numbers) with one set of keys: a duration is ``(amount as written, canonical unit)`` everywhere
  (``2 years`` -> ``2 year``), a currency is its ISO code (``USD``); comparisons that should treat
  ``2 years`` and ``24 months`` alike convert with :func:`ragaudit.text.tables.in_base_unit`.
"""
