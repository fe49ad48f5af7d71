"""CTC operations: CTCGreedyDecoder-1, CTCGreedyDecoderSeqLen-6, CTCLoss-4."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import same
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


@register("CTCGreedyDecoder", "opset1")
class CTCGreedyDecoder(Op):
    """CTCGreedyDecoder-1: data ``[T, N, C]``, sequence mask ``[T, N]`` -> ``[N, T, 1, 1]``
    class indices padded with -1 (blank = C-1; decoding stops at the first 0 in the mask)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.merge = self.attr_bool("ctc_merge_repeated", True)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        if x.shape is None:
            return [same(x, (-1, -1, 1, 1))]
        return [same(x, (x.shape[1], x.shape[0], 1, 1))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        mask = np.asarray(inputs[1])
        t_max, batch, classes = data.shape
        out = np.full((batch, t_max, 1, 1), -1, dtype=data.dtype)
        best = np.argmax(data, axis=2)
        for b in range(batch):
            prev, n = -1, 0
            for t in range(t_max):
                if mask[t, b] == 0:
                    break
                k = int(best[t, b])
                if not (prev == k and self.merge) and k < classes - 1:
                    out[b, n, 0, 0] = k
                    n += 1
                prev = k
        return [out]


@register("CTCGreedyDecoderSeqLen", "opset6")
class CTCGreedyDecoderSeqLen(Op):
    """CTCGreedyDecoderSeqLen-6: data ``[N, T, C]``, sequence_length ``[N]``, optional
    blank_index (default C-1) -> decoded ``[N, T]`` (padded with -1) and lengths ``[N]``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.merge = self.attr_bool("merge_repeated", True)
        self.classes_type = self.attr_type("classes_index_type", "i32")
        self.length_type = self.attr_type("sequence_length_type", "i32")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        n, t = (x.shape[0], x.shape[1]) if x.shape is not None else (-1, -1)
        return [TensorInfo(self.classes_type, (n, t)), TensorInfo(self.length_type, (n,))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        lengths = np.ravel(inputs[1]).astype(np.int64)
        batch, t_max, classes = data.shape
        blank = int(np.ravel(inputs[2])[0]) if len(inputs) > 2 else classes - 1
        out = np.full((batch, t_max), -1, dtype=self.classes_type.dtype)
        counts = np.zeros(batch, dtype=self.length_type.dtype)
        best = np.argmax(data, axis=2)
        for b in range(batch):
            prev, n = -1, 0
            for t in range(int(lengths[b])):
                k = int(best[b, t])
                if k != blank and not (self.merge and prev == k):
                    out[b, n] = k
                    n += 1
                prev = k
            counts[b] = n
        return [out, counts]


def _logsumexp(a: float, b: float) -> float:
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    hi, lo = max(a, b), min(a, b)
    return hi + float(np.log1p(np.exp(lo - hi)))


@register("CTCLoss", "opset4")
class CTCLoss(Op):
    """CTCLoss-4: negative log-likelihood of ``labels`` under ``logits [N, T, C]`` (softmax
    over classes). With ``ctc_merge_repeated`` False each label takes exactly one frame."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.collapse = self.attr_bool("preprocess_collapse_repeated", False)
        self.merge = self.attr_bool("ctc_merge_repeated", True)
        self.unique = self.attr_bool("unique", False)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        return [same(x, (x.shape[0] if x.shape is not None else -1,))]

    def _target(self, labels: np.ndarray, n: int) -> list[int]:
        raw = [int(v) for v in labels[:n]]
        if self.unique:
            seen: list[int] = []
            for v in raw:
                if v not in seen:
                    seen.append(v)
            return seen
        if self.collapse and raw:
            out = [raw[0]]
            for v in raw[1:]:
                if v != out[-1]:
                    out.append(v)
            return out
        return raw

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        logits = np.asarray(inputs[0])
        logit_len = np.ravel(inputs[1]).astype(np.int64)
        labels = np.asarray(inputs[2]).astype(np.int64)
        label_len = np.ravel(inputs[3]).astype(np.int64)
        batch, t_max, classes = logits.shape
        blank = int(np.ravel(inputs[4])[0]) if len(inputs) > 4 else classes - 1
        x = logits.astype(np.float64)
        logp = x - np.log(np.sum(np.exp(x), axis=2, keepdims=True))
        out = np.zeros(batch, dtype=logits.dtype)
        for b in range(batch):
            steps = int(logit_len[b])
            if steps > t_max or label_len[b] > t_max or label_len[b] > steps:
                raise ValueError("CTCLoss: a label or logit length exceeds the sequence length")
            target = self._target(labels[b], int(label_len[b]))
            lp = logp[b, :steps]
            total = self._merge(lp, target, blank) if self.merge else \
                self._no_merge(lp, target, blank)
            out[b] = -total
        return [out]

    @staticmethod
    def _merge(lp: np.ndarray, target: list[int], blank: int) -> float:
        """Standard CTC forward pass over the blank-interleaved target."""
        ext = [blank]
        for v in target:
            ext += [v, blank]
        n = len(ext)
        alpha = [-np.inf] * n
        if lp.shape[0] == 0:
            return -np.inf if target else 0.0
        alpha[0] = lp[0, blank]
        if n > 1:
            alpha[1] = lp[0, ext[1]]
        for t in range(1, lp.shape[0]):
            new = [-np.inf] * n
            for s in range(n):
                acc = alpha[s]
                if s >= 1:
                    acc = _logsumexp(acc, alpha[s - 1])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    acc = _logsumexp(acc, alpha[s - 2])
                new[s] = acc + lp[t, ext[s]] if acc != -np.inf else -np.inf
            alpha = new
        return _logsumexp(alpha[-1], alpha[-2] if n > 1 else -np.inf)

    @staticmethod
    def _no_merge(lp: np.ndarray, target: list[int], blank: int) -> float:
        """Every target label occupies exactly one frame; blanks fill the others."""
        n = len(target)
        alpha = [0.0] + [-np.inf] * n  # alpha[k]: k labels emitted so far
        for t in range(lp.shape[0]):
            new = [-np.inf] * (n + 1)
            for k in range(n + 1):
                stay = alpha[k] + lp[t, blank] if alpha[k] != -np.inf else -np.inf
                move = alpha[k - 1] + lp[t, target[k - 1]] \
                    if k >= 1 and alpha[k - 1] != -np.inf else -np.inf
                new[k] = _logsumexp(stay, move)
            alpha = new
        return alpha[n]
