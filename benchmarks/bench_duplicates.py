"""Precision and recall of every duplicate method on the labelled pairs
(`data/duplicate_pairs.jsonl`, docs/duplicates.md), thresholds chosen on the `dev` half only,
figures on the `heldout` half with 95 % bootstrap intervals (source records resampled, as
the forms of one record are not independent). One command:

    python benchmarks/bench_duplicates.py

Each method scores a pair as the stage would: exact keys (`exact_*`, `link_*`), MinHash
estimated Jaccard of title and abstract where the LSH bands make the pair a candidate, and
the cosine of the index model's title-and-abstract embeddings. `stage (any method)` is the
stage's verdict at the shipped thresholds: a pair is one work when any method finds it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from vault_pipeline.duplicates import minhash, records  # noqa: E402
from vault_pipeline.duplicates.exact import exact_pairs  # noqa: E402
from vault_pipeline.duplicates.settings import DuplicatesSettings  # noqa: E402

PAIRS = ROOT / "data" / "duplicate_pairs.jsonl"
RESAMPLES = 2000
GRID = [round(x, 3) for x in np.arange(0.05, 1.0, 0.01)]


def load() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]


def _frame(side: dict, source: str) -> dict:
    return {"id": side["id"], "source": source, "title": side.get("title"),
            "abstract": side.get("abstract"), "authors": side.get("authors"),
            "doi": side.get("doi"), "arxiv_ref": None, "ref_how": None, "date": None}


def exact_scores(pairs: list[dict]) -> np.ndarray:
    rows = []
    for p in pairs:
        for side in ("a", "b"):
            s = p[side]
            rows.append(_frame({**s, "id": f"{p['id']}|{side}"},
                               records.OPENREVIEW if s["id"].startswith("openreview:")
                               else records.ARXIV))
    frame = pl.DataFrame(rows, schema=records.COLUMNS)
    found = exact_pairs(frame)
    hit = {a.split("|")[0] for a, b in found.select("a", "b").iter_rows()
           if a.split("|")[0] == b.split("|")[0]}
    return np.array([1.0 if p["id"] in hit else 0.0 for p in pairs])


def texts(pairs: list[dict], side: str) -> list[str]:
    return [f"{p[side].get('title') or ''}\n{p[side]['abstract']}".strip() for p in pairs]


def minhash_scores(pairs: list[dict], settings: DuplicatesSettings) -> np.ndarray:
    params = minhash.MinHashParams(settings.ngram, settings.bands, settings.rows)
    sa = minhash.signatures(pl.Series(texts(pairs, "a")), params)
    sb = minhash.signatures(pl.Series(texts(pairs, "b")), params)
    candidate = (minhash.band_keys(sa, params) == minhash.band_keys(sb, params)).any(axis=1)
    return np.where(candidate, minhash.estimate(sa, sb), 0.0)


def semantic_scores(pairs: list[dict], settings: DuplicatesSettings) -> np.ndarray | None:
    from vault_pipeline.embeddings.embedders import EmbedderSettings, load_embedder

    try:
        embedder = load_embedder(EmbedderSettings(model=settings.model,
                                                  backend=settings.backend))
    except Exception as exc:  # noqa: BLE001 - a benchmark reports what it could not run
        print(f"semantic method not measured: {exc}")
        return None
    va, vb = embedder.embed(texts(pairs, "a")), embedder.embed(texts(pairs, "b"))
    return (np.asarray(va) * np.asarray(vb)).sum(axis=1)


def counts(truth: np.ndarray, verdict: np.ndarray) -> dict[str, float]:
    tp = int((truth & verdict).sum())
    fp = int((~truth & verdict).sum())
    fn = int((truth & ~verdict).sum())
    return {"tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")}


def calibrate(scores: np.ndarray, truth: np.ndarray) -> float:
    """The middle of the dev thresholds of best F1 (a plateau between the highest
    non-duplicate and the lowest duplicate score it separates)."""
    f1 = [counts(truth, scores >= t)["f1"] for t in GRID]
    best = [t for t, f in zip(GRID, f1, strict=True) if f == max(f1)]
    return float(round(best[len(best) // 2], 2))


def intervals(truth: np.ndarray, verdict: np.ndarray, groups: np.ndarray, seed: int = 0
              ) -> dict[str, tuple[float, float]]:
    names = np.unique(groups)
    index = {g: np.flatnonzero(groups == g) for g in names}
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {"precision": [], "recall": []}
    for _ in range(RESAMPLES):
        rows = np.concatenate([index[g] for g in rng.choice(names, len(names))])
        c = counts(truth[rows], verdict[rows])
        for k in out:
            if np.isfinite(c[k]):
                out[k].append(c[k])
    return {k: tuple(np.percentile(v, [2.5, 97.5])) if v else (float("nan"),) * 2
            for k, v in out.items()}


def main() -> None:
    pairs = load()
    settings = DuplicatesSettings()
    truth = np.array([p["duplicate"] for p in pairs])
    dev = np.array([p["half"] == "dev" for p in pairs])
    groups = np.array([p["group"] for p in pairs])
    scored = {"exact (id, DOI, title + first author)": (exact_scores(pairs), 1.0),
              "minhash_abstract": (minhash_scores(pairs, settings),
                                   settings.abstract_threshold)}
    sem = semantic_scores(pairs, settings)
    if sem is not None:
        scored["semantic"] = (sem, settings.semantic_threshold)
    shipped = np.zeros(len(pairs), dtype=bool)
    for scores, threshold in scored.values():
        shipped |= scores >= threshold
    print(f"{len(pairs)} labelled pairs: dev {int(dev.sum())} (thresholds), heldout "
          f"{int((~dev).sum())} (figures); duplicates {int(truth.sum())}")
    print(f"{'method':40s} {'dev thr':>8s} {'shipped':>8s} {'precision [95% CI]':>26s} "
          f"{'recall [95% CI]':>26s}  tp/fp/fn")
    held = ~dev
    rows = [(name, calibrate(scores[dev], truth[dev]) if threshold < 1 else 1.0, threshold,
             scores >= threshold) for name, (scores, threshold) in scored.items()]
    rows.append(("stage (any method, shipped thresholds)", float("nan"), float("nan"),
                 shipped))
    for name, dev_t, ship_t, verdict in rows:
        c = counts(truth[held], verdict[held])
        ci = intervals(truth[held], verdict[held], groups[held])
        print(f"{name:40s} {dev_t:8.2f} {ship_t:8.2f} "
              f"{c['precision']:8.3f} [{ci['precision'][0]:.3f}, {ci['precision'][1]:.3f}] "
              f"{c['recall']:8.3f} [{ci['recall'][0]:.3f}, {ci['recall'][1]:.3f}]  "
              f"{c['tp']}/{c['fp']}/{c['fn']}")
    print("\nheldout recall by kind (stage, shipped thresholds):")
    kinds = sorted({p["kind"] for p in pairs})
    for kind in kinds:
        rows_k = np.array([p["kind"] == kind for p in pairs]) & held
        hit = int((shipped & rows_k).sum())
        print(f"  {kind:22s} {'duplicates' if truth[rows_k].all() else 'non-duplicates'}: "
              f"{hit}/{int(rows_k.sum())} called duplicate")


if __name__ == "__main__":
    main()
