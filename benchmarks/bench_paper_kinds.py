"""Precision, recall and F1 of the methodological-paper classifier on two labelled sets of
real papers, side by side, with 95 % bootstrap intervals.

    python benchmarks/bench_paper_kinds.py            # figures
    python benchmarks/bench_paper_kinds.py --train    # retrain the learned model on dev

Labels (one annotator, by the guide in `docs/paper_kinds.md`):

- `benchmarks/data/paper_kinds.jsonl`: the 110 papers of the bundled arXiv sample and
  recorded API page (titles and abstracts read from the sample), split by a hash of the id
  into `dev` and `untouched`;
- `benchmarks/data/paper_kinds_cs.jsonl`: 458 CSAbstruct abstracts (no titles), split by
  paper into `dev` and `heldout` before any classifier ran (`benchmarks/data/README.md`).

Only `dev` halves may shape rules or train models; `untouched` and `heldout` only give
figures, and their disagreements are never printed. "Positive" is methodological (a
target): precision is the share of accepted papers that are methodological, recall the
share of methodological papers accepted. The LLM classifier is not measured here: it needs
a model server."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vault_pipeline.splits import kind_model
from vault_pipeline.splits.kinds import classify, name, rules

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "paper_kinds.jsonl"
LABELS_CS = ROOT / "benchmarks" / "data" / "paper_kinds_cs.jsonl"
RAW = ROOT / "vault_pipeline" / "sample" / "raw"
ATOM = "{http://www.w3.org/2005/Atom}"
RESAMPLES = 2000
Classifier = Callable[[str, str], bool]


def half(arxiv_id: str) -> str:
    """`dev` or `untouched`, fixed by the id alone (the 110-paper set)."""
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


def papers() -> list[dict]:
    """Every labelled paper of both sets: `set`, `id`, `half`, `title`, `abstract`,
    `methodological`, `kind`."""
    text = texts()
    out = []
    for line in LABELS.read_text().splitlines():
        row = json.loads(line)
        if row["arxiv_id"] not in text:
            raise SystemExit(f"labelled paper not in the sample: {row['arxiv_id']}")
        title, abstract = text[row["arxiv_id"]]
        out.append({"set": "arxiv-110", "id": row["arxiv_id"], "half": half(row["arxiv_id"]),
                    "title": title, "abstract": abstract, "kind": row["kind"],
                    "methodological": row["methodological"]})
    for line in LABELS_CS.read_text().splitlines():
        row = json.loads(line)
        out.append({"set": "csabstruct-458", "id": row["id"], "half": row["half"],
                    "title": "", "abstract": row["abstract"], "kind": row["kind"],
                    "methodological": row["methodological"]})
    return out


def scores(pairs: list[tuple[bool, bool]]) -> dict[str, float | int]:
    """Counts and rates of (label, verdict) pairs; NaN where a rate is undefined."""
    tp = sum(t and p for t, p in pairs)
    fp = sum(p and not t for t, p in pairs)
    fn = sum(t and not p for t, p in pairs)
    tn = len(pairs) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else (0.0 if fp + fn else float("nan"))
    return {"n": len(pairs), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": precision, "recall": recall, "f1": f1,
            "accuracy": (tp + tn) / len(pairs) if pairs else float("nan")}


def intervals(pairs: list[tuple[bool, bool]], seed: int = 0,
              resamples: int = RESAMPLES) -> dict[str, tuple[float, float]]:
    """95 % percentile bootstrap intervals of precision, recall and F1, papers resampled
    with replacement (undefined resamples, e.g. nothing accepted, are left out)."""
    if not pairs:
        return {}
    truth = np.array([t for t, _ in pairs])
    verdict = np.array([p for _, p in pairs])
    pick = np.random.default_rng(seed).integers(0, len(pairs), (resamples, len(pairs)))
    t, p = truth[pick], verdict[pick]
    tp = (t & p).sum(1).astype(float)
    fp = (~t & p).sum(1)
    fn = (t & ~p).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = {"precision": tp / (tp + fp), "recall": tp / (tp + fn),
                 "f1": 2 * tp / (2 * tp + fp + fn)}
    return {name: tuple(np.nanpercentile(v, [2.5, 97.5])) if np.isfinite(v).any()
            else (float("nan"), float("nan")) for name, v in rates.items()}


def variants() -> dict[str, Classifier]:
    """The classifiers measured, by name: the shipped one, its two halves alone, and the
    shipped one reading no title (CSAbstruct has none)."""
    judge = kind_model.model()
    out = {
        "rules + model (shipped)": lambda t, a: classify(t, a).methodological,
        "rules + model, no title": lambda _t, a: classify("", a).methodological,
        "rules alone": lambda t, a: rules(t, a).methodological,
    }
    if judge is not None:
        out["model alone"] = lambda t, a: kind_model.probability(t, a, judge) >= judge.threshold
    return out


def train() -> None:
    """Retrain the learned model on the dev halves of both sets and write its weights."""
    dev = [r for r in papers() if r["half"] == "dev"]
    texts = [kind_model.text_of(r["title"], r["abstract"]) for r in dev]
    labels = [r["methodological"] for r in dev]
    payload = "\n".join(f"{r['id']}\t{r['methodological']}\t{t}"
                        for r, t in zip(dev, texts, strict=True))
    judge = kind_model.train(texts, labels, [rules(r["title"], r["abstract"]).kind
                                             for r in dev],
                             hashlib.sha256(payload.encode()).hexdigest())
    judge.save(kind_model.WEIGHTS)
    print(f"trained {judge.version} on {len(dev)} dev papers ({sum(labels)} methodological): "
          f"threshold {judge.threshold:.2f}, out-of-fold F1 {judge.meta['out_of_fold_f1']:.3f}"
          f" -> {kind_model.WEIGHTS.name}")


def measure(rows: list[dict], variant: Classifier) -> dict[tuple[str, str], list]:
    """(label, verdict) pairs per (set, half)."""
    out: dict[tuple[str, str], list] = {}
    for row in rows:
        verdict = variant(row["title"], row["abstract"])
        out.setdefault((row["set"], row["half"]), []).append((row["methodological"], verdict))
    return out


def _rate(s: dict, ci: dict, name: str) -> str:
    low, high = ci.get(name, (float("nan"), float("nan")))
    return f"{s[name]:.2f} [{low:.2f}-{high:.2f}]"


def main() -> None:
    if "--train" in sys.argv[1:]:
        train()
        return
    rows = papers()
    for sname in sorted({r["set"] for r in rows}):
        part = [r for r in rows if r["set"] == sname]
        print(f"{sname}: {len(part)} papers, {sum(r['methodological'] for r in part)} "
              f"methodological")
    print(f"classifier: {name()}")
    print(f"\n{'classifier':<26} {'set':<15} {'half':<10} {'n':>4} {'tp':>4} {'fp':>4} "
          f"{'fn':>4} {'tn':>4}  {'precision [95% CI]':<19} {'recall [95% CI]':<19} "
          f"{'F1 [95% CI]':<19}")
    for vname, variant in variants().items():
        for (sname, hname), pairs in sorted(measure(rows, variant).items()):
            s, ci = scores(pairs), intervals(pairs)
            print(f"{vname:<26} {sname:<15} {hname:<10} {s['n']:>4} {s['tp']:>4} "
                  f"{s['fp']:>4} {s['fn']:>4} {s['tn']:>4}  {_rate(s, ci, 'precision'):<19} "
                  f"{_rate(s, ci, 'recall'):<19} {_rate(s, ci, 'f1'):<19}")
    print("\nThe LLM classifier is not measured: it needs a model server.")


if __name__ == "__main__":
    main()
