"""Rendering results: each report kind builds a format-free document (:mod:`.document`), drawn by the
terminal, Markdown and HTML back-ends (:mod:`.draw`) inside the pages (:mod:`.terminal`,
:mod:`.markdown`, :mod:`.html`)."""
