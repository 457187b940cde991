"""Training of the offline judge (needs torch; run by hand, not by the pipeline):

    python -m vault_pipeline.integrity.finetune

Trains on the `dev` and `train` rows of the labelled set (never `heldout`), grouped by
document in every fold so no paper's sentences sit on both sides:

1. the hashed n-gram logistic regression (:mod:`.classifier`), rewritten to `judge_weights.npz`;
2. the bundled MiniLM with its lower layers frozen (their output is computed once) and its
   top ``TOP_LAYERS`` layers plus a logistic head fine-tuned for a few epochs on the CPU,
   written to `judge_minilm_head.npz` (:mod:`.finetuned`);
3. the blend of the two (a weighted sum of their logits) and its thresholds, chosen on
   5-fold out-of-fold scores: the weight that catches most results at the masking
   threshold, the threshold at which the blend alone keeps ``MIN_KEPT`` of clean sentences.

Prints the out-of-fold figures of each model and of the blend, on all rows and by kind of
text, so the choice can be checked."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

import numpy as np

from vault_pipeline.integrity import classifier, training
from vault_pipeline.integrity.finetuned import HEAD, LAYER_PREFIX, Head

TOP_LAYERS = 2
MAX_TOKENS = 64
EPOCHS = 2
LEARNING_RATE = 5e-5
HEAD_LEARNING_RATE = 1e-3
BATCH = 32
SCALE = 10.0  # the unit vector is scaled before the head, so its weights start useful
MIN_KEPT, STRICT_KEPT = classifier.MIN_KEPT, classifier.STRICT_KEPT
BLENDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


class _Encoder:
    """The bundled model: token ids, the frozen lower layers' output (computed once for
    every sentence) and fresh copies of its top layers to fine-tune."""

    def __init__(self, texts: Sequence[str]) -> None:
        import torch
        from tokenizers import Tokenizer
        from transformers import AutoModel

        from vault_pipeline.embeddings.embedders import _embedded_model_dir

        folder, _ = _embedded_model_dir()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        encodings = tokenizer.encode_batch(list(texts))
        ids = np.zeros((len(texts), MAX_TOKENS), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = 1
        self.model = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
        self.depth = len(self.model.encoder.layer)
        self.mask = torch.from_numpy(mask)
        self.hidden = torch.zeros(len(texts), MAX_TOKENS, self.model.config.hidden_size)
        with torch.no_grad():
            for start in range(0, len(texts), 64):
                out = self.model(input_ids=torch.from_numpy(ids[start:start + 64]),
                                 attention_mask=self.mask[start:start + 64],
                                 output_hidden_states=True)
                self.hidden[start:start + 64] = out.hidden_states[self.depth - TOP_LAYERS]

    def top(self):
        import torch

        encoder = self

        class Top(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                first = encoder.depth - TOP_LAYERS
                self.layers = torch.nn.ModuleList(copy.deepcopy(encoder.model.encoder.layer[i])
                                                  for i in range(first, encoder.depth))
                self.head = torch.nn.Linear(encoder.model.config.hidden_size, 1)

            def forward(self, hidden, mask):
                additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
                for layer in self.layers:
                    hidden = layer(hidden, attention_mask=additive)
                weights = mask[:, :, None].float()
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                return self.head(pooled * SCALE).squeeze(-1)

        return Top()


def _batches(order: np.ndarray, lengths: np.ndarray, rng) -> list[np.ndarray]:
    """Batches of similar length (each pads to its longest sentence, so this halves the
    work on the CPU), drawn from shuffled pools and visited in random order."""
    pool = BATCH * 8
    batches = []
    for start in range(0, len(order), pool):
        chunk = order[start:start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + BATCH] for i in range(0, len(chunk), BATCH))
    return [batches[i] for i in rng.permutation(len(batches))]


def _fit(encoder: _Encoder, labels: np.ndarray, train: np.ndarray, seed: int = 0):
    import torch

    torch.manual_seed(seed)
    net = encoder.top()
    net.train()
    optimiser = torch.optim.AdamW([{"params": net.layers.parameters(), "lr": LEARNING_RATE},
                                   {"params": net.head.parameters(), "lr": HEAD_LEARNING_RATE}],
                                  weight_decay=0.01)
    positives = max(1, int(labels[train].sum()))
    loss_fn = torch.nn.BCEWithLogitsLoss(
        pos_weight=torch.tensor((len(train) - positives) / positives, dtype=torch.float32))
    steps = EPOCHS * int(np.ceil(len(train) / BATCH))
    warmup = max(1, int(0.1 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / steps))
    rng = np.random.default_rng(seed)
    target = torch.from_numpy(labels.astype(np.float32))
    lengths = encoder.mask.sum(1).numpy()
    for _ in range(EPOCHS):
        for rows in _batches(rng.permutation(train), lengths, rng):
            batch = torch.from_numpy(rows)
            mask = encoder.mask[batch]
            width = int(mask.sum(1).max())
            loss = loss_fn(net(encoder.hidden[batch, :width], mask[:, :width]), target[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
    return net.eval()


def _predict(encoder: _Encoder, net, rows: np.ndarray) -> np.ndarray:
    import torch

    out = np.zeros(len(rows))
    with torch.no_grad():
        for start in range(0, len(rows), 128):
            batch = torch.from_numpy(rows[start:start + 128])
            mask = encoder.mask[batch]
            width = int(mask.sum(1).max())
            out[start:start + 128] = torch.sigmoid(
                net(encoder.hidden[batch, :width], mask[:, :width])).numpy()
    return out


def out_of_fold(rows: Sequence[dict], folds: int = 5) -> dict[str, np.ndarray]:
    """Out-of-fold probabilities of both models (grouped by document)."""
    from sklearn.model_selection import GroupKFold

    texts = [r["text"] for r in rows]
    labels = np.array([r["label"] == "result" for r in rows])
    groups = np.array([r.get("doc") or r["id"] for r in rows])
    encoder = _Encoder(texts)
    features = classifier.features(texts)
    tuned, hashed = np.zeros(len(rows)), np.zeros(len(rows))
    for fold, (train, test) in enumerate(GroupKFold(folds).split(texts, labels, groups)):
        started = time.perf_counter()
        tuned[test] = _predict(encoder, _fit(encoder, labels, train), test)
        model = classifier.fit_features(features[train], labels[train])
        hashed[test] = model.predict_proba(features[test])[:, 1]
        print(f"  fold {fold}: {time.perf_counter() - started:.0f} s", flush=True)
    return {"tuned": tuned, "hashed": hashed, "labels": labels, "encoder": encoder}


def blend_scores(tuned: np.ndarray, hashed: np.ndarray, weight: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(weight * _logit(tuned) + (1 - weight) * _logit(hashed))))


def _recall_at(scores: np.ndarray, labels: np.ndarray, kept: float) -> float:
    threshold = classifier.choose_threshold(scores, labels, kept)
    return float((scores[labels] >= threshold).mean())


def train(rows: Sequence[dict], save_oof: str | None = None
          ) -> tuple[Head, classifier.SentenceJudge]:
    """The fine-tuned head (with the blend and thresholds) and the hashed judge;
    ``save_oof``: a .npz file for the out-of-fold scores (to study them afterwards)."""
    from sklearn.metrics import roc_auc_score

    from vault_pipeline.integrity.labelled import rows_sha256, rules_layer

    oof = out_of_fold(rows)
    labels, tuned, hashed = oof["labels"], oof["tuned"], oof["hashed"]
    if save_oof:
        np.savez(save_oof, tuned=tuned, hashed=hashed, labels=labels,
                 ids=np.array([r["id"] for r in rows]))
    rules = np.array(rules_layer(rows))
    kinds = np.array([r["source"].split(":")[0] for r in rows])
    best = max(BLENDS, key=lambda w: _recall_at(blend_scores(tuned, hashed, w), labels,
                                                MIN_KEPT))
    print(f"out of fold ({len(rows)} sentences; recall of the judge alone at the clean kept "
          f"shown; +rules: with the rules, at the masking threshold):")
    for name, scores in (("hashed", hashed), ("minilm", tuned),
                         (f"blend w={best}", blend_scores(tuned, hashed, best))):
        for kind in ["all", *sorted(set(kinds))]:
            sel = np.ones(len(rows), bool) if kind == "all" else kinds == kind
            y, s = labels[sel], scores[sel]
            if y.all() or not y.any():
                continue
            flagged = rules[sel] | (s >= classifier.choose_threshold(s, y, MIN_KEPT))
            print(f"  {name:<12} {kind:<12} n={sel.sum():>5} auc {roc_auc_score(y, s):.3f} "
                  f"recall@0.95 {_recall_at(s, y, 0.95):.3f} @{MIN_KEPT} "
                  f"{_recall_at(s, y, MIN_KEPT):.3f} | +rules recall "
                  f"{flagged[y].mean():.3f} kept {1 - flagged[~y].mean():.3f}")
    blended = blend_scores(tuned, hashed, best)
    net = _fit(oof["encoder"], labels, np.arange(len(rows)))
    first = oof["encoder"].depth - TOP_LAYERS
    layers = {f"{LAYER_PREFIX}{first + i}.{name}": value.detach().numpy().astype(np.float16)
              for i, layer in enumerate(net.layers)
              for name, value in layer.state_dict().items()}
    hashed_judge = training.train(rows, oof=hashed)
    meta = {"trained_on_sha256": rows_sha256(rows), "sentences": len(rows),
            "results": int(labels.sum()), "top_layers": TOP_LAYERS, "epochs": EPOCHS,
            "hashed_version": hashed_judge.version,
            "threshold_rule": f"blend alone keeps {MIN_KEPT} (strict: {STRICT_KEPT}) of "
                              "clean sentences (5-fold grouped by document, dev + train)"}
    head = Head(layers, net.head.weight.detach().numpy()[0].astype(np.float64) * SCALE,
                float(net.head.bias.detach().numpy()[0]), MAX_TOKENS, best,
                classifier.choose_threshold(blended, labels, MIN_KEPT),
                classifier.choose_threshold(blended, labels, STRICT_KEPT), meta)
    return head, hashed_judge


if __name__ == "__main__":
    import sys

    import torch

    from vault_pipeline.integrity.labelled import load_rows

    torch.set_num_threads(2)
    head, hashed = train(load_rows("dev") + load_rows("train"),
                         save_oof=sys.argv[1] if len(sys.argv) > 1 else None)
    head.save()
    hashed.save()
    print(f"blend weight {head.blend}, threshold {head.threshold:.3f} (strict "
          f"{head.strict_threshold:.3f}) -> {HEAD.name}; hashed judge {hashed.version} "
          f"threshold {hashed.threshold:.3f} -> {classifier.WEIGHTS.name}")
