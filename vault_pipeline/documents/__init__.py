"""Full text of every paper: PDFs (pymupdf4llm) and LaTeX e-prints to clean Markdown, each
document converted in an isolated worker process, incrementally, with a status per row.

Modules, one job each: ``naming`` (which paper a raw file belongs to), ``archive`` (safe
e-print extraction), ``latex`` (LaTeX to Markdown-like text), ``invisible`` (hidden text),
``pdf`` (PDF to Markdown), ``cleaning`` (shared cleaning and truncation), ``convert`` (one
document, start to finish, inside a worker), ``workers`` (the isolated process pool),
``build`` (the `documents` table), ``quality`` (its checks)."""
