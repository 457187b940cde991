"""The leak rate as an estimate: what share of labelled result sentences reach a view or a
record, end to end, on the untouched half of the role-labelled abstracts, with a 95 %
interval. A checker's count of its own findings in the final tables says nothing about what
it misses, so cards and reports quote this instead, never "0 leaks".

`benchmarks/bench_view_leaks.py --write` measures it and writes the counts with the
identity of the gate that produced them (`data/view_leak_estimate.json`); the rates and
intervals are computed here from those counts, and an estimate measured with another gate
(rules, judge, role model) is reported as stale, not quoted."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ESTIMATE = Path(__file__).parent / "data" / "view_leak_estimate.json"
Z95 = 1.959964


def wilson(hits: int, total: int, z: float = Z95) -> tuple[float, float, float]:
    """The share ``hits / total`` and its Wilson score interval (95 % by default): sound
    for the small shares and the zero counts a leak rate has, unlike the normal one."""
    if total <= 0:
        return 0.0, 0.0, 1.0
    p = hits / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return p, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def gate_identity() -> str:
    """What of the gate decides which sentences an estimate counted as leaking."""
    from vault_pipeline.integrity import GATE_VERSION, classifier, roles
    from vault_pipeline.integrity.leaks import RULESET_VERSION

    judge, role_model = classifier.load(), roles.load()
    return (f"{RULESET_VERSION}|{GATE_VERSION}|{judge.version if judge else 'no-judge'}"
            f"|{role_model.version if role_model else 'no-roles'}")


def _shares(counts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"abstracts": counts.get("abstracts", 0)}
    for name in ("result", "conclusion", "clean_kept"):
        if name in counts:
            hits, total = counts[name]
            rate, low, high = wilson(hits, total)
            out[name] = {"hits": hits, "total": total, "rate": rate, "ci95": [low, high]}
    sentences = counts.get("view_sentences", 0)
    if sentences:
        hits = counts.get("view_result", 0)
        rate, low, high = wilson(hits, sentences)
        out["result_per_1000_view_sentences"] = {
            "hits": hits, "total": sentences, "rate": 1000 * rate,
            "ci95": [1000 * low, 1000 * high]}
    return out


def view_leak_estimate(path: Path = ESTIMATE) -> dict[str, Any] | None:
    """The measured estimate by domain with rates and 95 % intervals, whether it was measured
    with the gate in use now (`current`), and on what; None when none was measured."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return {"split": data.get("split"), "measured_with": data.get("gate"),
            "current": data.get("gate") == gate_identity(),
            "data_sha256": data.get("data_sha256"),
            "domains": {d: _shares(c) for d, c in sorted(data.get("domains", {}).items())}}


def write_estimate(domains: dict[str, dict[str, Any]], split: str, data_sha256: str,
                   path: Path = ESTIMATE) -> Path:
    """Keep the counts of one measurement with the identity of the gate measured."""
    payload = {"split": split, "gate": gate_identity(), "data_sha256": data_sha256,
               "domains": domains}
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path
