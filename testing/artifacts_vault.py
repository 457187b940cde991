"""A vault with a post-cutoff, full-text, methodological target (the bundled sample has
none): the splits vault's papers, a full text for one post-cutoff paper citing vault papers,
records and views made by the extractive backend, then splits and training examples."""

from __future__ import annotations

import polars as pl

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline.datasets.reconstruct import build_role_artifacts
from vault_pipeline.datasets.training import build_training
from vault_pipeline.ideas.build import build_masked_records, build_views
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.schemas import DOCUMENTS
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

TARGET = "2604.00010"
FULL_TEXT = """# Cascade Inference for Vision Transformers

## 1 Introduction

Vision transformers spend the same computation on every image, which wastes compute on
easy images. This matters because inference cost limits deployment on small devices. For
example, a blank sky image passes through every layer of the network.

## 2 Related Work

Two-stage retrieval systems filter candidates cheaply before a costly reranker
[1]. However, the fixed first stage cannot adapt its depth to how hard an
input is.

Mixture-of-experts routers send each token to one expert with a fixed capacity
[2]. However, the routing decision ignores the scalability limit of
per-example depth.

## 3 Method

We propose CascadeViT, a cascade of exits that stops computation when a confidence head is
sure. Easy images exit after a few layers, hard images use every layer. The confidence head
is trained jointly with the classifier.

## 4 Experiments

We evaluate on ImageNet and compare against a dense ViT using accuracy and latency.
CascadeViT achieves 81.2% accuracy and is 2.1x faster than the dense model.

## 5 Limitations

The confidence head can be miscalibrated on shifted data. We only study classification.
"""
REFERENCES = ("[1] A. Author. Two-Stage Retrieval with Cheap Candidate Generation. "
              "arXiv:2401.00001.\n[2] A. Author. Mixture of Experts Routing with Learned "
              "Capacity. arXiv:2405.00005.")
SPLITS = SplitSettings(cutoff=CUTOFF, validation=0.25, test=0.25, seed=7,
                       require_latex=False)  # its one document is a PDF


def write_documents(paths: VaultPaths) -> None:
    base = dict.fromkeys(DOCUMENTS.names)
    rows = [{**base, "arxiv_id": TARGET, "source": "pdf", "status": "ok", "text": FULL_TEXT,
             "references": REFERENCES}]
    paths.store.write(DOCUMENTS,
                      pl.DataFrame(rows, schema=pl.from_arrow(DOCUMENTS.empty()).schema))


def build_artifacts_vault(paths: VaultPaths) -> VaultPaths:
    """Records and views from the stages themselves, then splits, artifacts, examples."""
    write_vault(paths)
    write_documents(paths)
    settings = IdeasSettings()
    build_masked_records(paths, settings, log=lambda _: None)
    build_views(paths)
    build_splits(paths, SPLITS)
    build_role_artifacts(paths, settings)
    build_training(paths)
    return paths
