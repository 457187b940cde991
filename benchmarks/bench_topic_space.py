"""The evaluation sets' topic space (`evalsets/similarity.py::topic_space`) on the demo's
OpenReview submissions, each backend in a fresh process with an empty vector cache, as the
`evaluation_sets` step of a first `vault demo` meets it: torch (sentence-transformers, the
anchor, what the stage used before) and ONNX Runtime (now, the index's backend). Wall
seconds, imports included, side by side, alternating for `--rounds` rounds, then how far
apart the two backends' similarities lie.

    python benchmarks/bench_topic_space.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BACKENDS = {"torch (before)": "torch", "onnx (now)": "onnx"}
# One backend's topic space in a process of its own, its vectors saved for the comparison.
CHILD = """
import sys, time, json
started = time.perf_counter()
import numpy as np
from vault_pipeline.evalsets.similarity import topic_space
from vault_pipeline.store.paths import VaultPaths
texts = json.load(open(sys.argv[1]))
from pathlib import Path
space = topic_space(VaultPaths(Path(sys.argv[2])), texts, "embedded", 64, sys.argv[3])
np.save(sys.argv[4], np.asarray(space.vectors))
print("SECONDS", time.perf_counter() - started)
"""


def demo_texts(folder: Path) -> list[str]:
    """The title-and-abstract texts of the bundled sample's OpenReview submissions."""
    import polars as pl

    from vault_pipeline.cli.app import sample_dir
    from vault_pipeline.evalsets.similarity import topic_text
    from vault_pipeline.raw.zone import RawZone
    from vault_pipeline.reviews.build import build_reviews
    from vault_pipeline.store.paths import VaultPaths

    paths = VaultPaths(folder / "base")
    RawZone(paths).import_paths([sample_dir()])
    build_reviews(paths)
    submissions = pl.read_parquet(paths.table("submissions"))
    return [topic_text(t, a) for t, a in submissions.select("title", "abstract").rows()]


def run_child(texts_file: Path, home: Path, backend: str, out: Path) -> float:
    result = subprocess.run([sys.executable, "-c", CHILD, str(texts_file), str(home), backend,
                             str(out)], capture_output=True, text=True)
    lines = [x for x in result.stdout.splitlines() if x.startswith("SECONDS ")]
    if result.returncode != 0 or not lines:
        raise SystemExit(f"{backend} failed:\n{result.stderr[-3000:]}")
    return float(lines[-1].split()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vault-topic-space-") as tmp:
        folder = Path(tmp)
        texts = demo_texts(folder)
        texts_file = folder / "texts.json"
        texts_file.write_text(json.dumps(texts))
        print(f"{len(texts)} submissions of the demo's sample; {os.cpu_count()} cores, load "
              f"{os.getloadavg()[0]:.2f}")
        seconds: dict[str, list[float]] = {label: [] for label in BACKENDS}
        vectors: dict[str, np.ndarray] = {}
        for round_ in range(args.rounds):
            for label, backend in BACKENDS.items():
                home = folder / f"{backend}-{round_}"  # a fresh vault: an empty vector cache
                out = folder / f"{backend}.npy"
                seconds[label].append(run_child(texts_file, home, backend, out))
                vectors[label] = np.load(out)
        print(f"{'backend':<16} {'wall s (median)':>16} {'rounds':>16}")
        for label, values in seconds.items():
            rounds = " ".join(f"{v:.1f}" for v in values)
            print(f"{label:<16} {statistics.median(values):>16.1f} {rounds:>16}")
        a, b = vectors.values()
        gap = np.abs(a @ a.T - b @ b.T).max()
        print(f"largest difference of a pair's cosine similarity between the backends: "
              f"{gap:.2e}")


if __name__ == "__main__":
    main()
