"""Results masking end to end, in the views: role-labelled abstracts are read as a new user's
abstract-only papers by the default extractive path (record, gate, views), and every
labelled sentence that reaches a view or a record is counted.

    python benchmarks/bench_view_leaks.py [--split heldout|dev|crossfit] [--limit N] [--write]

Data: the role-labelled abstracts shipped with the gate
(`vault_pipeline/integrity/data/role_abstracts.jsonl.gz`, corpora and licenses in
`benchmarks/data/README.md`), split by document; `heldout` never trains or tunes anything.
`crossfit` reads a fixed fold of the training abstracts (400 biomedical, 200 CS) with a
role model trained without them: a second dev set, for choices the held-out half must
not make.
Figures per domain (computer science / NLP, biomedical), beside the goals of issue 27 and the
anchor (the same path with the sentence-role model switched off), in one run:
- result sentences reaching any view or record (goal <= 0.5 %), conclusion sentences
  (goal <= 2 %), result sentences per 1,000 view sentences (goal <= 2), each with its 95 %
  Wilson interval;
- clean (background / objective / method) sentences kept in views (goal >= 0.60 CS,
  >= 0.30 biomedical).
A view or record sentence is attributed to the abstract sentence holding at least 75 % of
its words (sentences of fewer than 4 words are not attributed). `--write` keeps the counts
of the shipped gate as the estimate that the integrity report and the data cards quote."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_pipeline.ideas import extractive  # noqa: E402
from vault_pipeline.ideas.views import build_all  # noqa: E402
from vault_pipeline.integrity import roles  # noqa: E402
from vault_pipeline.integrity.estimate import wilson, write_estimate  # noqa: E402
from vault_pipeline.integrity.gate import iter_texts, mask_plain, paper_gate  # noqa: E402
from vault_pipeline.integrity.leaks import sentences  # noqa: E402
from vault_pipeline.integrity.statements import method_statement  # noqa: E402
from vault_pipeline.llm.inputs import PaperInput  # noqa: E402

GOALS = {"result": 0.005, "conclusion": 0.02, "per_1000": 2.0,
         "clean_kept": {"cs": 0.60, "bio": 0.30}}
CLEAN = ("background", "objective", "method")
# Counts printed to explain the figures, not part of the estimate the report quotes.
DIAGNOSTICS = ("outcome_outside_block", "clean_inside_block", "outside_read_as")
_TOKEN = re.compile(r"[a-z0-9]+")
_LABEL = re.compile(r"^(?:[A-Z][A-Za-z ]{1,30}: |- )")
_SKIPPED = ("title", "topics", "references")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _out_sentences(text: str) -> list[str]:
    return [s for line in text.splitlines() for s in sentences(_LABEL.sub("", line.strip()))]


def attribute(sentence: str, sources: list[set[str]]) -> int | None:
    """The abstract sentence a view or record sentence was copied from, if any."""
    words = _tokens(sentence)
    if len(words) < 4:
        return None
    best, which = 0.0, None
    for i, source in enumerate(sources):
        share = sum(w in source for w in words) / len(words)
        if share > best:
            best, which = share, i
    return which if best >= 0.75 else None


def _paper(abstract: dict) -> PaperInput:
    title = abstract.get("title") or f"Paper {abstract['id'].split(':')[-1]}"
    return PaperInput(abstract["id"], title, " ".join(abstract["sentences"]), None, None,
                      "abstract_only", None)


def measure(abstracts: list[dict]) -> dict:
    """Counts of one domain: labelled sentences reaching views and records."""
    counts = {"abstracts": len(abstracts), "result": [0, 0], "conclusion": [0, 0],
              "clean_kept": [0, 0], "view_sentences": 0, "view_result": 0,
              "view_conclusion": 0, "quarantined": 0,
              # where the role model's outcome block stands: outcome sentences outside it
              # (what a view may still copy), clean sentences inside it (never copied)
              "outcome_outside_block": [0, 0], "clean_inside_block": [0, 0],
              "outside_read_as": Counter()}  # the model's role of those outside it
    for abstract in abstracts:
        labels = abstract["labels"]
        sources = [set(_tokens(s)) for s in abstract["sentences"]]
        reached, in_views = set(), set()
        paper = _paper(abstract)
        try:
            record, _ = extractive.decompose(paper)
            masked, _ = paper_gate(paper, offline_judge=True).mask(record)
            views = build_all(masked)
        except (ValueError, TypeError):  # the pipeline quarantines such a paper: no view
            counts["quarantined"] += 1
            views, masked = {}, {}
        for path, text in iter_texts(masked):
            if not path.startswith(_SKIPPED):
                reached.update(a for s in _out_sentences(text)
                               if (a := attribute(s, sources)) is not None)
        for view in views.values():
            text, _ = mask_plain(view.text)
            for sentence in _out_sentences(text or ""):
                counts["view_sentences"] += 1
                source = attribute(sentence, sources)
                if source is None:
                    continue
                in_views.add(source)
                counts["view_result"] += labels[source] == "result"
                counts["view_conclusion"] += labels[source] == "conclusion"
        reached |= in_views
        # read as the extractive reader reads it (a method statement only as an outcome)
        block, read_as = roles.read_block(abstract["sentences"], method_statement)
        for i, label in enumerate(labels):
            if label in ("result", "conclusion"):
                counts["outcome_outside_block"][0] += not block[i]
                counts["outcome_outside_block"][1] += 1
                counts["outside_read_as"][read_as[i]] += not block[i]
            elif label in CLEAN:
                counts["clean_inside_block"][0] += bool(block[i])
                counts["clean_inside_block"][1] += 1
            if label in ("result", "conclusion"):
                counts[label][1] += 1
                counts[label][0] += i in reached
            elif label in CLEAN:
                counts["clean_kept"][1] += 1
                counts["clean_kept"][0] += i in in_views
    if not counts["conclusion"][1]:
        del counts["conclusion"]
    return counts


def _cell(hits: int, total: int, scale: float = 100.0, unit: str = "%") -> str:
    rate, low, high = wilson(hits, total)
    return (f"{scale * rate:6.2f}{unit} [{scale * low:.2f}–{scale * high:.2f}] "
            f"({hits}/{total})")


def _print(domain: str, columns: dict[str, dict]) -> None:
    print(f"\n{domain}:")
    goal_kept = GOALS["clean_kept"][domain]
    rows = [("result sentences reaching a view or record", "result",
             f"<= {100 * GOALS['result']:.1f}%"),
            ("conclusion sentences reaching a view or record", "conclusion",
             f"<= {100 * GOALS['conclusion']:.0f}%"),
            ("result sentences per 1,000 view sentences", "per_1000",
             f"<= {GOALS['per_1000']:.0f}"),
            ("clean sentences kept in views", "clean_kept", f">= {goal_kept:.2f}")]
    print(f"  {'figure':<48} {'goal':>8} | " + " | ".join(f"{n:<36}" for n in columns))
    for label, key, goal in rows:
        cells = []
        for counts in columns.values():
            if key == "per_1000":
                cells.append(_cell(counts["view_result"], counts["view_sentences"], 1000, ""))
            elif key in counts:
                cells.append(_cell(*counts[key]))
            else:
                cells.append("-")
        print(f"  {label:<48} {goal:>8} | " + " | ".join(f"{c:<36}" for c in cells))
    shipped = next(iter(columns.values()))
    print(f"  outcome sentences outside the role model's outcome block: "
          f"{_cell(*shipped['outcome_outside_block'])} (read as "
          f"{dict(+shipped['outside_read_as'])}); clean sentences inside it (never kept): "
          f"{_cell(*shipped['clean_inside_block'])}")
    met = (shipped["result"][0] <= GOALS["result"] * shipped["result"][1]
           and ("conclusion" not in shipped
                or shipped["conclusion"][0] <= GOALS["conclusion"] * shipped["conclusion"][1])
           and shipped["view_result"] <= GOALS["per_1000"] / 1000 * shipped["view_sentences"]
           and shipped["clean_kept"][0] >= goal_kept * shipped["clean_kept"][1])
    print(f"  goals with the shipped gate: {'met' if met else 'NOT met'} (point estimates); "
          f"quarantined: {shipped['quarantined']}")


FOLD = {"bio": 400, "cs": 200}  # training abstracts set aside by --split crossfit


def crossfit() -> tuple[list[dict], roles.RoleModel]:
    """A fixed fold of the training abstracts and a role model trained without it (its
    threshold chosen on `dev` as the shipped one's): figures on text the role model never
    saw, without spending the held-out half. Reader rules may be chosen on it, as on
    `dev`; the held-out half stays the one figure nothing was chosen on."""
    train = roles.load_abstracts("train")
    rng = random.Random(5)
    fold = []
    for domain, size in FOLD.items():
        part = [a for a in train if a["domain"] == domain]
        rng.shuffle(part)
        fold += part[:size]
    ids = {a["id"] for a in fold}
    model = roles.train([a for a in train if a["id"] not in ids], roles.load_abstracts("dev"))
    return fold, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="heldout", choices=["heldout", "dev", "crossfit"],
                        help="crossfit: a fold of the training abstracts, read by a role "
                             "model trained without it (a second dev set)")
    parser.add_argument("--limit", type=int, default=0, help="abstracts per domain (0: all)")
    parser.add_argument("--no-anchor", action="store_true", help="skip the anchor run")
    parser.add_argument("--write", action="store_true",
                        help="keep the shipped gate's held-out counts as the estimate")
    args = parser.parse_args()
    if args.split == "crossfit":
        rows, model = crossfit()
        roles.load = lambda *a, **k: model
    else:
        rows, model = roles.load_abstracts(args.split), roles.load()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; split "
          f"{args.split}; role model {model.version if model else None} (threshold "
          f"{model.threshold if model else 0:.2f})")
    shipped_load = roles.load
    results: dict[str, dict[str, dict]] = {}
    for domain in ("cs", "bio"):
        part = [r for r in rows if r["domain"] == domain]
        part = part[:args.limit] if args.limit else part
        columns = {}
        for name in ("shipped", *(() if args.no_anchor else ("anchor: no role model",))):
            roles.load = shipped_load if name == "shipped" else (lambda *a: None)
            started = time.perf_counter()
            columns[name] = measure(part)
            print(f"  {domain} {name}: {len(part)} abstracts in "
                  f"{time.perf_counter() - started:.0f} s")
        roles.load = shipped_load
        results[domain] = columns
        _print(domain, columns)
    if args.write:
        if args.split != "heldout" or args.limit:
            parser.error("--write keeps the full held-out measurement only")
        digest = hashlib.sha256(json.dumps([r["id"] for r in rows]).encode()).hexdigest()
        path = write_estimate({d: {k: v for k, v in c["shipped"].items()
                                   if k not in DIAGNOSTICS} for d, c in results.items()},
                              args.split,
                              digest)
        print(f"\nwrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
