"""`vault report` and the charts of the assets' metadata: distributions computed from the
tables (years in order, gaps shown), a self-contained page, and the rates of an integrity
report."""

from __future__ import annotations

import base64
import re

from typer.testing import CliRunner

from testing.splits_vault import CUTOFF, write_vault
from vault_pipeline.audit.report import integrity_rates
from vault_pipeline.cli.app import app
from vault_pipeline.overview import charts
from vault_pipeline.overview.summary import collect
from vault_pipeline.pipeline.figures import split_sizes, top, years
from vault_pipeline.splits.build import build_splits
from vault_pipeline.splits.settings import SplitSettings

runner = CliRunner()


def test_years_in_order_with_gaps_and_unknown_last() -> None:
    assert years({2024: 5, "2019": 40, 2021: 1, "unknown": 2}) == [
        ("2019", 40), ("2020", 0), ("2021", 1), ("2022", 0), ("2023", 0), ("2024", 5),
        ("unknown", 2)]
    assert years({}) == []


def test_top_categories_sum_the_rest() -> None:
    counts = {f"c{i}": i for i in range(1, 6)}
    assert top(counts, 2) == [("c5", 5), ("c4", 4), ("other (3)", 6)]
    assert split_sizes({"excluded": 2, "vault": 9})[:2] == [("vault", 9), ("train", 0)]


def test_integrity_rates_from_a_report() -> None:
    report = {"records": {"rows": 90, "with_leaky_answer": 9},
              "quarantined": {"papers": 10}, "residual": {"record_leaks": 0, "view_leaks": 3},
              "views": {"rows": 300, "placeholder_rate": 0.25},
              "method_leaks": {"remaining_rate": 0.0}}
    rates = dict(integrity_rates(report))
    assert rates["papers quarantined"] == 0.1
    assert rates["records with a leaky answer"] == 0.1
    assert rates["views left leaking"] == 0.01
    assert rates["placeholder views"] == 0.25
    assert integrity_rates(None) == []


def test_charts_escape_labels_and_draw_to_scale() -> None:
    svg = charts.bars([("<script>", 10), ("b", 5)], "t & u")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "t &amp; u" in svg
    widths = [float(w) for w in re.findall(r"<rect x='[\d.]+' y='[\d.]+' width='([\d.]+)'", svg)]
    assert widths[0] == 2 * widths[1]
    md = charts.markdown_image(svg, "t")
    assert md.startswith("![t](data:image/svg+xml;base64,")
    assert base64.b64decode(md.split(",", 1)[1][:-1]).decode() == svg


def test_report_page_of_a_vault(vault_paths, tmp_path) -> None:
    write_vault(vault_paths)
    build_splits(vault_paths, SplitSettings(cutoff=CUTOFF))
    overview = collect(vault_paths)
    assert overview.papers == sum(n for _, n in overview.by_year)
    assert [y for y, _ in overview.by_year] == sorted(y for y, _ in overview.by_year)
    assert dict(overview.splits)["vault"] > 0 and overview.cutoff == str(CUTOFF)
    assert "documents" in overview.missing and "integrity report" in overview.missing

    out = tmp_path / "page" / "vault.html"
    result = runner.invoke(app, ["report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.count("<svg") == 5  # year, category, splits, documents, rates
    assert "http" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    assert "not built yet: documents, integrity report" in page
    year_rows = re.findall(r"<tr><td>(\d{4})</td>", page)
    assert year_rows == sorted(year_rows) and len(year_rows) > 1


def test_report_of_no_vault_is_a_clear_error(tmp_path) -> None:
    result = runner.invoke(app, ["report", "--home", str(tmp_path / "none")])
    assert result.exit_code == 1 and "no vault" in result.output


def test_splits_asset_shows_its_sizes_as_a_chart(vault_paths) -> None:
    import dagster as dg

    from assets import VaultResource
    from assets.splits import splits as asset

    write_vault(vault_paths)
    result = dg.materialize([asset], resources={"vault": VaultResource()}, run_config={
        "ops": {"splits": {"config": {"cutoff": str(CUTOFF)}}}})
    assert result.success
    metadata = result.asset_materializations_for_node("splits")[0].metadata
    chart = metadata["by_split_chart"].value
    assert chart.startswith("![Papers by split](data:image/svg+xml;base64,")
    svg = base64.b64decode(chart.split(",", 1)[1][:-1]).decode()
    assert ">vault<" in svg and ">excluded<" in svg
