"""Full text of every paper: PDFs (the fast path, or pymupdf4llm) and LaTeX e-prints to clean
Markdown, each document converted in an isolated worker process, incrementally, with a status
per row.

Modules, one job each: ``naming`` (which paper a raw file belongs to, by its name or URL),
``identify`` (by its content: arXiv stamp, DOI, title), ``archive`` (safe e-print
extraction), ``latex`` (LaTeX to Markdown-like text), ``invisible`` (hidden text),
``fast_pdf`` and ``fast_tables`` (PDF to Markdown from PyMuPDF's own text, the default) with
``fast_layout`` (what a page is read into), ``fast_headings`` (heading and author-block
rules) and ``furniture`` (running headers, page numbers, stamps, banners),
``pdf`` (PDF to Markdown with pymupdf4llm), ``cleaning`` (shared cleaning and truncation),
``convert`` (one document, start to finish, inside a worker), ``workers`` (the isolated
process pool), ``build`` (the `documents` table), ``quality`` (its checks)."""
