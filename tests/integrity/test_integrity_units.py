"""The integrity gate's parts one by one: placeholders, method leaks, the paper's results
context, the offline judge's threshold, masking, and the checks that must fail on bad data."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.ideas_server import ANSWERS
from vault_pipeline.ideas import quality
from vault_pipeline.ideas.build import build_views
from vault_pipeline.ideas.views import derive_views
from vault_pipeline.integrity import classifier
from vault_pipeline.integrity.gate import PLAIN_TEXT, Gate, text_findings
from vault_pipeline.integrity.method import method_leaks, method_terms
from vault_pipeline.integrity.source import results_context
from vault_pipeline.llm.inputs import PaperInput
from vault_pipeline.records.masked import MaskedRecord
from vault_pipeline.records.placeholders import is_placeholder, nullify
from vault_pipeline.schemas import MASKED_RECORDS, VIEWS
from vault_pipeline.store.paths import VaultPaths

VALID = json.loads((ANSWERS / "valid.json").read_text())


def test_placeholders_are_recognised_and_real_text_is_not() -> None:
    for text in ("Not stated.", "not stated in the available text", "N/A", "Unknown",
                 "The paper does not state it.", "None", "  ", "Withheld: a result here."):
        assert is_placeholder(text), text
    for text in ("Not all tokens are routed.", "None of the baselines re-route tokens.",
                 "Unknown words are mapped to a shared embedding."):
        assert not is_placeholder(text), text


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.text(max_size=20),
                              st.sampled_from(["Not stated.", "N/A", "real text"])),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from("abc"), inner, max_size=3), max_leaves=12))
def test_nullify_is_idempotent_and_leaves_no_placeholder(value) -> None:
    once = nullify(value)
    assert nullify(once) == once

    def walk(v):
        if isinstance(v, str):
            assert not is_placeholder(v)
        elif isinstance(v, list):
            for item in v:
                walk(item)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)

    walk(once)


def test_a_placeholder_in_a_record_is_null_and_its_view_absent() -> None:
    record = json.loads(json.dumps(VALID))
    record["core_problem"] = {"statement": "Not stated.", "why_it_matters": "N/A",
                              "failing_example": "Not stated in the available text."}
    parsed = MaskedRecord.model_validate(record)
    assert parsed.core_problem.statement is None
    assert derive_views(parsed)["challenge"] is None


def test_method_leaks_find_solutions_and_the_methods_own_names() -> None:
    record = VALID | {"key_novelty": {"name": "OpenCat", "explanation": ["x", "y"]}}
    terms = method_terms(record)
    assert "OpenCat" in terms
    assert method_leaks("We introduce OpenCat, a router.", terms)[0].kind == \
        "solution_statement"
    assert method_leaks("Unlike OpenCat routers, nothing is learned.", terms)[0].kind == \
        "method_name"
    assert method_leaks("Tokens are dropped when an expert is full.", terms) == []
    # the paper's own contribution in the passive, not prior work told in the past
    assert method_leaks("A two-stage decoder is presented and analysed.", terms)[0].kind == \
        "solution_statement"
    assert method_leaks("Routers were proposed by earlier work.", terms) == []


def test_a_token_the_title_uses_outside_the_name_is_the_field_not_the_method() -> None:
    title = "MCP Safety Training: Learning to Refuse Falsely Benign MCP Exploits"
    record = VALID | {"title": title,
                      "key_novelty": {"name": "MCP Safety Training", "explanation": ["x"]}}
    terms = method_terms(record)
    assert "MCP Safety Training" in terms and "MCP" not in terms
    assert method_leaks("The MCP is susceptible to retrieval-based attacks.", terms) == []
    assert method_leaks("MCP Safety Training fixes this.", terms)[0].kind == "method_name"
    coined = VALID | {"title": "OpenCat: routers for MoE",
                      "key_novelty": {"name": "OpenCat", "explanation": ["x"]}}
    assert "OpenCat" in method_terms(coined)  # the name is not the title's field


def test_problem_views_drop_method_sentences_and_say_so() -> None:
    record = json.loads(json.dumps(VALID))
    record["core_problem"]["statement"] += " We propose learned capacity to fix this."
    views = derive_views(record)
    assert "We propose" not in views["challenge"]
    assert "drop tokens" in views["challenge"]


def test_results_context_takes_figures_from_results_not_from_the_set_up() -> None:
    text = ("# Paper\n\n## 3 Method\n\nWe train for 100 epochs with 64 experts.\n\n"
            "## 4 Results\n\nThe router reaches a perplexity of 11.87 and outperforms Switch.\n")
    context = results_context(PaperInput("x", "T", "A plain abstract.", text, None, "pdf",
                                         None))
    assert "11.87" in context.figures and "100" not in context.figures
    assert context.findings("The target perplexity is 11.87.")[0].layer == "source"
    assert context.findings("We train for 100 epochs.") == []


def test_threshold_keeps_the_asked_share_of_clean_sentences() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.9, 0.8, 0.7])
    labels = [False, False, False, False, True, True, True]
    threshold = classifier.choose_threshold(scores, labels, min_kept=0.75)
    flagged_clean = sum(s >= threshold for s, y in zip(scores, labels, strict=True) if not y)
    assert flagged_clean == 1


def test_the_shipped_judge_loads_and_scores() -> None:
    judge = classifier.load()
    assert judge is not None and 0 < judge.threshold < 1
    flags = judge.flags(["Our model beats every baseline by a wide margin in all runs.",
                         "We will compare against two baselines on three benchmarks."])
    assert len(flags) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([
    "We propose a router.", "It matches the dense model at a fraction of the compute.",
    "Accuracy rose from 71.3 to 74.8.", "We will compare against Switch on C4.",
    "Table 3 shows that routing helps.", "The learning rate is 3e-4.",
    "It is twice as fast as the baseline."]), min_size=1, max_size=6))
def test_masking_leaves_nothing_the_gate_flags(parts: list[str]) -> None:
    gate = Gate(PLAIN_TEXT)
    masked, _ = gate.mask({"text": " ".join(parts)})
    assert text_findings(masked["text"], gate) == []


def _record_table(paths: VaultPaths, challenge: str, **fields: object) -> None:
    record = json.loads(json.dumps(VALID)) | fields
    record["core_problem"]["statement"] = challenge
    row = {"arxiv_id": "2401.00001", **record, "backend": "openai", "model": "m",
           "prompt_version": "p", "input_hash": "h" * 64, "input_source": "pdf",
           "input_note": None, "schema_version": "s", "attempts": 1, "leaky_answer": False,
           "masked_findings": [], "tokens_in": None, "tokens_out": None,
           "created_at": datetime(2026, 1, 1, tzinfo=UTC)}
    paths.store.write(MASKED_RECORDS,
                      pl.DataFrame([row], schema=MASKED_RECORDS.polars, strict=False))


def test_the_method_check_fails_on_a_problem_view_that_states_the_solution(
        vault_paths: VaultPaths) -> None:
    _record_table(vault_paths, "Tokens are dropped.")
    build_views(vault_paths)
    ok = quality.problem_views_method_free(vault_paths.store)
    assert ok.passed
    views = pl.read_parquet(vault_paths.table("views")).with_columns(
        text=pl.when(pl.col("view") == "challenge")
        .then(pl.lit("What fails: We propose a learned router."))
        .otherwise(pl.col("text")))
    vault_paths.store.write(VIEWS, views)
    bad = quality.problem_views_method_free(vault_paths.store)
    assert not bad.passed and bad.metadata["method_leaks"] == 1


def test_the_method_check_reads_the_field_from_the_title_as_the_views_do(
        vault_paths: VaultPaths) -> None:
    """A token the title uses outside the method's name (MCP) may stand in a problem view:
    the check run again on the table must agree with the views' derivation."""
    _record_table(vault_paths, "The MCP is susceptible to retrieval-based attacks.",
                  title="MCP Safety Training: Learning to Refuse Falsely Benign MCP Exploits",
                  key_novelty={"name": "MCP Safety Training", "explanation": ["x"]})
    build_views(vault_paths)
    challenge = pl.read_parquet(vault_paths.table("views")).filter(
        pl.col("view") == "challenge").get_column("text").to_list()
    assert challenge and "MCP is susceptible" in challenge[0]
    assert quality.problem_views_method_free(vault_paths.store).passed


