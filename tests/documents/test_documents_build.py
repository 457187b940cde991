"""The documents stage end to end: isolation (hang, abort), one row per paper, LaTeX over
PDF, abstract fallback, unidentified files, no second conversion, resume after a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pymupdf
import pytest

from tests.conftest import SAMPLE
from vault_pipeline.documents.build import DocumentsConfig, Journal, build_documents
from vault_pipeline.documents.convert import PDF, Settings, Task, convert_task
from vault_pipeline.documents.naming import arxiv_id_of
from vault_pipeline.documents.outcome import Conversion
from vault_pipeline.documents.workers import PoolSettings, run_isolated
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS
from vault_pipeline.store.paths import VaultPaths


def hostile_convert(task: Task) -> Conversion:
    """Runs in the worker: hangs or aborts on marked inputs, converts the rest."""
    name = Path(task.path).name
    if "hang" in name:
        time.sleep(600)
    if "abort" in name:
        os.abort()
    return convert_task(task)


@pytest.mark.parametrize(("converter", "warm"), [("fast", True), ("pymupdf4llm", True),
                                                 ("fast", False)],
                         ids=["fast, warmed", "pymupdf4llm, warmed", "cold (control)"])
def test_the_warm_up_loads_what_a_first_conversion_would(tmp_path: Path, converter: str,
                                                         warm: bool) -> None:
    """A worker's first document must not pay the converter's load time (lazy modules,
    fonts: 1-2 s on an idle core) inside its own timeout: after the warm-up a real paper
    loads nothing new, whichever converter the settings name; without it (the control) the
    same paper does."""
    script = f"""
import sys
from vault_pipeline.documents.convert import PDF, Settings, Task, convert_task
from vault_pipeline.documents.workers import warm_up
settings = Settings(pdf_converter={converter!r})
if {warm}:
    warm_up()
before = set(sys.modules)
task = Task("a", PDF, {str(SAMPLE / "2204.08348v3.pdf")!r}, {str(tmp_path)!r}, settings)
assert convert_task(task).status == "ok"
print(len([name for name in set(sys.modules) - before if not name.startswith("encodings")]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2]).stdout
    assert (int(out) == 0) == warm, out


def test_hang_and_abort_cost_one_row_each_and_the_batch_goes_on(tmp_path: Path) -> None:
    names = ["a.pdf", "hang.pdf", "abort.pdf", "b.pdf", "c.pdf"]
    for name in names:
        shutil.copy(SAMPLE / "2204.08348v3.pdf", tmp_path / name)
    tasks = [Task(name, PDF, str(tmp_path / name), str(tmp_path / "s"), Settings())
             for name in names]
    started = time.perf_counter()
    results = {task.key: result for task, result in
               run_isolated(tasks, PoolSettings(workers=2, timeout_s=15), hostile_convert)}
    # 15 s is 300 times a conversion of this paper (about 50 ms): a loaded CI machine
    # once stretched one past 5 s
    assert time.perf_counter() - started < 90
    assert results["hang.pdf"].status == "timeout" and "15 s" in results["hang.pdf"].error
    assert results["abort.pdf"].status == "crashed" and "SIGABRT" in results["abort.pdf"].error
    assert {results[n].status for n in ("a.pdf", "b.pdf", "c.pdf")} == {"ok"}


def _vault(vault_paths: VaultPaths, extra: dict[str, bytes] | None = None) -> VaultPaths:
    incoming = vault_paths.home.parent / "incoming"
    incoming.mkdir()
    for path in SAMPLE.iterdir():
        shutil.copy(path, incoming / path.name)
    for name, data in (extra or {}).items():
        (incoming / name).write_bytes(data)
    RawZone(vault_paths).import_paths([incoming])
    build_papers(vault_paths)
    return vault_paths


def _locked_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")


def _config() -> DocumentsConfig:
    return DocumentsConfig(pool=PoolSettings(workers=2, timeout_s=60))


