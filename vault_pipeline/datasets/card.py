"""The data card (`README.md` of an export): what the data is, how to load it, how it was
made, how to score a generation, and under which licenses. Its YAML header declares one
Hugging Face `datasets` config per role (the first present one the default), with
`dataset_info` (features, split sizes), so `load_dataset(OUT_DIR)` and
`load_dataset(OUT_DIR, "innovator")` find the files without arguments."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

import vault_pipeline.markdown_text as md
from vault_pipeline.audit.report import card_lines
from vault_pipeline.datasets.card_facts import CARD, CardFacts, read_facts
from vault_pipeline.datasets.manifest import INTEGRITY_FILE, MANIFEST
from vault_pipeline.datasets.rewards import FIELD_WEIGHTS, MANDATORY_REPORT, REWARD_MIX
from vault_pipeline.datasets.training import ROLES
from vault_pipeline.schemas import TRAINING_EXAMPLES
from vault_pipeline.splits.assign import TARGET_SPLITS

ARXIV_LICENSES = "https://arxiv.org/help/license"
CITATION = """@misc{research_idea_vault,
  title  = {Research Idea Vault: results-masked training datasets for research ideation},
  note   = {Exported by research-idea-vault; the role chain follows IdeaScientist},
  year   = {2026}
}"""


def _feature(kind: pa.DataType) -> dict[str, Any]:
    """The `datasets` YAML form of one Arrow type (scalars, lists, lists of structs)."""
    if pa.types.is_list(kind):
        item = kind.value_type
        if pa.types.is_struct(item):
            return {"list": [{"name": f.name, **_feature(f.type)} for f in item]}
        return {"list": _feature(item)["dtype"]}
    names = {pa.string(): "string", pa.date32(): "date32", pa.int64(): "int64",
             pa.int32(): "int32", pa.bool_(): "bool"}
    return {"dtype": names[kind]}


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def _yaml_header(facts: CardFacts) -> str:
    features = [{"name": c.name, **_feature(c.type)} for c in TRAINING_EXAMPLES.columns]
    configs, infos = [], []
    for role in ROLES:  # empty splits are left out: `datasets` loads no split of no rows
        present = facts.present(role)
        if present:
            config: dict[str, Any] = {"config_name": role, "data_files": [
                {"split": s, "path": f"{role}/{s}.parquet"} for s in present]}
            configs.append({**config, "default": True} if not configs else config)
            infos.append({"config_name": role, "features": features, "splits": [
                {"name": s, "num_bytes": facts.sizes[f"{role}/{s}.parquet"],
                 "num_examples": facts.rows[f"{role}/{s}"]} for s in present]})
    header: dict[str, Any] = {
        "license": "other", "license_name": "arxiv-per-paper-licenses",
        "license_link": ARXIV_LICENSES, "language": ["en"],
        "pretty_name": "Research Idea Vault training datasets",
        "task_categories": ["text-generation"],
        "size_categories": [_size_category(facts.examples)],
        "tags": ["research-ideation", "results-masked"]}
    if configs:
        header |= {"configs": configs, "dataset_info": infos}
    return "---\n" + yaml.dump(header, Dumper=_PlainDumper, sort_keys=False, width=100) + "---"


class _PlainDumper(yaml.SafeDumper):
    """Writes repeated values out (no `&id001` anchors: the Hub's card parser is strict)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _weights(role: str) -> str:
    weights = FIELD_WEIGHTS[role]
    return ", ".join(f"`{f}` {w}" for f, w in weights.items())


def _index_note(manifest: dict[str, Any]) -> str:
    if any(f["table"] == "vault/index" for f in manifest["files"]):
        return ("`vault/index/` is a snapshot of the LanceDB index of these views "
                "(`lancedb.connect(\"vault/index\").open_table(\"views_index\")`).")
    return "The LanceDB index is not included (`vault export --with-index` adds it)."


def _evaluation_note(manifest: dict[str, Any], facts: CardFacts) -> str:
    info = manifest.get("evaluation") or {}
    excluded = info.get("excluded_from_training") or []
    marked = facts.evaluation_marked
    if info.get("included"):
        return (f"Evaluation papers are **included** on request ({marked} papers of these "
                "files are used by an evaluation set; their rows have `evaluation_paper` "
                "true).")
    listed = ", ".join(md.text(e) for e in excluded) if excluded else "none of the targets"
    return (f"Papers an evaluation set uses are **left out** of the training files: {listed}. "
            f"The vault files keep them, marked in `evaluation_paper` ({marked} marked in "
            "`vault/papers.parquet`); the retrieval index leaves them out unless built with "
            "`exclude_evaluation` off.")


def _loading(facts: CardFacts) -> str:
    """Loading code for exactly the sets that load, and which are absent."""
    present = {role: facts.present(role) for role in ROLES}
    absent = [f"`{role}/{s}`" for role in ROLES for s in TARGET_SPLITS
              if s not in present[role]]
    note = ("" if not absent else
            f"\nAbsent (no rows, so no `datasets` split; the Parquet and JSON lines files are "
            f"there, empty, with the schema): {', '.join(absent)}.\n")
    loadable = [role for role in ROLES if present[role]]
    if not loadable:
        return ("No role has a row, so there is nothing for `datasets.load_dataset` to load "
                "(it refuses empty splits); the files are there, empty, with their schema, "
                "for Polars and others:\n\n```python\nimport polars as pl\n"
                "pl.read_parquet(\"gap_finder/train.parquet\")   # zero rows, the schema\n```\n"
                + note)
    first = loadable[0]
    lines = ["```python", "from datasets import load_dataset",
             f'ds = load_dataset("path/to/this/folder")                 # {first} (default)']
    lines += [f'ds = load_dataset("path/to/this/folder", "{role}")'
              + " " * max(1, 22 - len(role)) + f"# splits: {', '.join(present[role])}"
              for role in loadable]
    files = ", ".join(f'"{s}": "{first}/{s}.parquet"' for s in present[first])
    lines += [f'ds = load_dataset("parquet", data_files={{{files}}})', "",
              "import polars as pl",
              f'train = pl.read_parquet("{first}/{present[first][0]}.parquet")'
              f'   # or pl.read_ndjson(".../{present[first][0]}.jsonl")', "```"]
    return "\n".join(lines) + "\n" + note


def _leakage_note(manifest: dict[str, Any]) -> str:
    """The duplicates policy and the n-gram decontamination, as counted at export time."""
    d = manifest.get("decontamination")
    if not d:
        return "Not measured for this export."
    policy = d.get("policy") or {}
    kept_out = ", ".join(f"{n} {k}" for k, n in sorted(policy.items())) or "none"
    return (f"- Records of one work (the same text under another id, a retitled or shorter "
            f"version, the OpenReview submission, the journal version) form one cluster "
            f"(`duplicate_clusters`, every match in `duplicate_pairs`); one member is "
            f"retrievable or a target. Papers the policy kept out (`splits.duplicate_of`): "
            f"{kept_out}.\n"
            f"- {d['n']}-gram decontamination (threshold {d['threshold']:.0%} of a text's "
            f"{d['n']}-grams) of the {d['held_out_targets']} validation and test targets: "
            f"{d['held_out_overlapping_vault']} overlap a retrievable vault paper, "
            f"{d['training_targets_removed']} training targets overlapping one were removed "
            f"from the training examples.")


def data_card(manifest: dict[str, Any], facts: CardFacts,
              integrity: dict[str, Any] | None = None) -> str:
    """The card of an export: every count from ``facts`` (its files), the rest (cutoff,
    seed, provenance of the split and the index, evaluation choice) from its manifest."""
    counts = [(role, view, *(facts.rows.get(f"{role}/{s}", 0) for s in TARGET_SPLITS))
              for role, view in ROLES.items()]
    provenance = md.table(("backend", "model", "prompt", "targets"),
                        [(v.get("views_backend"), v.get("views_model"),
                          v.get("views_prompt_version"), v["rows"]) for v in facts.views]) \
        if facts.views else "No targets, so no target views were exported."
    vault_views = facts.rows.get("vault/views", 0)
    license_rows = md.table(("license", "targets"),
                          [(v.get("license") or "not stated (arXiv's default license)",
                            v["rows"]) for v in facts.licenses]) \
        if facts.licenses else "No targets."
    index = manifest["provenance"].get("index") or {}
    classifier = ", ".join(md.text(c["classifier"])
                           for c in manifest["provenance"]["split_classifier"])
    empty_note = ("\n**This export has no targets**: no paper of the vault is published on or "
                  "after the cutoff and passes the target criteria. The files exist, empty, "
                  "with their schema.\n" if not facts.examples else "")
    return f"""{_yaml_header(facts)}

# Research Idea Vault: training datasets

Cutoff **{md.text(manifest['cutoff'])}**, seed **{md.text(manifest['seed'])}**, exported by
research-idea-vault {md.text(manifest['project_version'])} on {md.text(manifest['created_at'])}.
{empty_note}
Each row pairs a post-cutoff target paper with one producer role, as the source study
(IdeaScientist) trains them: the role's **inputs** (`problem_setting`, `challenge`: the
target's problem and what fails) and its **reference artifact** (`artifact`, JSON),
reconstructed from the real paper: the gap finder's `gaps` (per challenge axis, at most two
contrastive gaps with near-miss vault papers, a flaw category, why it matters, an evidence
route; no solution), the innovator's `candidate` (intuition, gap, source paper, borrowed
mechanism, novelty type, plain mapping, why it could work, key assumption, nearest
difference, main risk) and the report writer's `report` (the results-masked record). What a
paper does not say is null. `artifact_citations` is the artifact's citation set (vault ids);
`messages` (system / user / assistant) and `prompt` / `completion` are the same example for
chat and completion trainers, from the role template named in `template_version`; a row whose
artifact was quarantined has them null. `reference` keeps the matching view's text. Texts are
results-masked by the integrity gate (see "Results masking" below). One partition
(train / validation / test) is shared by every role, so a paper is never a training target
for one role and a test target for another.

{md.table(("role", "reference view", *TARGET_SPLITS), counts)}

Papers per split of the whole vault (`splits.parquet`, with the reason for each paper):
{", ".join(f"{md.text(k)} {md.text(v)}" for k, v in facts.split_counts.items())}.

## Loading

{_loading(facts)}
`manifest.json` lists every file with its sha256, rows and schema. With
`vault export --format openai-jsonl`, `<role>/<split>.openai.jsonl` holds one
`{{"messages": [...]}}` line per example with an artifact, for fine-tuning services.

The retrievable vault is in `vault/`: `papers.parquet` (the pre-cutoff papers' metadata,
{facts.rows.get("vault/papers", 0)} rows) and `views.parquet` (their views, {vault_views} rows), so
retrieval-grounded training needs nothing else; a cited id is valid when it is in
`vault/papers.parquet`. {_index_note(manifest)}

## Evaluation papers

{_evaluation_note(manifest, facts)}

## Rewards

The deterministic parts of the study's reward ship with the data
(`vault_pipeline.datasets.rewards`; `vault score GENERATIONS.jsonl --export THIS_FOLDER`):

- citation-set F1: `2 |C_gen ∩ C_ref| / (|C_gen| + |C_ref|)` against `artifact_citations`;
- validity gate `g`: a legal schema; gaps: at most two per axis and at least one; innovator:
  one candidate with its gap; report: the mandatory fields
  ({", ".join(f"`{f}`" for f in MANDATORY_REPORT)}); every cited id in the vault.
- the study's mix: `r = {REWARD_MIX["rubric"]} g (r_free + r_ref + r_cit) / 3 +
  {REWARD_MIX["process"]} r_proc`; `r_free` and `r_ref` need an LLM judge. Field weights of
  the reference-grounded score `r_ref` (uniform for the gap finder, important fields 2):
  - gap_finder: {_weights("gap_finder")}
  - innovator: {_weights("innovator")}
  - report_writer: {_weights("report_writer")}

## How it was made

- Papers published before the cutoff form the retrievable vault; those on or after it are
  targets when methodological (classifier: {classifier or "none needed"}), when their five
  views exist, and when at least the configured share of their cited work is in the vault
  (where citations are known); targets are split by a seeded hash of the id.
- Views (results-masked decomposition of each paper):

{provenance}

- Retrieval index used with these targets: {md.text(index.get("embedder", "not built"))}.

## Leakage control across the cutoff

{_leakage_note(manifest)}

## Results masking

Read from `integrity.json` (the integrity report of the vault at export time):

{card_lines(integrity)}

## Licenses

- arXiv metadata (ids, titles, categories, dates) is CC0 ({ARXIV_LICENSES}).
- The view texts are derived from each paper's full text, which stays under that paper's own
  license, recorded per row in `license` (a null license means arXiv's non-exclusive
  distribution license). Respect it when redistributing or training:

{license_rows}

## Citation

```bibtex
{CITATION}
```
"""


def card_disagreements(folder: Path) -> list[str]:
    """Lines where the folder's card differs from the card its files make now (`-` the
    card's line, `+` what the files say); empty when the card states what the export
    holds."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    integrity_file = folder / INTEGRITY_FILE
    integrity = json.loads(integrity_file.read_text(encoding="utf-8")) \
        if integrity_file.is_file() else None
    expected = data_card(manifest, read_facts(folder), integrity).splitlines()
    found = (folder / CARD).read_text(encoding="utf-8").splitlines()
    return [line for line in difflib.unified_diff(found, expected, "card", "files", n=0,
                                                  lineterm="")
            if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