def test_the_completeness_check_fails_on_a_placeholder_view(vault_paths: VaultPaths) -> None:
    _record_table(vault_paths, "Tokens are dropped.")
    build_views(vault_paths)
    views = pl.read_parquet(vault_paths.table("views")).with_columns(
        text=pl.when(pl.col("view") == "intuition").then(pl.lit("Not stated."))
        .otherwise(pl.col("text")))
    vault_paths.store.write(VIEWS, views)
    outcome = quality.views_complete(vault_paths.store)
    assert not outcome.passed and outcome.metadata["missing_by_view"] == {"intuition": 1}


def test_the_view_leak_check_fails_on_a_result_in_words(vault_paths: VaultPaths) -> None:
    _record_table(vault_paths, "Tokens are dropped.")
    build_views(vault_paths)
    assert quality.view_leak_findings(vault_paths.store).passed
    views = pl.read_parquet(vault_paths.table("views")).with_columns(
        text=pl.col("text") + " It is twice as fast as the baseline.")
    vault_paths.store.write(VIEWS, views)
    assert not quality.view_leak_findings(vault_paths.store).passed


def test_an_export_quotes_the_latest_report_only_while_it_is_current(
        vault_paths: VaultPaths) -> None:
    import os

    from vault_pipeline.audit.report import build_report, current_report, write_report

    _record_table(vault_paths, "Tokens are dropped.")
    build_views(vault_paths)
    latest = write_report(vault_paths, build_report(vault_paths) | {"marker": 1})
    assert current_report(vault_paths).get("marker") == 1  # nothing written since
    views = vault_paths.store.path("views")
    os.utime(views, (latest.stat().st_mtime + 5, latest.stat().st_mtime + 5))
    assert "marker" not in current_report(vault_paths)  # a newer table: built again
