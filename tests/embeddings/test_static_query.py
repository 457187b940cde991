"""The static query encoder lives in its model's space: its query vectors find what the model's
own would, on abstracts it was not fitted on; it is read back as saved, rebuilt when its file
is damaged; and the tools search with it when asked to."""

from __future__ import annotations

import random

import numpy as np
import pytest

from vault_pipeline.embeddings import static_query
from vault_pipeline.embeddings.embedders import load_query_embedder
from vault_pipeline.embeddings.static_query import StaticQueryEncoder
from vault_pipeline.integrity import roles


@pytest.fixture(scope="module")
def fitted():
    model = load_query_embedder("embedded")
    abstracts = roles.load_abstracts("dev")
    random.Random(0).shuffle(abstracts)
    texts = [s for a in abstracts[:150] for s in a["sentences"]]
    vectors = model.embed(texts)
    return model, static_query.for_index(texts, vectors, model, None), abstracts[150:270]


def found_at_10(queries: np.ndarray, docs: np.ndarray) -> float:
    scores = queries @ docs.T
    own = scores.diagonal()
    return float(((scores > own[:, None]).sum(1) < 10).mean())


def test_its_queries_find_what_the_models_find(fitted) -> None:
    model, encoder, held = fitted
    held = [a for a in held if len(a["sentences"]) >= 4]
    openings = [" ".join(a["sentences"][:3]) for a in held]
    docs = model.embed([" ".join(a["sentences"][3:]) for a in held])
    static, full = encoder.embed(openings), model.embed(openings)
    assert static.shape == full.shape and static.dtype == np.float32
    assert np.allclose(np.linalg.norm(static, axis=1), 1, atol=1e-5)
    assert float((static * full).sum(1).mean()) > 0.6  # unmapped sums give ~0.45
    assert found_at_10(static, docs) >= found_at_10(full, docs) - 0.1
    assert found_at_10(static, docs) >= 0.8


def test_the_map_is_what_puts_it_in_the_models_space(fitted) -> None:
    model, encoder, held = fitted
    texts = [" ".join(a["sentences"][:3]) for a in held]
    unmapped = StaticQueryEncoder(model.tokenizer, encoder._rows,
                                  np.eye(encoder.dimension, dtype=np.float32), model.name)
    full = model.embed(texts)
    assert (float((encoder.embed(texts) * full).sum(1).mean())
            > float((unmapped.embed(texts) * full).sum(1).mean()) + 0.1)


def test_saved_read_back_and_a_damaged_file_distilled_again(fitted, tmp_path,
                                                            monkeypatch) -> None:
    model, encoder, _ = fitted
    path = tmp_path / "query-v3-10.npz"
    encoder.save(path)
    back = StaticQueryEncoder.load(path, model)
    assert back is not None
    assert np.array_equal(back.embed(["a query text"]), encoder.embed(["a query text"]))
    path.write_bytes(b"damaged")
    assert StaticQueryEncoder.load(path, model) is None
    distilled = []
    monkeypatch.setattr(StaticQueryEncoder, "distill",
                        classmethod(lambda cls, *a: distilled.append(1) or encoder))
    old = tmp_path / "query-v2-10.npz"
    old.write_bytes(b"an older version's")
    assert static_query.for_index(["t"], np.ones((1, 384), np.float32), model, path) is encoder
    assert distilled == [1] and not old.exists()
    assert StaticQueryEncoder.load(path, model) is not None  # saved again


def test_empty_texts_give_finite_vectors(fitted) -> None:
    _, encoder, _ = fitted
    vectors = encoder.embed(["", "   "])
    assert vectors.shape == (2, encoder.dimension) and np.isfinite(vectors).all()
    assert encoder.embed([]).shape == (0, encoder.dimension)


def test_the_map_runs_on_one_blas_thread(fitted, monkeypatch) -> None:
    """BLAS's idle threads spin after a threaded product and slow the graph walk that
    follows a query's embedding: the map is computed under a one-thread BLAS limit."""
    _, encoder, _ = fitted
    real, threads = static_query._blas(), []

    class Recording:
        def limit(self, **kwargs):
            threads.append(kwargs)
            return real.limit(**kwargs)

    monkeypatch.setattr(static_query, "_blas", lambda: Recording())
    vectors = encoder.embed(["a query about sparse attention", "and another one"])
    assert threads == [{"limits": 1, "user_api": "blas"}]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
