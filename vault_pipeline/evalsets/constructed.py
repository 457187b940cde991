"""Constructed OpenReview venues in the documented API v2 note format (`content.<field>.value`,
`invitations`, `domain`, `cdate`/`tmdate` in ms, replies under `details.replies`): the bundled
sample's OpenReview pages, the tests' bad inputs and the benchmark's 12,000-submission venue
come from here. Titles, abstracts, names and ratings are invented and say so; no record is
real. Deterministic by seed.

Hand-written because no library produces OpenReview-shaped data: the shapes follow the notes
the vault's live client receives (see `vault_pipeline/sources/openreview.py`)."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ICLR_RATINGS = (1, 3, 5, 6, 8, 10)
RATING_WORDS = {1: "strong reject", 3: "reject, not good enough",
                5: "marginally below the acceptance threshold",
                6: "marginally above the acceptance threshold", 8: "accept, good paper",
                10: "strong accept, should be highlighted at the conference"}
_BASE_MS = 1_727_300_000_000  # late September 2024, when ICLR 2025 submissions closed


@dataclass(frozen=True)
class Topic:
    area: str
    problem: str
    gap: str
    method: str
    component: str
    datasets: tuple[str, str]
    baseline: str
    metric: str
    keywords: tuple[str, ...]


TOPICS = (
    Topic("learning on graphs and other geometries & topologies",
          "message passing on large heterophilous graphs", "over-smoothing erases the "
          "signal of distant neighbours", "spectral rewiring", "a learned edge sampler",
          ("ogbn-arxiv", "Chameleon"), "GCN", "node classification accuracy",
          ("graph neural networks", "heterophily", "rewiring")),
    Topic("generative models", "sampling from diffusion models in few steps",
          "distillation loses sample diversity", "consistency flow matching",
          "a trajectory-straightening loss", ("CIFAR-10", "ImageNet-64"), "DDIM", "FID",
          ("diffusion models", "flow matching", "distillation")),
    Topic("reinforcement learning", "exploration in sparse-reward control",
          "count-based bonuses do not scale to pixels", "latent novelty search",
          "a contrastive state encoder", ("Montezuma's Revenge", "DeepMind Control"), "RND",
          "episodic return", ("exploration", "intrinsic motivation", "model-based RL")),
    Topic("foundation or frontier models, including LLMs",
          "long-context retrieval in language models", "attention cost grows "
          "quadratically with the context", "sparse memory routing", "a key-value cache "
          "selector", ("LongBench", "RULER"), "sliding-window attention", "exact match",
          ("large language models", "long context", "efficient attention")),
    Topic("alignment, fairness, safety, privacy, and societal considerations",
          "reward hacking in preference optimisation", "reward models are exploited "
          "outside their training distribution", "uncertainty-aware reward ensembles",
          "a pessimistic policy update", ("Anthropic HH", "UltraFeedback"), "DPO",
          "win rate", ("RLHF", "reward modelling", "alignment")),
    Topic("optimization", "training stability of large-batch optimisers", "learning-rate "
          "warm-up is tuned by hand for every model", "curvature-aware step scheduling",
          "a per-layer trust ratio", ("ImageNet", "C4"), "AdamW", "validation loss",
          ("optimisation", "large batch", "learning rate schedules")),
    Topic("applications to computer vision, audio, language, and other modalities",
          "open-vocabulary segmentation of rare objects", "vision-language features are "
          "coarse at object boundaries", "region-text co-attention", "a mask refinement "
          "decoder", ("ADE20K", "LVIS"), "CLIPSeg", "mean IoU",
          ("segmentation", "vision-language", "open vocabulary")),
    Topic("interpretability and explainable AI", "faithful attribution for transformer "
          "predictions", "gradient saliency is noisy and unfaithful", "circuit-level "
          "attribution", "a sparse feature dictionary", ("IOI", "SST-2"),
          "integrated gradients", "deletion AUC",
          ("interpretability", "attribution", "sparse autoencoders")),
)
_ADJECTIVES = ("Scalable", "Robust", "Efficient", "Adaptive", "Principled", "Simple",
               "Provable", "Data-Efficient", "Calibrated", "Hierarchical")
_FIRST = ("Ada", "Bo", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jun",
          "Kemal", "Lena", "Mira", "Nils", "Oona", "Pavel", "Quinn", "Rosa", "Sami", "Tariq")
_LAST = ("Example", "Sample", "Placeholder", "Invented", "Madeup", "Fictive", "Testwell",
         "Dummy", "Synthia", "Constructa")


def _value(x: Any) -> dict[str, Any]:
    return {"value": x}


def review_reply(venue: str, number: int, note_id: str, rating: Any, confidence: Any,
                 when_ms: int) -> dict[str, Any]:
    """An Official_Review reply; ``rating`` as the venue stores it (number, "8: accept,
    good paper", anything else) or None to leave the field out."""
    content = {"summary": _value("Constructed review summary."),
               "strengths": _value("Constructed strengths."),
               "weaknesses": _value("Constructed weaknesses."),
               "soundness": _value(3), "presentation": _value(3), "contribution": _value(2)}
    if rating is not None:
        content["rating"] = _value(rating)
    if confidence is not None:
        content["confidence"] = _value(confidence)
    return {"id": note_id, "forum": None, "replyto": None, "cdate": when_ms,
            "tmdate": when_ms, "mdate": when_ms,
            "invitations": [f"{venue}/Submission{number}/-/Official_Review",
                            f"{venue}/-/Edit"],
            "signatures": [f"{venue}/Submission{number}/Reviewer_{note_id[-4:]}"],
            "readers": ["everyone"], "content": content}


def decision_reply(venue: str, number: int, note_id: str, decision: str,
                   when_ms: int) -> dict[str, Any]:
    return {"id": note_id, "forum": None, "replyto": None, "cdate": when_ms,
            "tmdate": when_ms, "mdate": when_ms,
            "invitations": [f"{venue}/Submission{number}/-/Decision", f"{venue}/-/Edit"],
            "signatures": [f"{venue}/Program_Chairs"], "readers": ["everyone"],
            "content": {"decision": _value(decision),
                        "comment": _value("Constructed decision comment.")}}


def venue_fields(venue: str, label: str | None) -> tuple[str, str]:
    """(venue string, venueid) a submission carries once its decision is out."""
    short = venue.split("/")[0].split(".")[0] + " " + venue.split("/")[1]
    if label is None:  # under review: API v2 keeps active submissions in `<venue>/Submission`
        return f"Submitted to {short}", f"{venue}/Submission"
    if label == "Reject":
        return f"Submitted to {short}", f"{venue}/Rejected_Submission"
    if label == "Withdrawn":
        return f"{short} Conference Withdrawn Submission", f"{venue}/Withdrawn_Submission"
    if label == "Desk rejected":
        return (f"{short} Conference Desk Rejected Submission",
                f"{venue}/Desk_Rejected_Submission")
    return f"{short} {label}", venue


def submission_note(venue: str, forum_id: str, number: int, *, title: str, abstract: str,
                    authors: list[str], keywords: list[str], primary_area: str | None,
                    tldr: str | None, label: str | None, replies: list[dict[str, Any]],
                    when_ms: int) -> dict[str, Any]:
    venue_string, venueid = venue_fields(venue, label)
    content = {"title": _value(title), "authors": _value(authors),
               "authorids": _value([f"~{a.replace(' ', '_')}1" for a in authors]),
               "keywords": _value(keywords), "abstract": _value(abstract),
               "venue": _value(venue_string), "venueid": _value(venueid),
               "pdf": _value(f"/pdf/{forum_id}.pdf")}
    if primary_area:
        content["primary_area"] = _value(primary_area)
    if tldr:
        content["TLDR"] = _value(tldr)
    for reply in replies:
        reply["forum"] = reply["replyto"] = forum_id
    return {"id": forum_id, "forum": forum_id, "number": number, "cdate": when_ms,
            "tcdate": when_ms, "mdate": when_ms + 9_000_000_000,
            "tmdate": when_ms + 9_000_000_000, "domain": venue,
            "invitations": [f"{venue}/-/Submission", f"{venue}/-/Post_Submission"],
            "readers": ["everyone"], "signatures": [f"{venue}/Submission{number}/Authors"],
            "content": content, "details": {"replies": replies}}


def idea_text(topic: Topic, rng: random.Random) -> tuple[str, str, str]:
    """(title, abstract, TL;DR) of an invented submission on ``topic``; the abstract states
    one measured result, as real abstracts do, for the leak checker to withhold."""
    name = f"{topic.method.title().replace(' ', '').replace('-', '')}{rng.randint(10, 9999)}"
    title = f"{name}: {rng.choice(_ADJECTIVES)} {topic.method} for {topic.problem}"
    gain = rng.choice(("2.1", "3.4", "4.8", "5.5", "7.2"))
    abstract = (
        f"This constructed abstract is about {topic.problem}. "
        f"Existing approaches struggle because {topic.gap}. "
        f"We propose {name}, a {topic.method} method built around {topic.component}. "
        f"The key idea is that {topic.component} lets the model focus on what prior work "
        f"ignores. "
        f"We evaluate {name} on {topic.datasets[0]} and {topic.datasets[1]} against "
        f"{topic.baseline}, measuring {topic.metric}. "
        f"{name} improves {topic.metric} by {gain}% over {topic.baseline} on "
        f"{topic.datasets[0]}.")
    tldr = f"Constructed TL;DR: {topic.method} with {topic.component} for {topic.problem}."
    return title, abstract, tldr


def _decide(means: list[float], shares: dict[str, float], rng: random.Random) -> list[str]:
    """Labels by rank of the mean rating (with a little noise, as real decisions have)."""
    noisy = sorted(range(len(means)), key=lambda i: -(means[i] + rng.gauss(0, 0.6)))
    labels = ["Reject"] * len(means)
    start = 0
    for label in ("Oral", "Spotlight", "Poster"):
        count = round(shares[label] * len(means))
        for i in noisy[start:start + count]:
            labels[i] = label
        start += count
    return labels


def constructed_venue(venue: str, submissions: int, seed: int = 0, *,
                      rating_style: str = "number", decided: bool = True,
                      withdrawn_share: float = 0.2, desk_rejected_share: float = 0.01,
                      unanimous_share: float = 0.04, shares: dict[str, float] | None = None,
                      first_number: int = 1) -> list[dict[str, Any]]:
    """Submission notes (with reviews and decisions) of an invented venue. ``rating_style``:
    `number` (ICLR 2025) or `string` ("8: accept, good paper", ICLR 2024);
    ``unanimous_share``: submissions whose reviewers all give the same rating."""
    rng = random.Random(f"{venue}:{seed}")
    shares = shares or {"Oral": 0.018, "Spotlight": 0.05, "Poster": 0.25}
    quality = [rng.gauss(0, 1) for _ in range(submissions)]
    topics = [TOPICS[rng.randrange(len(TOPICS))] for _ in range(submissions)]
    ratings: list[list[int]] = []
    for q in quality:
        k = rng.choice((3, 4, 4, 4, 5, 6))
        ratings.append([min(ICLR_RATINGS, key=lambda r, q=q: abs(r - (5.0 + 1.3 * q
                                                                      + rng.gauss(0, 1.6))))
                        for _ in range(k)])
    for i in range(submissions):
        if rng.random() < unanimous_share:
            ratings[i] = [ratings[i][0]] * len(ratings[i])
    means = [sum(r) / len(r) for r in ratings]
    labels: list[str | None] = list(_decide(means, shares, rng)) if decided else \
        [None] * submissions
    for i in range(submissions):
        draw = rng.random()
        if draw < desk_rejected_share:
            labels[i], ratings[i] = "Desk rejected", []
        elif draw < desk_rejected_share + withdrawn_share * (1.5 if quality[i] < 0 else 0.5):
            labels[i] = "Withdrawn"
    notes = []
    for i in range(submissions):
        number = first_number + i
        forum_id = "c" + hashlib.sha256(f"{venue}:{seed}:{i}".encode()).hexdigest()[:11]
        title, abstract, tldr = idea_text(topics[i], rng)
        when = _BASE_MS + i * 60_000
        replies = []
        for j, rating in enumerate(ratings[i]):
            value: Any = rating if rating_style == "number" else f"{rating}: " \
                                                               f"{RATING_WORDS[rating]}"
            replies.append(review_reply(venue, number, f"r{forum_id[1:10]}{j:02d}", value,
                                        rng.choice((2, 3, 4, 5)), when + 3_700_000_000))
        if labels[i] in ("Oral", "Spotlight", "Poster", "Reject"):
            decision = "Reject" if labels[i] == "Reject" else f"Accept ({labels[i]})"
            replies.append(decision_reply(venue, number, f"d{forum_id[1:10]}", decision,
                                          when + 9_000_000_000))
        authors = [f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(rng.randint(1, 4))]
        notes.append(submission_note(
            venue, forum_id, number, title=title, abstract=abstract, authors=authors,
            keywords=list(topics[i].keywords), primary_area=topics[i].area, tldr=tldr,
            label=labels[i], replies=replies, when_ms=when))
    return notes


def write_pages(notes: list[dict[str, Any]], folder: Path, stem: str,
                page_size: int = 1000) -> list[Path]:
    """Notes as API v2 pages (``{"notes": [...], "count": n}``), as the live client stores
    them."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for start in range(0, max(len(notes), 1), page_size):
        page = notes[start:start + page_size]
        path = folder / f"{stem}-{start // page_size:04d}.json"
        path.write_text(json.dumps({"notes": page, "count": len(notes)}, ensure_ascii=False))
        files.append(path)
    return files


# Three sample submissions carry the titles and first authors of arXiv papers of the bundled
# sample (CC0 metadata), so the `reviews` stage links them to those papers and the full-text
# input representation has converted documents to show.
_LINKED = (("Testing Deep Learning Models: A First Comparative Study of Multiple Testing "
            "Techniques", "Mohit Kumar Ahuja", "Poster"),
           ("Automated Test Generation for REST APIs: No Time to Rest Yet", "Myeongsoo Kim",
            "Reject"),
           ("Towards Explainable Test Case Prioritisation with Learning-to-Rank Models",
            "Aurora Ramírez", "Spotlight"))
SAMPLE_VENUE, SAMPLE_ANCHOR_VENUE = "ICLR.cc/2025/Conference", "ICLR.cc/2024/Conference"


def sample_pages() -> dict[str, Any]:
    """The bundled sample's constructed OpenReview pages and Semantic Scholar batch, by file
    name: an ICLR 2025-like venue (numeric ratings, every decision kind, one review whose
    rating is words only, a desk rejection without reviews, three submissions linked to
    sample arXiv papers) and an ICLR 2024-like one ("8: accept, good paper" ratings)."""
    shares = {"Oral": 0.08, "Spotlight": 0.1, "Poster": 0.3}
    iclr25 = constructed_venue(SAMPLE_VENUE, 48, seed=2025, shares=shares)
    rng = random.Random(7)
    for i, (title, author, label) in enumerate(_LINKED):
        number = 900 + i
        forum = f"linked{i:04d}"
        replies = [review_reply(SAMPLE_VENUE, number, f"rlink{i}{j}", rating, 3,
                                _BASE_MS + 3_700_000_000 + j)
                   for j, rating in enumerate(rng.choice(((6, 8, 6), (3, 5, 5), (8, 8, 6))))]
        decision = "Reject" if label == "Reject" else f"Accept ({label})"
        replies.append(decision_reply(SAMPLE_VENUE, number, f"dlink{i}", decision,
                                      _BASE_MS + 9_000_000_000))
        topic = TOPICS[i]
        iclr25.append(submission_note(
            SAMPLE_VENUE, forum, number, title=title,
            abstract=f"Constructed submission record for the sample arXiv paper of this "
                     f"title. {idea_text(topic, rng)[1]}",
            authors=[author, "Ada Example"], keywords=list(topic.keywords),
            primary_area=topic.area, tldr=None, label=label, replies=replies,
            when_ms=_BASE_MS + number))
    worded = next(n for n in iclr25 if n["details"]["replies"])
    worded["details"]["replies"][0]["content"]["rating"] = {"value": "very promising!"}
    iclr24 = constructed_venue(SAMPLE_ANCHOR_VENUE, 40, seed=2024, rating_style="string",
                               unanimous_share=0.3)
    cited = [n for n in iclr25 if n["content"]["venueid"]["value"] == SAMPLE_VENUE][:6]
    s2 = [{"paperId": hashlib.sha1(n["id"].encode()).hexdigest(),
           "externalIds": {"CorpusId": 100 + i},
           "title": n["content"]["title"]["value"], "year": 2025,
           "citationCount": 3 + 7 * i, "influentialCitationCount": i,
           "referenceCount": 40} for i, n in enumerate(cited)]
    return {"openreview-iclr2025-constructed.json": {"notes": iclr25, "count": len(iclr25)},
            "openreview-iclr2024-constructed.json": {"notes": iclr24, "count": len(iclr24)},
            "s2-batch-constructed.json": s2}


if __name__ == "__main__":  # python -m vault_pipeline.evalsets.constructed OUT_DIR
    import sys

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, payload in sample_pages().items():
        (out / name).write_text(json.dumps(payload, ensure_ascii=False) + "\n",
                                encoding="utf-8")
        print(out / name)
