"""The offline judge's two models: the fine-tuned MiniLM head (saved, loaded, run by ONNX
Runtime exactly as torch runs it), the blend with the hashed judge, and the fallback to the
hashed judge alone when the MiniLM model cannot be built."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from vault_pipeline.integrity import classifier, finetuned

SENTENCES = ["Our model beats every baseline by a wide margin in all runs.",
             "We will compare against two baselines on three benchmarks.",
             "Accuracy should exceed the baseline if the prior is correct."]


def _small_head(hashed_version: str = "judge-lr/other") -> finetuned.Head:
    rng = np.random.default_rng(0)
    return finetuned.Head({"encoder.layer.5.output.dense.bias": rng.normal(size=384)},
                          rng.normal(size=384), 0.25, 64, 0.5, 0.4, 0.2,
                          {"sentences": 3, "hashed_version": hashed_version})


def test_a_head_is_saved_and_loaded_unchanged(tmp_path: Path) -> None:
    head = _small_head()
    head.save(tmp_path / "head.npz")
    again = finetuned.load_head(tmp_path / "head.npz")
    assert again is not None and again.sha256 != "" and again.blend == 0.5
    assert again.sha256 == finetuned.Head(
        {k: v.astype(np.float16) for k, v in head.layers.items()}, head.weight, head.bias,
        64, 0.5, 0.4, 0.2, {}).sha256
    assert finetuned.load_head(tmp_path / "absent.npz") is None


class _Tuned:
    def __init__(self, logits: np.ndarray, blend: float) -> None:
        self._logits = logits
        self.head = finetuned.Head({}, np.zeros(384), 0.0, 64, blend, 0.5, 0.3, {})

    def logits(self, sentences: list[str]) -> np.ndarray:
        return self._logits[:len(sentences)]


def test_the_blend_weighs_the_two_models_logits() -> None:
    hashed = classifier.load_hashed()
    assert hashed is not None
    logits = np.array([4.0, -4.0, 0.0])
    only_hashed = classifier.BlendedJudge(hashed, _Tuned(logits, 0.0))
    assert np.allclose(only_hashed.scores(SENTENCES), hashed.scores(SENTENCES), atol=1e-6)
    only_tuned = classifier.BlendedJudge(hashed, _Tuned(logits, 1.0))
    assert np.allclose(only_tuned.scores(SENTENCES), 1 / (1 + np.exp(-logits)))
    assert only_tuned.flags(SENTENCES) == [True, False, True]
    assert only_tuned.flags(SENTENCES, strict=True) == [True, False, True]
    assert only_tuned.version != hashed.version


def test_without_a_buildable_minilm_the_hashed_judge_is_used_and_it_is_said(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        tmp_path: Path) -> None:
    def cannot_build(*_args, **_kwargs):
        raise RuntimeError("no exporter here")

    monkeypatch.setattr(finetuned, "FineTunedScorer", cannot_build)
    _loaded_with_head(classifier.load_hashed().version, monkeypatch, caplog, tmp_path,
                      "cannot be built here (no exporter here)")


def test_a_head_blended_with_another_hashed_judge_is_not_used(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        tmp_path: Path) -> None:
    _loaded_with_head("judge-lr/0123456789ab", monkeypatch, caplog, tmp_path,
                      "was blended with judge-lr/0123456789ab")


def _loaded_with_head(hashed_version: str, monkeypatch: pytest.MonkeyPatch,
                      caplog: pytest.LogCaptureFixture, tmp_path: Path, warning: str) -> None:
    """Load the judge with a small head blended with ``hashed_version``: the hashed judge
    alone must be used, and ``warning`` said."""
    _small_head(hashed_version).save(tmp_path / "head.npz")
    monkeypatch.setattr(finetuned, "HEAD", tmp_path / "head.npz")
    finetuned.load_scorer.cache_clear()
    classifier.load.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            judge = classifier.load()
        assert isinstance(judge, classifier.SentenceJudge)
        assert warning in caplog.text
    finally:
        finetuned.load_scorer.cache_clear()
        classifier.load.cache_clear()


def test_the_shipped_minilm_head_runs_in_onnx_as_in_torch() -> None:
    torch = pytest.importorskip("torch")
    from transformers import AutoModel

    from vault_pipeline.embeddings.embedders import _embedded_model_dir

    scorer = finetuned.load_scorer()
    if finetuned.load_head() is None:
        pytest.skip("no fine-tuned head ships")
    assert scorer is not None
    folder, _ = _embedded_model_dir()
    model = AutoModel.from_pretrained(str(folder)).eval()
    model.load_state_dict({k: torch.from_numpy(v.astype(np.float32))
                           for k, v in scorer.head.layers.items()}, strict=False)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=scorer.head.max_tokens)
    expected = []
    with torch.no_grad():
        for sentence in SENTENCES:
            ids = torch.tensor([tokenizer.encode(sentence).ids])
            tokens = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            pooled = torch.nn.functional.normalize(tokens.mean(1), dim=-1)[0].numpy()
            expected.append(pooled @ scorer.head.weight + scorer.head.bias)
    assert np.allclose(scorer.logits(SENTENCES), expected, atol=1e-3)
    judge = classifier.load()
    assert isinstance(judge, classifier.BlendedJudge)
    assert judge.flags(SENTENCES[:1]) == [True]
