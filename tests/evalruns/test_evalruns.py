"""Evaluation runs end to end against a scripted OpenAI-compatible evaluator: every task on
constructed sets, the cache (a rerun asks nothing), resume after a killed run, the call
budget, and the leakage guard."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from testing.evalruns_server import EvaluatorServer
from testing.evalsets_vault import small, two_venue_sets
from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns.run import run_evaluation
from vault_pipeline.evalruns.settings import TASKS, EvalRunSettings
from vault_pipeline.evalruns.tasks import Unit, check_no_leak, nearest_anchors
from vault_pipeline.llm.backends.base import Answer, Backend, Request
from vault_pipeline.llm.backends.openai_compat import OpenAICompatBackend
from vault_pipeline.schemas import EVAL_RUN_CALLS
from vault_pipeline.store.paths import VaultPaths


# session, not module: xdist may run another file's tests between this file's, which
# tears a module fixture down and builds it again (read only, so sharing it is safe)
@pytest.fixture(scope="session")
def sets(tmp_path_factory) -> VaultPaths:
    return two_venue_sets(tmp_path_factory.mktemp("evalruns"), 160, 200, small(
        per_bin=3, anchor_size=6, groups_per_venue=4,
        pointwise_quota={"Reject": 6, "Poster": 4, "Spotlight": 2, "Oral": 1},
        pair_quota={"reject-oral": 2, "poster-oral": 2, "reject-poster": 2,
                    "poster-spotlight": 2}))


@pytest.fixture()
def server():
    with EvaluatorServer() as running:
        yield running


def settings_for(server: EvaluatorServer, **changes) -> EvalRunSettings:
    ideas = {"backend": "openai", "base_url": server.base_url, "http_retries": 0,
             "max_retries": 1, "batch_size": 16}
    return EvalRunSettings.resolve(run_config={"model": "test-model", "embedder": "lexical",
                                    "bootstrap": 50, "inputs": ["abstract"],
                                    "ideas": ideas} | changes)


def table(paths: VaultPaths, name: str, run_id: str) -> pl.DataFrame:
    return pl.read_parquet(paths.table(name)).filter(pl.col("run_id") == run_id)


def test_every_task_end_to_end_then_a_rerun_asks_nothing(sets: VaultPaths,
                                                          server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="e2e")
    report = run_evaluation(sets, settings, log=lambda *_: None)
    asked = server.calls()
    assert report.asked == report.units > 0 and asked >= report.units
    calls = table(sets, "eval_run_calls", "e2e")
    failures = table(sets, "eval_run_call_failures", "e2e")
    assert calls.height + failures.height == report.units
    assert set(calls.get_column("task")) == set(TASKS)
    # invalid JSON on the first ask is re-asked and accepted; a refusal is quarantined
    assert calls.get_column("attempts").max() == 2
    assert failures.height > 0 and failures.get_column("raw_answer").str.contains(
        "cannot").all()
    assert calls.get_column("tokens_in").min() >= 1000
    # Elo: the schedule's order and who was shown first are recorded; ties happen
    elo = calls.filter(pl.col("task") == "elo")
    assert elo.get_column("items").list.len().unique().to_list() == [2]
    assert "tie" in "".join(elo.get_column("answer"))
    swiss = calls.filter(pl.col("task") == "swiss")
    sample = pl.read_parquet(sets.table("eval_review_stratified")).height
    rounds = {i[:3] for i in swiss.get_column("item_id")}
    assert len(rounds) == math.ceil(math.log2(sample))
    metrics = table(sets, "eval_run_metrics", "e2e")
    got = {(t, k): v for t, k, v in metrics.select("task", "metric", "value").rows()}
    for task in ("direct", "anchor", "group", "elo", "bradley_terry", "swiss"):
        assert -1 <= got[(task, "spearman")] <= 1
    assert got[("direct", "mse")] >= 0
    assert ("direct", "partial_pearson_length") in got
    strengths = table(sets, "eval_run_predictions", "e2e").filter(pl.col("task") == "elo")
    assert strengths.get_column("predicted").min() == 1.0  # min-max mapped onto 1-10
    assert strengths.get_column("predicted").max() == 10.0
    assert got[("elo", "inflation")] is not None
    assert ("direct_vs_anchor", "wilcoxon_p_abs_error") in got
    # the position-biased evaluator always picks A: its pair accuracy is the share of A
    pairs = pl.read_parquet(sets.table("eval_pairwise"))
    share_a = (pairs.get_column("better") == "a").mean()
    assert got[("idea_pair", "chose_first_rate")] == 1.0
    assert got[("idea_pair", "pair_accuracy")] == pytest.approx(share_a, abs=0.15)
    assert ("idea_group_ranking", "ranking_kendall") in got
    assert got[("idea_point3", "accuracy")] is not None

    again = run_evaluation(sets, settings, log=lambda *_: None)
    assert server.calls() == asked and again.asked == 0 and again.reused == report.units


class Killed(Backend):
    """The real backend until its ``lives`` batches are spent, then the process 'dies'."""

    name = "openai"

    def __init__(self, inner: OpenAICompatBackend, lives: int) -> None:
        super().__init__(inner.model)
        self.inner, self.lives = inner, lives

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        if self.lives <= 0:
            raise KeyboardInterrupt
        self.lives -= 1
        return self.inner.generate(requests)


def test_a_killed_run_resumes_where_it_stopped(sets: VaultPaths,
                                               server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="killed", tasks=["direct"])
    inner = OpenAICompatBackend("test-model", base_url=server.base_url, http_retries=0)
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(sets, settings, backend=Killed(inner, 3), log=lambda *_: None)
    before = server.calls()
    report = run_evaluation(sets, settings, log=lambda *_: None)
    assert 0 < report.reused < report.units  # the finished batches were kept
    assert report.asked == report.units - report.reused
    assert server.calls() - before < report.units + report.units // 4
    assert table(sets, "eval_run_predictions", "killed").height > 0


def test_call_budget_refuses_before_asking(sets: VaultPaths, server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="budget", tasks=["direct"], call_budget=3)
    with pytest.raises(VaultError, match="call budget of 3"):
        run_evaluation(sets, settings, log=lambda *_: None)
    assert server.calls() == 0


def test_repeats_give_test_retest_icc(sets: VaultPaths, server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="retest", tasks=["direct"], repeats=2)
    run_evaluation(sets, settings, log=lambda *_: None)
    seeds = {body["seed"] for bodies in server.requests.values() for body in bodies}
    assert seeds == {0, 1}
    metrics = table(sets, "eval_run_metrics", "retest")
    assert "icc_2_1_retest" in metrics.get_column("metric").to_list()


def test_prompts_never_show_the_papers_own_score(sets: VaultPaths,
                                                 server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="leak", tasks=["direct", "anchor"])
    run_evaluation(sets, settings, log=lambda *_: None)
    sample = pl.read_parquet(sets.table("eval_review_stratified"))
    titles = dict(sample.select("title", "forum_id").rows())
    for task in ("eval_direct", "eval_anchor"):
        for body in server.requests[task]:
            user = body["messages"][1]["content"]
            shown = user.split("Now rate this submission")[-1]
            assert "score" not in shown.lower()
            title = shown.split("Title: ", 1)[1].split("\n", 1)[0]
            assert title in titles
            if task == "eval_anchor":  # the paper is never one of its own references
                references = user.split("Now rate this submission")[0]
                assert references.count("### Reference") == 3
                assert f"Title: {title}\n" not in references


def test_anchors_exclude_the_paper_even_when_it_is_an_anchor() -> None:
    sample = pl.DataFrame({"forum_id": ["p1", "p2"], "title": ["Alpha", "Beta"]})
    anchors = pl.DataFrame({"forum_id": ["p1", "a1", "a2", "a3", "a4"],
                            "title": ["Alpha", "alpha!", "Gamma", "Delta", "Eps"]})
    similarity = pl.DataFrame([[1.0, 0.9, 0.5, 0.4, 0.1],
                               [0.2, 0.1, 0.3, 0.9, 0.8]]).transpose().to_numpy()
    nearest = nearest_anchors(sample, anchors, 3, similarity)
    assert nearest == {"p1": [2, 3, 4], "p2": [3, 4, 2]}
    with pytest.raises(VaultError, match="anchor is the paper itself"):
        check_no_leak([Unit("anchor", "p1", ("p1",), {"input": "x"}, ("p1",))])


def test_unknown_task_and_missing_sets_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="unknown task 'tournament'"):
        EvalRunSettings.resolve(run_config={"tasks": ["tournament"]})
    paths = VaultPaths(tmp_path / "vault").ensure()
    with pytest.raises(VaultError, match="materialize the evaluation sets first"):
        run_evaluation(paths, EvalRunSettings(tasks=("direct",)), log=lambda *_: None)
    with pytest.raises(VaultError, match="unknown input 'fulltext'"):
        EvalRunSettings.resolve(run_config={"inputs": ["abstract", "fulltext"]})


def test_the_extractive_backend_only_summarizes(sets: VaultPaths) -> None:
    with pytest.raises(VaultError, match=r"need an LLM backend .*it can write the summaries"):
        run_evaluation(sets, EvalRunSettings(run_id="offline", tasks=("direct",)),
                       log=lambda *_: None)
    assert not sets.store.read(EVAL_RUN_CALLS).get_column("run_id").is_in(["offline"]).any()


def test_answers_are_stored_as_json_with_their_cost(sets: VaultPaths,
                                                     server: EvaluatorServer) -> None:
    run_evaluation(sets, settings_for(server, run_id="json", tasks=["direct"], price_in=0.15,
                                      price_out=0.6), log=lambda *_: None)
    calls = table(sets, "eval_run_calls", "json")
    assert all(1 <= json.loads(a)["rating"] <= 10 for a in calls.get_column("answer"))
    # 1,000 prompt and 500 completion tokens per answer at 0.15 / 0.60 per million
    first = calls.filter(pl.col("attempts") == 1).row(0, named=True)
    assert first["cost"] == pytest.approx((1000 * 0.15 + 500 * 0.6) / 1e6)


def test_every_attempt_is_counted_and_a_server_error_is_asked_again_plainly(
        sets: VaultPaths) -> None:
    from vault_pipeline.evalruns.render import Table
    from vault_pipeline.evalruns.report import report_blocks

    with EvaluatorServer(fail=3) as server:
        run_evaluation(sets, settings_for(server, run_id="spent", tasks=["direct", "group"],
                                          price_in=0.15, price_out=0.6),
                       log=lambda *_: None)
    bodies = [b for asked in server.requests.values() for b in asked]
    # a server error is asked again as it was, never through the repair prompt
    assert not any("HTTP 500" in json.dumps(b["messages"]) for b in bodies)
    assert len(bodies) > len({json.dumps(b["messages"]) for b in bodies})
    calls, failures = table(sets, "eval_run_calls", "spent"), table(
        sets, "eval_run_call_failures", "spent")
    assert failures.height > 0 and failures.get_column("tokens_in").min() >= 1000
    for column, billed in zip(("tokens_in", "tokens_out"), server.billed, strict=True):
        assert calls.get_column(column).sum() + failures.get_column(column).sum() == billed
    cost = calls.get_column("cost").sum() + failures.get_column("cost").sum()
    assert cost == pytest.approx((server.billed[0] * 0.15 + server.billed[1] * 0.6) / 1e6)
    assert (pl.concat([calls.get_column("seconds"), failures.get_column("seconds")]) > 0).all()
    assert calls.get_column("answered_at").null_count() == 0
    # the report counts them too
    costs = next(b for b in report_blocks(sets, "spent", with_figures=False)
                 if isinstance(b, Table) and "of them quarantined" in b.headers)
    tokens_in = sum(int(row[5].replace(",", "")) for row in costs.rows)
    assert tokens_in == server.billed[0]
    assert sum(int(row[7].replace(",", "")) for row in costs.rows) == \
        failures.get_column("tokens_in").sum() + failures.get_column("tokens_out").sum()


def test_assets_run_only_when_selected_then_report_and_sql(sets: VaultPaths,
                                                           server: EvaluatorServer,
                                                           tmp_path: Path) -> None:
    import dagster as dg
    from typer.testing import CliRunner

    from vault_pipeline.cli.app import app
    from vault_pipeline.cli.planning import ON_REQUEST
    from vault_pipeline.definitions import build_defs

    graph = build_defs(sets).resolve_asset_graph()
    default = (dg.AssetSelection.all() - dg.AssetSelection.groups(*ON_REQUEST)).resolve(graph)
    assert dg.AssetKey("eval_run_metrics") not in default
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"ops": {"evaluation_runs": {"config": {
        "run_id": "cli", "tasks": ["direct", "elo", "idea_pair"], "model": "test-model",
        "inputs": ["abstract"],
        "embedder": "lexical", "bootstrap": 20,
        "ideas": {"backend": "openai", "base_url": server.base_url}}}}}))
    runner = CliRunner()
    home = ["--home", str(sets.home)]
    done = runner.invoke(app, ["materialize", "--select", "group:evaluation_runs", "-c",
                               str(config), *home])
    assert done.exit_code == 0, done.output
    out = tmp_path / "report.md"
    written = runner.invoke(app, ["eval", "report", "cli", "--out", str(out), *home])
    assert written.exit_code == 0, written.output
    text = out.read_text()
    assert "| direct |" in text and "| bradley_terry |" in text and "| idea_pair |" in text
    assert "Human noise ceiling" in text and "spearman" in text
    assert "| human bin |" in text and "Wilcoxon" in text
    query = runner.invoke(app, ["sql", "select count(*) as n from eval_run_metrics where "
                                "run_id = 'cli' and metric = 'spearman'", *home])
    assert query.exit_code == 0 and "3" in query.output  # direct, elo, bradley_terry
    missing = runner.invoke(app, ["eval", "report", "nope", *home])
    assert missing.exit_code == 1 and "no evaluation run 'nope'" in missing.output
    # the default report: one HTML page with its figures inside
    page = runner.invoke(app, ["eval", "report", "cli", *home])
    assert page.exit_code == 0, page.output
    html = (sets.home / "evalruns" / "cli.html").read_text()
    assert html.count('<img alt="') == 3 and html.count("data:image/png;base64,iVBOR") == 3
    assert "<td>direct</td>" in html and "<th>human bin</th>" in html
    assert 'src="http' not in html and "<link" not in html  # nothing outside the page
    md = runner.invoke(app, ["eval", "report", "cli", "-f", "md", "-o", str(tmp_path / "r.txt"),
                             *home])
    assert md.exit_code == 0, md.output
    assert "![Calibration" in (tmp_path / "r.txt").read_text()
    assert (tmp_path / "r.calibration.png").read_bytes()[:4] == b"\x89PNG"


def test_the_run_asset_attaches_a_table_and_plots(sets: VaultPaths,
                                                  server: EvaluatorServer) -> None:
    import dagster as dg

    from assets.evalruns import evaluation_runs
    from assets.resources import VaultResource

    config = {"run_id": "meta", "tasks": ["direct", "group"], "model": "test-model",
              "inputs": ["abstract", "objective"], "embedder": "lexical", "bootstrap": 20,
              "summarizer": {"backend": "extractive"},
              "ideas": {"backend": "openai", "base_url": server.base_url}}
    result = dg.materialize([evaluation_runs],
                            resources={"vault": VaultResource(home=str(sets.home))},
                            run_config={"ops": {"evaluation_runs": {"config": config}}})
    assert result.success
    metadata = {e.asset_key.to_user_string(): e.materialization.metadata
                for e in result.get_asset_materialization_events()}
    table = metadata["eval_run_metrics"]["metrics"]
    rows = {(r.data["task"], r.data["input"]): r.data for r in table.value.records}
    assert set(rows) == {(t, i) for t in ("direct", "group") for i in ("abstract", "objective")}
    assert -1 <= rows[("direct", "objective")]["spearman"] <= 1
    plots = metadata["eval_run_metrics"]["plots"].value
    assert plots.count("](data:image/png;base64,iVBOR") == 3
    assert Path(metadata["eval_run_metrics"]["report_html"].value).is_file()
    assert metadata["eval_summaries"]["made"].value + \
        metadata["eval_summaries"]["reused"].value == pl.read_parquet(
            sets.table("eval_review_stratified")).height


def test_each_paradigm_runs_on_each_input_with_cached_summaries(
        sets: VaultPaths, server: EvaluatorServer) -> None:
    settings = settings_for(server, run_id="inputs", tasks=["direct", "group"],
                            inputs=["abstract", "vanilla", "objective"])
    report = run_evaluation(sets, settings, log=lambda *_: None)
    sample = pl.read_parquet(sets.table("eval_review_stratified")).height
    by_server = pl.col("backend") == "openai"  # other tests summarize offline
    summaries = pl.read_parquet(sets.table("eval_summaries")).filter(by_server)
    failed = pl.read_parquet(sets.table("eval_summary_failures")).filter(by_server)
    assert summaries.height + failed.height == 2 * sample  # made by the evaluator's backend
    assert len(server.requests["eval_summary_vanilla"]) >= sample
    assert report.summaries_missing == failed.height > 0  # a refusal is quarantined
    assert failed.get_column("tokens_in").min() >= 1000  # what its attempts spent, kept
    calls = pl.concat([table(sets, "eval_run_calls", "inputs"),
                       table(sets, "eval_run_call_failures", "inputs")], how="diagonal")
    direct = dict(calls.filter(pl.col("task") == "direct").group_by("input").len().rows())
    lost = dict(failed.group_by("kind").len().rows())
    assert direct == {"abstract": sample, "vanilla": sample - lost.get("vanilla", 0),
                      "objective": sample - lost.get("objective", 0)}
    shown = [b["messages"][1]["content"] for b in server.requests["eval_direct"]]
    assert sum("Summary:\nScripted vanilla summary" in u for u in shown) >= direct["vanilla"]
    assert sum("Summary:\nBackground: Scripted background" in u for u in shown) >= \
        direct["objective"]
    metrics = table(sets, "eval_run_metrics", "inputs")
    got = {(t, i, k) for t, i, k in metrics.select("task", "input", "metric").rows()}
    for source in ("abstract", "vanilla", "objective"):
        assert ("direct", source, "spearman") in got and ("group", source, "mse") in got
        assert ("direct_vs_group", source, "wilcoxon_p_abs_error") in got
    assert ("direct", "abstract_vs_vanilla", "wilcoxon_p_abs_error") in got
    asked = server.calls()
    again = run_evaluation(sets, settings, log=lambda *_: None)
    assert server.calls() == asked and again.summaries_made == 0 and again.asked == 0
    # offline summaries beside an LLM evaluator: the server is asked for ratings only
    offline = settings_for(server, run_id="offline_summaries", tasks=["direct"],
                           inputs=["objective"], summarizer={"backend": "extractive"})
    summary_asks = len(server.requests["eval_summary_objective"])
    run_evaluation(sets, offline, log=lambda *_: None)
    assert len(server.requests["eval_summary_objective"]) == summary_asks
    assert table(sets, "eval_run_calls", "offline_summaries").height > 0
    extractive = pl.read_parquet(sets.table("eval_summaries")).filter(
        pl.col("backend") == "extractive")
    assert extractive.height == sample and set(extractive.get_column("kind")) == {"objective"}
