"""The three back-ends that draw a :class:`ragaudit.report.document.Document`: terminal, Markdown, HTML.

They import the document model and nothing of the kinds; escaping lives here only (the Markdown and
HTML back-ends escape every text they draw), and :mod:`.cells` formats every cell the same way in all three.
"""
