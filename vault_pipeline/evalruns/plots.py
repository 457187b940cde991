"""The study-style figures of an evaluation run, as PNG bytes: predicted against human
ratings (one panel per paradigm and input), calibration by human score bin, and the error
per bin. matplotlib (Agg, no display) is imported on first use only, so `vault --help` and
runs that never draw do not pay for it."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import polars as pl

DPI = 80
_SCALE = (1.0, 10.0)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(figure: Any) -> bytes:
    plt = _pyplot()
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=DPI)
    plt.close(figure)
    return buffer.getvalue()


def scatter(items: pl.DataFrame, tasks: Sequence[str], inputs: Sequence[str]) -> bytes:
    """Predicted (mean over repeats) against the human mean rating, one panel per paradigm
    (columns) and input (rows), with the identity line and the accept threshold area left
    to the reader. ``items``: task, input, item_id, predicted, human."""
    plt = _pyplot()
    figure, axes = plt.subplots(len(inputs), len(tasks), squeeze=False,
                                figsize=(2.4 * len(tasks), 2.4 * len(inputs)),
                                sharex=True, sharey=True)
    for row, source in enumerate(inputs):
        for col, task in enumerate(tasks):
            ax = axes[row][col]
            part = items.filter((pl.col("task") == task) & (pl.col("input") == source))
            ax.plot(_SCALE, _SCALE, color="0.6", linewidth=0.8, linestyle="--")
            ax.scatter(part.get_column("human"), part.get_column("predicted"), s=10,
                       alpha=0.6)
            ax.set_xlim(*_SCALE)
            ax.set_ylim(0.5, 10.5)
            if row == 0:
                ax.set_title(task, fontsize=9)
            if col == 0:
                ax.set_ylabel(f"{source}\npredicted", fontsize=8)
            if row == len(inputs) - 1:
                ax.set_xlabel("human mean", fontsize=8)
            ax.tick_params(labelsize=7)
    return _png(figure)


def calibration(bins: pl.DataFrame, tasks: Sequence[str], inputs: Sequence[str]) -> bytes:
    """Mean prediction against the mean human rating of each integer human bin, one panel
    per input, one line per paradigm; a calibrated paradigm lies on the diagonal.
    ``bins``: task, input, bin, pred, human, n."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(inputs), squeeze=False,
                                figsize=(3.4 * len(inputs), 3.2), sharey=True)
    for col, source in enumerate(inputs):
        ax = axes[0][col]
        ax.plot(_SCALE, _SCALE, color="0.6", linewidth=0.8, linestyle="--", label="ideal")
        for task in tasks:
            part = bins.filter((pl.col("task") == task) & (pl.col("input") == source)
                               ).sort("bin")
            if part.height:
                ax.plot(part.get_column("human"), part.get_column("pred"), marker="o",
                        markersize=3, linewidth=1, label=task)
        ax.set_title(source, fontsize=9)
        ax.set_xlabel("human mean of the bin", fontsize=8)
        ax.set_xlim(*_SCALE)
        ax.set_ylim(*_SCALE)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("mean prediction", fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="best")
    return _png(figure)


def bin_error(bins: pl.DataFrame, tasks: Sequence[str], inputs: Sequence[str]) -> bytes:
    """Mean absolute error of each paradigm per integer human bin, one panel per input
    (grouped bars). ``bins``: task, input, bin, mae."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(inputs), squeeze=False,
                                figsize=(3.6 * len(inputs), 3.0), sharey=True)
    width = 0.8 / max(1, len(tasks))
    for col, source in enumerate(inputs):
        ax = axes[0][col]
        for n, task in enumerate(tasks):
            part = bins.filter((pl.col("task") == task) & (pl.col("input") == source))
            if part.height:
                ax.bar([b + (n - (len(tasks) - 1) / 2) * width
                        for b in part.get_column("bin").to_list()],
                       part.get_column("mae"), width=width, label=task)
        ax.set_title(source, fontsize=9)
        ax.set_xlabel("human score bin", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("mean absolute error", fontsize=8)
    axes[0][-1].legend(fontsize=7)
    return _png(figure)
