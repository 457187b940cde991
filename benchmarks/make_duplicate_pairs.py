"""Write `data/duplicate_pairs.jsonl`: labelled duplicate and non-duplicate pairs of real
records, under the guide in docs/duplicates.md. One command, deterministic:

    python benchmarks/make_duplicate_pairs.py

Records are real: the 100 papers of the bundled arXiv snapshot sample and the 684 CSAbstruct
abstracts of `data/` (no titles). Duplicates are of three origins, each named in `kind`:
CSAbstruct's own second copies of a paper (`posted_twice_real`: the same abstract in two
splits, found by the scan below and read); and versions of a real record made by the
guide's edit rules (`reposted`, `workshop_version`, `retitled`, `openreview_version`,
`journal_version`), so every form of the issue is present. Non-duplicates are real pairs of
different papers on the same topic (`same_topic`: the nearest abstract by word overlap in the
same arXiv category or in CSAbstruct; `same_title_words`: the most similar titles), read and
confirmed different works. `half` splits by source record (`random.Random(25)`), so every
form of one record lies in one half: `dev` may shape thresholds, `heldout` only reports."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SAMPLE = ROOT.parent / "vault_pipeline" / "sample" / "raw" / \
    "arxiv-metadata-oai-snapshot.sample.jsonl"
CSABSTRUCT = (ROOT / "data" / "paper_kinds_cs.jsonl", ROOT / "data" / "csabstruct_test.jsonl")
OUT = ROOT / "data" / "duplicate_pairs.jsonl"
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_STOP_WORDS = ("a an the of in on for and or to with by from at as is are we this that our "
               "be which these it its can")
STOP = frozenset(_STOP_WORDS.split())


def _clean(text: str) -> str:
    return " ".join(text.split())


def _authors(text: str) -> list[str]:
    return [a.strip() for a in re.split(r",| and ", text) if a.strip()]


def snapshot() -> list[dict]:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    return [{"id": r["id"], "title": _clean(r["title"]), "abstract": _clean(r["abstract"]),
             "authors": _authors(r["authors"]), "doi": r.get("doi"),
             "category": r["categories"].split()[0], "date": r["versions"][0]["created"]}
            for r in rows]


def csabstruct() -> list[dict]:
    out = []
    for path in CSABSTRUCT:
        for n, line in enumerate(path.read_text().splitlines()):
            r = json.loads(line)
            text = r.get("abstract") or " ".join(r["sentences"])
            out.append({"id": r.get("id") or f"csabstruct-test-{n:03d}", "title": None,
                        "abstract": _clean(text), "authors": None, "doi": None,
                        "category": "csabstruct", "date": None})
    return out


def words(text: str | None) -> set[str]:
    return {w for w in _WORD.findall((text or "").lower()) if w not in STOP}


def shingles(text: str, n: int = 3) -> set[str]:
    w = _WORD.findall(text.lower())
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s]


# The guide's edit rules: each makes the kind of version the real services hold.
def reposted(r: dict) -> dict:
    """The same text posted again under a new id: markup, case and spacing differ."""
    abstract = re.sub(r"\$([^$]*)\$", r"\1", r["abstract"]).replace("  ", " ")
    return {**r, "id": f"{r['id']}-repost", "title": r["title"].upper(),
            "abstract": abstract.replace(" -- ", " - ")}


def workshop_version(r: dict) -> dict:
    """A workshop version: the first half of the abstract's sentences (at least two)."""
    parts = sentences(r["abstract"])
    keep = max(2, (len(parts) + 1) // 2)
    return {**r, "id": f"{r['id']}-workshop", "abstract": " ".join(parts[:keep])}


def retitled(r: dict) -> dict:
    """A retitled resubmission: the title's halves swapped around its first preposition
    or colon (else prefixed "On"), one sentence dropped and the last two swapped."""
    title = r["title"]
    m = re.search(r":\s+| (?:of|for|in|on|with|and) ", title)
    title = (f"{title[m.end():].rstrip('.')}: {title[:m.start()]}" if m and m.start() > 0
             else f"On {title[0].lower()}{title[1:]}")
    parts = sentences(r["abstract"])
    if len(parts) >= 4:
        parts = parts[:1] + parts[2:]
        parts[-2], parts[-1] = parts[-1], parts[-2]
    return {**r, "id": f"{r['id']}-retitled", "title": title, "abstract": " ".join(parts)}


def openreview_version(r: dict) -> dict:
    """Its OpenReview submission: anonymous, the last sentence replaced by a plan, the
    title in title case."""
    parts = sentences(r["abstract"])
    body = parts[:-1] if len(parts) > 2 else parts
    return {**r, "id": f"openreview:{r['id']}", "authors": None, "date": None,
            "title": r["title"].title(),
            "abstract": " ".join([*body, "We release our code and data upon acceptance."])}


def journal_version(r: dict) -> dict:
    """The journal version: a DOI, a sentence of context first, a concluding one added."""
    return {**r, "id": f"{r['id']}-journal", "doi": r.get("doi") or f"10.0000/{r['id']}",
            "abstract": "This paper extends our earlier conference report. " + r["abstract"]
            + " Further details are given in the appendix."}


EDITS = (reposted, workshop_version, retitled, openreview_version, journal_version)


def _pair(kind: str, label: bool, a: dict, b: dict, why: str, group: str) -> dict:
    keep = ("id", "title", "abstract", "authors", "doi", "date")
    return {"kind": kind, "duplicate": label, "group": group, "why": why,
            "a": {k: a.get(k) for k in keep}, "b": {k: b.get(k) for k in keep}}


def build() -> list[dict]:
    papers, cs = snapshot(), csabstruct()
    rng = random.Random(25)
    pairs = []
    # real second copies inside CSAbstruct (identical abstracts in two rows)
    sh = [shingles(r["abstract"]) for r in cs]
    real = [(i, j) for i, j in itertools.combinations(range(len(cs)), 2)
            if jaccard(sh[i], sh[j]) > 0.9]
    for i, j in real:
        pairs.append(_pair("posted_twice_real", True, cs[i], cs[j],
                           "the same abstract in two CSAbstruct rows (one paper, two copies)",
                           cs[i]["id"]))
    # versions of real sample papers, by the guide's rules (each paper gets two forms)
    usable = [p for p in papers if len(sentences(p["abstract"])) >= 3]
    for n, paper in enumerate(usable[:60]):
        for edit in (EDITS[n % len(EDITS)], EDITS[(n + 2) % len(EDITS)]):
            pairs.append(_pair(edit.__name__, True, paper, edit(paper),
                               (edit.__doc__ or "").split("\n")[0].strip(), paper["id"]))
    # same-topic non-duplicates: each paper's nearest different paper by abstract words
    for pool in ([p for p in papers], cs):
        ws = [words(p["abstract"]) for p in pool]
        picked = set()
        order = list(range(len(pool)))
        rng.shuffle(order)
        for i in order[:60]:
            same = [j for j in range(len(pool)) if j != i and
                    pool[j]["category"] == pool[i]["category"] and
                    jaccard(sh_any(pool, j), sh_any(pool, i)) < 0.5]
            if not same:
                continue
            j = max(same, key=lambda j: (jaccard(ws[i], ws[j]), -j))
            key = (min(i, j), max(i, j))
            if key in picked or jaccard(ws[i], ws[j]) < 0.08:
                continue
            picked.add(key)
            pairs.append(_pair("same_topic", False, pool[i], pool[j],
                               "nearest other abstract by shared words, same field; "
                               "a different work", pool[i]["id"]))
    tw = [words(p["title"]) for p in papers]
    near_titles = sorted(((jaccard(tw[i], tw[j]), i, j) for i, j in
                          itertools.combinations(range(len(papers)), 2)), reverse=True)[:15]
    seen = {(p["a"]["id"], p["b"]["id"]) for p in pairs}
    for _, i, j in near_titles:
        if (papers[i]["id"], papers[j]["id"]) in seen or (papers[j]["id"], papers[i]["id"]) in seen:
            continue
        pairs.append(_pair("same_title_words", False, papers[i], papers[j],
                           "among the most similar titles of the sample; different works",
                           papers[i]["id"]))
    groups = sorted({p["group"] for p in pairs})
    rng.shuffle(groups)
    heldout = set(groups[: len(groups) // 2])
    for n, p in enumerate(pairs):
        p["id"] = f"pair-{n:03d}"
        p["half"] = "heldout" if p["group"] in heldout else "dev"
    return pairs


def sh_any(pool: list[dict], i: int) -> set[str]:
    return shingles(pool[i]["abstract"])


def main() -> None:
    pairs = build()
    OUT.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs))
    kinds: dict[str, int] = {}
    for p in pairs:
        kinds[f"{p['half']}/{p['kind']}"] = kinds.get(f"{p['half']}/{p['kind']}", 0) + 1
    print(f"{len(pairs)} pairs -> {OUT}")
    for k in sorted(kinds):
        print(f"  {k}: {kinds[k]}")


if __name__ == "__main__":
    main()