def test_build_on_the_sample(vault_paths: VaultPaths) -> None:
    paths = _vault(vault_paths, {"2302.03287v3.pdf": _locked_pdf(),
                                 "notes-from-a-talk.pdf": (SAMPLE / "2204.08348v3.pdf")
                                 .read_bytes() + b"\n% a different file\n"})
    report = build_documents(paths, _config())
    docs = pl.read_parquet(paths.table(DOCUMENTS.name))
    papers = pl.read_parquet(paths.table("papers"))
    by_id = {row["arxiv_id"]: row for row in docs.iter_rows(named=True)}

    assert set(papers["arxiv_id"]) <= set(by_id)  # every paper has a row
    assert docs.filter(pl.col("arxiv_id").is_not_null())["arxiv_id"].is_unique().all()
    latex = by_id["2202.12139"]  # both an e-print and a PDF: LaTeX wins
    assert (latex["source"], latex["status"], latex["version"]) == ("latex", "ok", 1)
    assert by_id["1401.2122"]["source"] == "latex"
    pdf = by_id["2405.13786"]
    assert (pdf["source"], pdf["status"], pdf["n_pages"]) == ("pdf", "ok", 2)
    assert pdf["hidden_chars"] > 0 and "Ignore all previous" not in pdf["text"]
    locked = by_id["2302.03287"]  # encrypted: the abstract, and why
    assert (locked["source"], locked["status"]) == ("abstract_only", "encrypted")
    assert "pdf: encrypted" in locked["error"] and "## Abstract" in locked["text"]
    none = by_id["0704.0001"]
    assert (none["source"], none["status"], none["sha256"]) == ("abstract_only", "no_source",
                                                                None)
    unknown = docs.filter(pl.col("arxiv_id").is_null()).row(0, named=True)
    assert unknown["status"] == "unidentified" and "notes-from-a-talk.pdf" in unknown["error"]
    assert unknown["text"] and unknown["sha256"]
    assert report.converted == 11  # 5 e-prints + 6 PDFs (the PDF beaten by LaTeX skipped)

    again = build_documents(paths, _config())
    assert again.converted == 0 and again.reused == 11
    second = pl.read_parquet(paths.table(DOCUMENTS.name))
    assert second.drop("converted_at").equals(docs.drop("converted_at"))


def test_a_crashed_run_resumes_from_its_journal(vault_paths: VaultPaths,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The run dies after two finished conversions; the next run converts only the rest."""
    paths = _vault(vault_paths)

    class Crash(Exception):
        pass

    original_add = Journal.add
    added: list[str] = []

    def add_then_crash(self: Journal, row: dict) -> None:
        original_add(self, row)
        self.flush()
        added.append(row["sha256"])
        if len(added) == 2:
            raise Crash

    monkeypatch.setattr(Journal, "add", add_then_crash)
    with pytest.raises(Crash):
        build_documents(paths, _config())
    monkeypatch.setattr(Journal, "add", original_add)
    assert not paths.table(DOCUMENTS.name).exists()
    report = build_documents(paths, _config())
    assert report.resumed == 2 and report.converted == 7  # 9 inputs to convert in all
    attempts = pl.read_parquet(paths.table(DOCUMENT_ATTEMPTS.name))
    assert attempts.height == 9 and attempts["sha256"].is_unique().all()
    assert not (paths.scratch / "documents-journal").exists()


@pytest.mark.parametrize(("name", "origin", "expected"), [
    ("2202.12139v1.pdf", None, ("2202.12139", 1)),
    ("arXiv-2202.12139v2.tar.gz", None, ("2202.12139", 2)),
    ("hep-th_9901001.pdf", None, ("hep-th/9901001", None)),
    ("x.pdf", "https://arxiv.org/pdf/math/0309136v3", ("math/0309136", 3)),
    ("paper-final.pdf", "import:/home/me/paper-final.pdf", None),
])
def test_arxiv_id_from_name_or_origin(name: str, origin: str | None, expected) -> None:
    found, _where = arxiv_id_of(name, origin)
    assert (tuple(found) if found else None) == expected
