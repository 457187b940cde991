"""The papers stage's declaration: metadata pages in the raw zone to `papers`,
`paper_versions` and `papers_rejected`."""

from __future__ import annotations

from vault_pipeline.papers.build import papers_figures, run_papers
from vault_pipeline.pipeline.stage import Stage
from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS, PAPERS_REJECTED

STAGE = Stage(
    "papers", "metadata", inputs=("raw_files",), outputs=(PAPERS, PAPER_VERSIONS, PAPERS_REJECTED),
    run=run_papers,
    describe=lambda run: (f"papers: {run.report.rows} rows from {run.report.files} files "
                          f"({run.report.superseded} superseded, {run.report.rejected} "
                          "rejected)"),
    figures=papers_figures)
