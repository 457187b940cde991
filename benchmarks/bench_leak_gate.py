"""The integrity gate on the labelled sentence set: precision, recall and clean-kept per layer
and combined, on the untouched `heldout` half (and on `dev`, which shaped the rules and
trained the offline judge, for comparison), by kind of text, with the time per sentence.

    python benchmarks/bench_leak_gate.py [--papers ../shared/fixtures/pdfs]

Layers: `rules` (deterministic shapes), `source` (the rest of the sentence's own paper as
results context: its other result sentences, results sections, tables and captions; only
for sentences whose paper is at hand: the bundled abstracts and the real PDFs), `judge` (the
offline classifier shipped with the package), `combined` (any of them). The LLM judge needs
an LLM backend and is not measured here. Goal on `heldout`: recall >= 0.99 of result
sentences, clean kept >= 0.95.

External check: the test split of CSAbstruct (Cohan et al. 2019, AllenAI, Apache-2.0; 226
computer-science abstracts, sentence roles labelled by crowd workers), copied to
`benchmarks/data/csabstruct_test.jsonl`. Its `result` role is taken as a result sentence and
every other role as clean. Its guide is not ours, so the figure says how the gate carries
over to text and labels it never saw, not the goal's figure."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_pipeline.ideas.inputs import PaperInput  # noqa: E402
from vault_pipeline.ideas.leaks import sentences  # noqa: E402
from vault_pipeline.integrity import classifier  # noqa: E402
from vault_pipeline.integrity.labelled import (  # noqa: E402
    evaluate,
    judge_layer,
    load_rows,
    rules_layer,
    strict_judge_layer,
)
from vault_pipeline.integrity.source import results_context  # noqa: E402

SAMPLE = ROOT / "vault_pipeline" / "sample" / "raw"
CSABSTRUCT = ROOT / "benchmarks" / "data" / "csabstruct_test.jsonl"
GOAL_RECALL, GOAL_KEPT = 0.99, 0.95


def _abstracts() -> dict[str, str]:
    """Abstracts of the bundled sample by arXiv id (snapshot lines and the API page)."""
    out = {}
    for line in (SAMPLE / "arxiv-metadata-oai-snapshot.sample.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = " ".join(row["abstract"].split())
    from lxml import etree

    page = json.loads((SAMPLE / "q_testing_s0_m10_bc5a6c384fe9.json").read_text())
    atom = etree.fromstring(page["body"].encode())
    ns = {"a": "http://www.w3.org/2005/Atom"}
    for entry in atom.findall("a:entry", ns):
        ident = entry.findtext("a:id", namespaces=ns).rsplit("/", 1)[-1].split("v")[0]
        out[ident] = " ".join(entry.findtext("a:summary", namespaces=ns).split())
    return out


def _pdf_texts(folder: Path) -> dict[str, str]:
    import pymupdf

    out = {}
    for pdf in sorted(folder.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            out[pdf.name] = "\n".join(page.get_text() for page in doc)
    return out


def source_layer(papers: dict[str, str]):
    """Flags a sentence that repeats a figure or outcome phrase of the *rest* of its paper."""
    judge = classifier.load()

    def flags(rows: list[dict]) -> list[bool]:
        out = []
        for row in rows:
            text = papers.get(row["doc"])
            if not text:
                out.append(False)
                continue
            rest = text.replace(row["text"], " ")
            paper = PaperInput(row["doc"], "", "" if row["source"].startswith("pdf") else rest,
                               rest if row["source"].startswith("pdf") else None, None,
                               "pdf", None)
            context = results_context(paper, judge.flags if judge else None)
            out.append(bool(context.findings(row["text"])))
        return out

    return flags


def _print(scores) -> None:
    print(f"  {'layer':<9} {'sentences':>9} {'results':>7} {'recall':>7} {'precision':>9} "
          f"{'clean kept':>10}")
    for s in scores:
        print(f"  {s.layer:<9} {s.sentences:>9} {s.results:>7} {s.recall:>7.3f} "
              f"{s.precision:>9.3f} {s.clean_kept:>10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=Path, default=ROOT.parent / "shared" / "fixtures"
                        / "pdfs", help="folder of the real PDFs the labelled set quotes")
    args = parser.parse_args()
    judge = classifier.load()
    print(f"machine: {os.cpu_count()} cores; offline judge {judge.version} (threshold "
          f"{judge.threshold:.3f}, strict {judge.strict_threshold:.3f})" if judge
          else "no offline judge")
    papers = _abstracts()
    if args.papers.is_dir():
        papers |= _pdf_texts(args.papers)
    else:
        print(f"  ({args.papers} not found: the source layer sees abstracts only)")
    layers = {"rules": rules_layer, "source": source_layer(papers), "judge": judge_layer}
    for split in ("heldout", "dev"):
        rows = load_rows(split)
        started = time.perf_counter()
        scores = evaluate(split, layers, rows)
        seconds = time.perf_counter() - started
        print(f"\n{split}: {len(rows)} sentences ({seconds / len(rows) * 1000:.2f} ms per "
              "sentence, all layers)")
        _print(scores)
        by_kind: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            by_kind[row["source"].split(":")[0]].append(row)
        for kind, part in sorted(by_kind.items()):
            print(f" {split} / {kind}:")
            _print([s for s in evaluate(split, layers, part) if s.layer == "combined"])
        copying = evaluate(split, {"rules": rules_layer, "strict judge": strict_judge_layer},
                           rows)
        print(f" {split} / what the extractive reader may copy (rules + judge at its strict "
              "threshold):")
        _print([s for s in copying if s.layer != "rules"])
        if split == "heldout":
            combined = next(s for s in scores if s.layer == "combined")
            met = combined.recall >= GOAL_RECALL and combined.clean_kept >= GOAL_KEPT
            print(f"  goal (recall >= {GOAL_RECALL}, clean kept >= {GOAL_KEPT}): "
                  f"{'met' if met else 'NOT met'}")
    if CSABSTRUCT.exists():
        abstracts = [json.loads(line) for line in CSABSTRUCT.read_text().splitlines()
                     if line.strip()]
        external = [{"text": text, "label": "result" if role == "result" else "not_result",
                     "doc": None, "source": "csabstruct"}
                    for a in abstracts
                    for text, role in zip(a["sentences"], a["labels"], strict=True)]
        print(f"\nexternal: CSAbstruct test, {len(external)} sentences (crowd roles; "
              "`result` = result)")
        _print(evaluate("csabstruct", {"rules": rules_layer, "judge": judge_layer}, external))
    started = time.perf_counter()
    sample = [s for r in load_rows() for s in sentences(r["text"])][:2000]
    rules_layer([{"text": s} for s in sample])
    rules_s = time.perf_counter() - started
    started = time.perf_counter()
    judge_layer([{"text": s} for s in sample])
    judge_s = time.perf_counter() - started
    print(f"\nspeed on {len(sample)} sentences: rules {len(sample) / rules_s:,.0f}/s, offline "
          f"judge {len(sample) / judge_s:,.0f}/s")


if __name__ == "__main__":
    main()
