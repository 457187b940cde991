"""The integrity gate against an adversarial OpenAI-compatible server on 127.0.0.1: every
answer is schema-valid and plants results of every kind in every text field (in digits and
in words, qualitative outcomes, table references, ratios, ranks, convergence, figures in
predictions, a figure only the paper's own results section reports), a method statement in
the problem fields, and "Not stated" placeholders; it keeps planting them when asked again.
None may reach `masked_records` or `views`, and the planted plans and set-up sizes survive."""

from __future__ import annotations

import copy
import json
from datetime import date

import polars as pl
import pytest

from testing.ideas_server import ANSWERS, Reply, ScriptedServer, completion
from vault_pipeline.audit.report import build_report
from vault_pipeline.ideas.build import build_masked_records, build_views
from vault_pipeline.integrity.llm_judge import OUTCOME, SCHEMA_NAME
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.schemas import DOCUMENTS, PAPERS
from vault_pipeline.store.paths import VaultPaths

# The paper's own results: 11.87 appears nowhere but in its results section.
PAPER_TEXT = """# Routing Tokens to Experts with Learned Capacity

## 1 Introduction

Sparse mixture-of-experts layers drop tokens when an expert receives more tokens than its
fixed capacity, which wastes training signal.

## 3 Method

A capacity head predicts per-expert capacities from batch statistics and the router re-routes
overflow tokens. We use a learning rate of 3e-4 and 64 experts.

## 4 Results

The learned-capacity router reaches a validation perplexity of 11.87 on C4 and keeps every
token routed across all scales.
"""

PLANTED_RESULTS = [
    "It matches the dense model at a fraction of the compute.",
    "Training with it eliminated collapse in every run.",
    "Human raters preferred its outputs over the baseline's.",
    "Table 3 shows that the capacity head removes token dropping.",
    "It needs 40% less memory than Switch routing.",
    "The model converges in 12 epochs.",
    "It ranks first on the LongBench leaderboard.",
    "It reaches ninety-nine point nine percent routing accuracy.",
    "It takes half the time of BM25 with equal recall.",
    "Only one in a thousand tokens is dropped.",
    "The router reaches near-perfect load balance.",
    "It is twice as fast as the dense baseline.",
    "Accuracy rose from 71.3 to 74.8 on MMLU.",
    "Perplexity should reach 11.87 on C4 if capacity is learned.",
    "The target validation perplexity is 11.87.",
    # outcome claims without a digit: verdicts, null findings, associations, comparisons
    "The learned router is safe, feasible, and cost-effective when experts are many.",
    "We did not detect any token loss with the learned router.",
    "Capacity learning has only marginal effects on training speed.",
    "No run experienced a routing collapse.",
    "Batch load was strongly associated with overflow in every run.",
    "The capacity head is a better predictor of overflow than fixed capacity.",
    "Learned capacity generalizes better to unseen batch sizes.",
    "Seventy-three percent of experts stay under capacity.",
    "The learned router exhibits strong transferability across model scales.",
    "The proposed router avoids the problem effectively.",
]
PLANTED_METHOD = "We propose Learned expert capacity to remove token dropping."
PLANTED_PLANS = [
    "We will compare against Switch Transformer and GShard on C4 using perplexity.",
    "We train with a learning rate of 3e-4 and batch size 256 for 100k steps.",
]


