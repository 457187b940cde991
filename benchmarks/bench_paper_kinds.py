"""Precision and recall of the methodological-paper classifier on a labelled set of real
papers (titles and abstracts of the bundled arXiv sample and recorded API page).

    python benchmarks/bench_paper_kinds.py

Labels: `benchmarks/data/paper_kinds.jsonl` (one annotator, by the guide in
`docs/paper_kinds.md`). The set is split by a hash of the id into a dev half, on which the
classifier may be tuned, and an untouched half, whose figures are the ones to quote.
"Positive" is methodological (a target), so precision is the share of accepted papers that
are methodological and recall the share of methodological papers accepted."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vault_pipeline.splits.kinds import classify

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "paper_kinds.jsonl"
RAW = ROOT / "vault_pipeline" / "sample" / "raw"
ATOM = "{http://www.w3.org/2005/Atom}"


def half(arxiv_id: str) -> str:
    """`dev` or `untouched`, fixed by the id alone."""
    return "dev" if hashlib.sha256(arxiv_id.encode()).digest()[0] % 2 == 0 else "untouched"


def texts() -> dict[str, tuple[str, str]]:
    """(title, abstract) of every real paper the sample bundles."""
    out = {}
    for line in (RAW / "arxiv-metadata-oai-snapshot.sample.jsonl").read_text().splitlines():
        row = json.loads(line)
        out[row["id"]] = (" ".join(row["title"].split()), " ".join(row["abstract"].split()))
    for page in RAW.glob("q_*.json"):
        feed = ElementTree.fromstring(json.loads(page.read_text())["body"])
        for entry in feed.iter(f"{ATOM}entry"):
            pid = entry.findtext(f"{ATOM}id").rsplit("/", 1)[-1].split("v")[0]
            out[pid] = (" ".join(entry.findtext(f"{ATOM}title").split()),
                        " ".join(entry.findtext(f"{ATOM}summary").split()))
    return out


def scores(pairs: list[tuple[bool, bool]]) -> dict[str, float | int]:
    tp = sum(t and p for t, p in pairs)
    fp = sum(p and not t for t, p in pairs)
    fn = sum(t and not p for t, p in pairs)
    tn = len(pairs) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    return {"n": len(pairs), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": precision, "recall": recall,
            "accuracy": (tp + tn) / len(pairs) if pairs else float("nan")}


def main() -> None:
    text = texts()
    labelled = [json.loads(line) for line in LABELS.read_text().splitlines()]
    missing = [r["arxiv_id"] for r in labelled if r["arxiv_id"] not in text]
    if missing:
        raise SystemExit(f"labelled papers not in the sample: {missing}")
    results: dict[str, list[tuple[bool, bool]]] = {"dev": [], "untouched": []}
    wrong = []
    for row in labelled:
        kind = classify(*text[row["arxiv_id"]])
        results[half(row["arxiv_id"])].append((row["methodological"], kind.methodological))
        if kind.methodological != row["methodological"] and half(row["arxiv_id"]) == "dev":
            wrong.append((row["arxiv_id"], row["kind"], kind.kind))
    print(f"labelled papers: {len(labelled)} ({sum(r['methodological'] for r in labelled)} "
          f"methodological); extractive classifier (vault_pipeline/splits/kinds.py)")
    print(f"{'half':<10} {'n':>4} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} "
          f"{'precision':>10} {'recall':>8} {'accuracy':>9}")
    for name, pairs in results.items():
        s = scores(pairs)
        print(f"{name:<10} {s['n']:>4} {s['tp']:>4} {s['fp']:>4} {s['fn']:>4} {s['tn']:>4} "
              f"{s['precision']:>10.2f} {s['recall']:>8.2f} {s['accuracy']:>9.2f}")
    print("dev-half disagreements (label / classifier): " + ", ".join(
        f"{pid} {label}/{got}" for pid, label, got in wrong))


if __name__ == "__main__":
    main()
