"""Put CSAbstruct's own train and dev splits into the sentence-role corpus, with their
annotators' labels (the role model's training data for computer science).

    python benchmarks/add_csabstruct_roles.py train.jsonl dev.jsonl

The files are CSAbstruct's `data/CSAbstruct/{train,dev}.jsonl` from AllenAI's
`sequential_sentence_classification` repository (Apache License 2.0): one abstract per
line with `sentences` and `labels`. Every abstract goes to the corpus's `train` split; the
CSAbstruct test split stays the corpus's `dev` and `heldout` halves, and an abstract that
shares a sentence (over 60 characters) with the test split is left out. The 221 train
abstracts relabelled by the labelled sentence set (`csabstruct-train-relabelled`) are
replaced by the same abstracts with the annotators' labels, so one convention (CSAbstruct's:
an evaluation set-up is part of the results) holds across the CS training data."""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vault_pipeline.integrity.roles import ABSTRACTS, ROLES

REPLACED = "csabstruct-train-relabelled"


def rows_of(path: Path, split: str) -> list[dict]:
    """The role-corpus rows of one CSAbstruct file."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        sentences, labels = item["sentences"], item["labels"]
        if len(sentences) != len(labels) or not set(labels) <= set(ROLES):
            raise ValueError(f"{path}: an abstract whose labels do not match its sentences")
        digest = hashlib.sha256(" ".join(sentences).encode()).hexdigest()[:12]
        rows.append({"id": f"csabstruct-{split}:{digest}", "corpus": f"csabstruct-{split}",
                     "domain": "cs", "split": "train", "sentences": sentences,
                     "labels": labels})
    return rows


def main(paths: list[str]) -> None:
    with gzip.open(ABSTRACTS, "rt", encoding="utf-8") as fh:
        kept = [json.loads(line) for line in fh if line.strip()]
    kept = [r for r in kept if r["corpus"] != REPLACED
            and not r["corpus"].startswith(("csabstruct-train", "csabstruct-dev"))]
    # sentences long enough to name one abstract ("All rights reserved." names none)
    held = {s for r in kept if r["domain"] == "cs" for s in r["sentences"] if len(s) > 60}
    added, seen = [], {r["id"] for r in kept}
    for name in paths:
        split = "dev" if "dev" in Path(name).name else "train"
        for row in rows_of(Path(name), split):
            if row["id"] in seen or any(s in held for s in row["sentences"]):
                continue
            seen.add(row["id"])
            added.append(row)
    with gzip.open(ABSTRACTS, "wt", encoding="utf-8", compresslevel=9) as fh:
        for row in kept + added:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(added)} CSAbstruct abstracts added; {len(kept) + len(added)} in the corpus")


if __name__ == "__main__":
    main(sys.argv[1:])
