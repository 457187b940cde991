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

Each table has one block of columns per offline judge, side by side in one run: `anchor`
(the hashed n-gram judge as first shipped, `benchmarks/data/judge_weights_anchor.npz`),
`hashed` (the hashed judge now shipped, the fallback) and `shipped` (what
`classifier.load()` gives: the blend with the fine-tuned MiniLM when it can be built here),
with the cost of all layers and of each judge in ms per sentence.

External check: the test split of CSAbstruct (Cohan et al. 2019, AllenAI, Apache-2.0; 226
computer-science abstracts, sentence roles labelled by crowd workers), copied to
`benchmarks/data/csabstruct_test.jsonl`. Its `result` role is taken as a result sentence and
every other role as clean. Its guide is not ours, so the figure says how the gate carries
over to text and labels it never saw, not the goal's figure."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_pipeline.integrity import classifier  # noqa: E402
from vault_pipeline.integrity.labelled import (  # noqa: E402
    evaluate,
    judge_layer,
    load_rows,
    rules_layer,
    strict_judge_layer,
)
from vault_pipeline.integrity.leaks import sentences  # noqa: E402
from vault_pipeline.integrity.source import results_context  # noqa: E402
from vault_pipeline.llm.inputs import PaperInput  # noqa: E402

SAMPLE = ROOT / "vault_pipeline" / "sample" / "raw"
CSABSTRUCT = ROOT / "benchmarks" / "data" / "csabstruct_test.jsonl"
ANCHOR = ROOT / "benchmarks" / "data" / "judge_weights_anchor.npz"
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


def source_layer(papers: dict[str, str], judge):
    """Flags a sentence that repeats a figure or outcome phrase of the *rest* of its paper
    (whose result sentences are found by the rules and ``judge``). The judge's verdicts are
    kept per sentence: each row reads its paper again, less its own sentence."""
    seen: dict[str, bool] = {}

    def judged(texts: list[str]) -> list[bool]:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        seen.update(zip(new, judge.flags(new) if new else [], strict=True))
        return [seen[t] for t in texts]

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
            context = results_context(paper, judged if judge else None)
            out.append(bool(context.findings(row["text"])))
        return out

    return flags


def _judges() -> dict[str, object]:
    """The judges compared: the anchor (the hashed judge as first shipped, trained on the
    labelled set before the CSAbstruct relabelling), the hashed judge now shipped (the
    fallback) and the shipped offline judge (the blend with the fine-tuned MiniLM when it
    can be built here)."""
    judges = {"anchor": classifier.load_hashed(ANCHOR), "hashed": classifier.load_hashed(),
              "shipped": classifier.load()}
    if judges["shipped"] is judges["hashed"]:
        del judges["shipped"]
    return {name: judge for name, judge in judges.items() if judge is not None}


def _layers(judge, papers: dict[str, str] | None) -> dict:
    layers = {"rules": rules_layer}
    if papers is not None:
        layers["source"] = source_layer(papers, judge)
    layers["judge"] = functools.partial(judge_layer, judge=judge)
    return layers


def _print(columns: dict[str, list]) -> None:
    """One row per layer, one block of columns per judge."""
    names = list(columns)
    print(f"  {'layer':<9} {'n':>5} {'results':>7} " + " | ".join(
        f"{name + ': recall':>15} {'precision':>9} {'kept':>6}" for name in names))
    for i, first in enumerate(columns[names[0]]):
        cells = " | ".join(f"{columns[n][i].recall:>15.3f} {columns[n][i].precision:>9.3f} "
                           f"{columns[n][i].clean_kept:>6.3f}" for n in names)
        print(f"  {first.layer:<9} {first.sentences:>5} {first.results:>7} {cells}")


def _timed(split: str, judges: dict, rows: list[dict], papers) -> tuple[dict, dict]:
    scores, ms = {}, {}
    for name, judge in judges.items():
        started = time.perf_counter()
        scores[name] = evaluate(split, _layers(judge, papers), rows)
        ms[name] = (time.perf_counter() - started) / len(rows) * 1000
    return scores, ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=Path, default=ROOT.parent / "shared" / "fixtures"
                        / "pdfs", help="folder of the real PDFs the labelled set quotes")
    args = parser.parse_args()
    judges = _judges()
    print(f"machine: {os.cpu_count()} cores; offline judges compared:")
    for name, judge in judges.items():
        print(f"  {name:<8} {judge.version} (threshold {judge.threshold:.3f}, strict "
              f"{judge.strict_threshold:.3f}; trained on {judge.meta.get('sentences')} "
              "dev + train sentences)")
    papers = _abstracts()
    if args.papers.is_dir():
        papers |= _pdf_texts(args.papers)
    else:
        print(f"  ({args.papers} not found: the source layer sees abstracts only)")
    for judge in judges.values():  # first use builds a model: not part of the timings
        judge.flags(["warm-up sentence."])
    for split in ("heldout", "dev"):
        rows = load_rows(split)
        scores, ms = _timed(split, judges, rows, papers)
        print(f"\n{split}: {len(rows)} sentences; all layers, ms per sentence: "
              + ", ".join(f"{n} {v:.2f}" for n, v in ms.items()))
        _print(scores)
        by_kind: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            by_kind[row["source"].split(":")[0]].append(row)
        for kind, part in sorted(by_kind.items()):
            print(f" {split} / {kind} (combined):")
            _print({n: [s for s in evaluate(split, _layers(j, papers), part)
                        if s.layer == "combined"] for n, j in judges.items()})
        print(f" {split} / what the extractive reader may copy (rules + judge at its strict "
              "threshold):")
        _print({n: [s for s in evaluate(split, {"rules": rules_layer, "strict": functools.partial(
            strict_judge_layer, judge=j)}, rows) if s.layer == "combined"]
                for n, j in judges.items()})
        if split == "heldout":
            for name, result in scores.items():
                combined = next(s for s in result if s.layer == "combined")
                met = combined.recall >= GOAL_RECALL and combined.clean_kept >= GOAL_KEPT
                print(f"  goal (recall >= {GOAL_RECALL}, clean kept >= {GOAL_KEPT}) with "
                      f"{name}: {'met' if met else 'NOT met'}")
    if CSABSTRUCT.exists():
        abstracts = [json.loads(line) for line in CSABSTRUCT.read_text().splitlines()
                     if line.strip()]
        external = [{"text": text, "label": "result" if role == "result" else "not_result",
                     "doc": None, "source": "csabstruct"}
                    for a in abstracts
                    for text, role in zip(a["sentences"], a["labels"], strict=True)]
        print(f"\nexternal: CSAbstruct test, {len(external)} sentences (crowd roles; "
              "`result` = result; never trained on)")
        _print({n: evaluate("csabstruct", _layers(j, None), external)
                for n, j in judges.items()})
    sample = [s for r in load_rows() for s in sentences(r["text"])][:2000]
    started = time.perf_counter()
    rules_layer([{"text": s} for s in sample])
    speeds = [f"rules {len(sample) / (time.perf_counter() - started):,.0f}/s"]
    for name, judge in judges.items():
        started = time.perf_counter()
        judge.flags(sample)
        seconds = time.perf_counter() - started
        speeds.append(f"{name} judge {len(sample) / seconds:,.0f}/s "
                      f"({seconds / len(sample) * 1000:.2f} ms/sentence)")
    print(f"\nspeed on {len(sample)} sentences: " + ", ".join(speeds))


if __name__ == "__main__":
    main()