def planted_record() -> dict:
    """valid.json with a planted result after every text, a method statement in every
    problem field, plans in the evaluation, and placeholders where the paper is silent."""
    record = json.loads((ANSWERS / "valid.json").read_text())
    i = 0

    def plant(value, path=""):
        nonlocal i
        if isinstance(value, dict):
            if set(value) == {"name", "value"}:
                return value
            return {k: plant(v, f"{path}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [plant(v, path) for v in value]
        if isinstance(value, str) and not path.startswith((".title", ".references")):
            extra = PLANTED_RESULTS[i % len(PLANTED_RESULTS)]
            i += 1
            if path == ".thesis":  # the schema refuses digits in the thesis
                extra = "It is twice as fast as the dense baseline."
            if path.startswith((".core_problem", ".problem_definition")):
                extra += " " + PLANTED_METHOD
            return f"{value.rstrip('.')}. {extra}"
        return value

    out = plant(copy.deepcopy(record))
    out["proposed_evaluation"]["setting"] = " ".join(PLANTED_PLANS) + " " + PLANTED_RESULTS[4]
    out["core_problem"]["failing_example"] = "Not stated in the available text."
    out["limitations"].append("N/A")
    return out


class PlantingServer(ScriptedServer):
    """Answers every decomposition with the planted record; the judge pass either labels
    honestly (planted sentences are outcomes) or, `lenient`, calls everything a plan."""

    def __init__(self, lenient: bool) -> None:
        super().__init__()
        self.lenient = lenient
        self.judge_requests = 0

    def reply_for(self, key: str, body: dict) -> Reply:
        name = body["response_format"]["json_schema"]["name"]
        if name != SCHEMA_NAME:
            return Reply(200, completion(json.dumps(planted_record())))
        self.judge_requests += 1
        lines = body["messages"][1]["content"].splitlines()
        verdicts = []
        for line in lines:
            head, _, sentence = line.partition(". [")
            if not head.isdigit():
                continue
            planted = any(p.rstrip(".") in sentence for p in PLANTED_RESULTS)
            label = OUTCOME if planted and not self.lenient else "plan"
            verdicts.append({"id": int(head), "label": label})
        return Reply(200, completion(json.dumps({"verdicts": verdicts})))


@pytest.fixture
def vault(vault_paths: VaultPaths) -> VaultPaths:
    ids = ["2401.00011", "2401.00012"]
    papers = pl.DataFrame([{
        "arxiv_id": i, "latest_version": 1, "title": "Routing Tokens with Learned Capacity",
        "abstract": "Sparse mixture-of-experts layers drop tokens at fixed capacity.",
        "authors": ["A. Author"], "categories": ["cs.LG"], "primary_category": "cs.LG",
        "published": date(2024, 1, 1), "updated": date(2024, 1, 1), "doi": None,
        "journal_ref": None, "comments": None, "license": None, "source": "arxiv_api",
        "raw_sha256": "0" * 64, "versions": None} for i in ids],
        schema_overrides={"versions": PAPERS.polars["versions"]})
    vault_paths.store.write(PAPERS, papers)
    base = dict.fromkeys(DOCUMENTS.names)
    docs = pl.DataFrame([{**base, "arxiv_id": i, "source": "pdf", "status": "ok",
                          "text": PAPER_TEXT} for i in ids],
                        schema=pl.from_arrow(DOCUMENTS.empty()).schema)
    vault_paths.store.write(DOCUMENTS, docs)
    return vault_paths


def _texts(frame: pl.DataFrame) -> str:
    return json.dumps(frame.to_dicts(), default=str)


@pytest.mark.parametrize("lenient", [False, True], ids=["honest-judge", "lenient-judge"])
def test_no_planted_result_reaches_records_or_views(vault: VaultPaths, lenient: bool) -> None:
    with PlantingServer(lenient) as server:
        settings = IdeasSettings(backend="openai", model="test-model",
                                 base_url=server.base_url, backoff_s=0.01, max_retries=1)
        report = build_masked_records(vault, settings, log=lambda _: None)
        assert server.judge_requests > 0
    build_views(vault)
    records = pl.read_parquet(vault.table("masked_records"))
    views = pl.read_parquet(vault.table("views"))
    assert report.records == 2 and report.quarantined == 0
    kept = _texts(records.drop("masked_findings")) + _texts(views.drop("masked_findings"))
    for planted in PLANTED_RESULTS:
        assert planted.rstrip(".") not in kept, planted
    assert "11.87" not in kept  # the paper's own figure, caught by the source layer
    assert "We propose Learned expert capacity" not in _texts(
        views.filter(pl.col("view").is_in(["problem_setting", "challenge"])))
    for plan in PLANTED_PLANS:  # plans and set-up sizes survive
        assert plan.rstrip(".") in kept, plan
    assert "Not stated" not in kept and '"N/A"' not in kept
    row = records.row(0, named=True)
    assert row["core_problem"]["failing_example"] is None  # a placeholder is absence
    layers = {f["layer"] for f in row["masked_findings"]}
    assert {"rules", "source", "method"} <= layers
    assert ("judge" in layers) is not lenient


def test_integrity_report_counts_what_the_gate_removed(vault: VaultPaths) -> None:
    with PlantingServer(lenient=False) as server:
        settings = IdeasSettings(backend="openai", model="test-model",
                                 base_url=server.base_url, backoff_s=0.01, max_retries=0)
        build_masked_records(vault, settings, log=lambda _: None)
    build_views(vault)
    report = build_report(vault)
    masked = report["records"]["masked_by_layer"]
    assert sum(masked["rules"].values()) >= 10 and masked["source"] and masked["judge"]
    assert report["residual"] == {"record_leaks": 0, "view_leaks": 0}
    assert report["method_leaks"]["remaining"] == 0
    assert report["records"]["with_leaky_answer"] == 2
    held = {s["layer"]: s for s in report["labelled_heldout"]}
    assert set(held) == {"rules", "judge", "combined"} and held["combined"]["sentences"] > 500
