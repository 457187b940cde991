"""Ideas stage figures, one command: `python benchmarks/bench_ideas.py`.

- extractive backend throughput (papers/s), on the bundled sample's abstracts and on
  full-length papers (about 30,000 characters, built from the sample's sentences), with 1
  and 2 worker processes side by side;
- request building (prompt rendering + input hash) and answer parsing (JSON + schema +
  leak check) per paper for the LLM backends, next to a generation time for scale;
- tokens per prompt on the sample (o200k_base tokenizer, bpe-openai), schema included;
- leak checker precision and recall on the labelled sentences (dev and held-out halves).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_pipeline.ideas.backends.extractive import ExtractiveBackend  # noqa: E402
from vault_pipeline.ideas.extractive import decompose  # noqa: E402
from vault_pipeline.ideas.requests import build_requests  # noqa: E402
from vault_pipeline.ideas.validate import judge  # noqa: E402
from vault_pipeline.integrity.gate import Gate  # noqa: E402
from vault_pipeline.integrity.leaks import find_leaks  # noqa: E402
from vault_pipeline.llm.backends.base import Answer  # noqa: E402
from vault_pipeline.llm.inputs import PaperInput  # noqa: E402
from vault_pipeline.llm.prompting import load_prompt  # noqa: E402
from vault_pipeline.llm.settings import IdeasSettings  # noqa: E402
from vault_pipeline.records.masked import record_json_schema  # noqa: E402

SAMPLE = ROOT / "vault_pipeline" / "sample" / "raw" / "arxiv-metadata-oai-snapshot.sample.jsonl"
LABELLED = ROOT / "tests" / "data" / "ideas" / "leak_sentences.jsonl"
ANSWER = ROOT / "tests" / "data" / "ideas" / "answers" / "valid.json"
SECTIONS = ["Introduction", "Related Work", "Problem Setting", "Method", "Experiments",
            "Discussion", "Limitations"]


def sample_papers() -> list[PaperInput]:
    out = []
    for line in SAMPLE.read_text().splitlines():
        d = json.loads(line)
        out.append(PaperInput(d["id"], " ".join(d["title"].split()),
                              " ".join(d["abstract"].split()), None, None, "abstract_only",
                              "benchmark", tuple(d["categories"].split())))
    return out


def full_papers(papers: list[PaperInput], n: int = 20, chars: int = 30_000) -> list[PaperInput]:
    """Full-length Markdown papers: the sample's sentences under the usual section headings,
    results included (the decomposer has to leave them out)."""
    pool = [p.abstract for p in papers]
    out = []
    for i in range(n):
        parts, k = [], i
        while sum(len(x) for x in parts) < chars:
            parts.append(f"## {len(parts) % 7 + 1} {SECTIONS[len(parts) % 7]}\n\n"
                         + "\n\n".join(pool[(k + j) % len(pool)] for j in range(4)))
            k += 4
        paper = papers[i]
        out.append(PaperInput(paper.arxiv_id, paper.title, paper.abstract,
                              "\n\n".join(parts)[:chars], None, "pdf", None, paper.categories))
    return out


def _decompose_all(papers: list[PaperInput]) -> int:
    for paper in papers:
        decompose(paper)
    return len(papers)


def throughput(papers: list[PaperInput], workers: int) -> float:
    start = time.perf_counter()
    if workers == 1:
        _decompose_all(papers)
    else:
        chunks = [papers[i::workers] for i in range(workers)]
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_decompose_all, chunks))
    return len(papers) / (time.perf_counter() - start)


def overhead(papers: list[PaperInput]) -> tuple[float, float]:
    """Per paper, in ms: building an LLM request, and judging a recorded answer."""
    settings = IdeasSettings(backend="openai", model="bench")
    backend = ExtractiveBackend()
    backend.uses_prompt = True  # build the prompt as an LLM backend would
    prompt = load_prompt()
    start = time.perf_counter()
    build_requests(papers, backend, prompt, settings)
    build_ms = (time.perf_counter() - start) * 1000 / len(papers)
    text = ANSWER.read_text()
    start = time.perf_counter()
    for _ in range(len(papers)):
        assert judge(Answer("x", text, "stop"), Gate()).ok
    parse_ms = (time.perf_counter() - start) * 1000 / len(papers)
    return build_ms, parse_ms


def tokens(papers: list[PaperInput]) -> dict[str, float]:
    import bpe_openai

    encoding = bpe_openai.get_encoding("o200k_base")
    prompt = load_prompt()
    counts = []
    for paper in papers:
        messages = prompt.messages(paper.arxiv_id, paper.markdown(30_000))
        counts.append(sum(len(encoding.encode(m["content"])) for m in messages))
    schema = len(encoding.encode(json.dumps(record_json_schema())))
    answer = len(encoding.encode(ANSWER.read_text()))
    return {"mean": statistics.mean(counts), "max": max(counts), "schema": schema,
            "answer": answer, "system": len(encoding.encode(prompt.system))}


def leak_scores() -> dict[str, tuple[float, float, int]]:
    rows = [json.loads(x) for x in LABELLED.read_text().splitlines()]
    out = {}
    for split in ("dev", "heldout"):
        part = [r for r in rows if r["split"] == split]
        tp = sum(1 for r in part if r["label"] == "result" and find_leaks(r["text"]))
        fp = sum(1 for r in part if r["label"] == "clean" and find_leaks(r["text"]))
        fn = sum(1 for r in part if r["label"] == "result" and not find_leaks(r["text"]))
        out[split] = (tp / (tp + fp), tp / (tp + fn), len(part))
    start = time.perf_counter()
    for _ in range(5):
        for r in rows:
            find_leaks(r["text"])
    out["rate"] = (5 * len(rows) / (time.perf_counter() - start), 0.0, len(rows))
    return out


def main() -> None:
    papers = sample_papers()
    full = full_papers(papers)
    _decompose_all(papers[:5])  # warm up regex caches
    print("ideas stage benchmark")
    print(f"extractive, {len(papers)} sample abstracts: "
          f"{throughput(papers, 1):.1f} papers/s (1 process), "
          f"{throughput(papers, 2):.1f} papers/s (2 processes)")
    print(f"extractive, {len(full)} full papers of 30,000 chars: "
          f"{throughput(full, 1):.2f} papers/s (1 process), "
          f"{throughput(full, 2):.2f} papers/s (2 processes)")
    build_ms, parse_ms = overhead(full)
    print(f"LLM request build: {build_ms:.2f} ms/paper; answer parse+validate+leak check: "
          f"{parse_ms:.2f} ms/paper (a 2,000-token answer at 50 tokens/s takes 40,000 ms)")
    t = tokens(papers)
    t_full = tokens(full)
    print(f"prompt tokens (o200k_base), sample abstracts: mean {t['mean']:.0f}, max "
          f"{t['max']}; full papers: mean {t_full['mean']:.0f}, max {t_full['max']}; "
          f"system prompt {t['system']}; JSON schema (response_format) {t['schema']}; "
          f"a complete recorded answer {t['answer']}")
    scores = leak_scores()
    for split in ("dev", "heldout"):
        p, r, n = scores[split]
        print(f"leak checker on {split} ({n} labelled sentences): precision {p:.3f}, "
              f"recall {r:.3f}")
    print(f"leak checker speed: {scores['rate'][0]:,.0f} sentences/s")


if __name__ == "__main__":
    main()
