"""Detection operations: NonMaxSuppression (1, 3, 4, 5, 9), ROIAlign (3, 9), ROIPooling-2.

NonMaxSuppression follows OpenVINO's reference: per batch and class, candidates
above ``score_threshold`` are visited by descending score (ties: lower box index
first); soft-NMS decays scores by ``exp(-0.5 * iou^2 / sigma)``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from ._nn import same
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]
F32 = np.float32


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two ``[y1, x1, y2, x2]`` boxes (float32 arithmetic)."""
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return 0.0
    ih = max(min(a[2], b[2]) - max(a[0], b[0]), F32(0))
    iw = max(min(a[3], b[3]) - max(a[1], b[1]), F32(0))
    inter = ih * iw
    return float(F32(inter / (area_a + area_b - inter)))


def _corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """``[..., 4]`` boxes as ``[y_min, x_min, y_max, x_max]`` float32."""
    b = boxes.astype(F32)
    if center:
        xc, yc, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        half_w, half_h = w / F32(2), h / F32(2)
        return np.stack([yc - half_h, xc - half_w, yc + half_h, xc + half_w], axis=-1)
    y1 = np.minimum(b[..., 0], b[..., 2])
    y2 = np.maximum(b[..., 0], b[..., 2])
    x1 = np.minimum(b[..., 1], b[..., 3])
    x2 = np.maximum(b[..., 1], b[..., 3])
    return np.stack([y1, x1, y2, x2], axis=-1)


def nms_select(boxes: np.ndarray, scores: np.ndarray, max_out: int, iou_thr: float,
               score_thr: float, sigma: float, inclusive_iou: bool
               ) -> list[tuple[int, int, int, float]]:
    """``(batch, class, box, score)`` of every selected box, batch-major then class."""
    iou_thr_f, score_thr_f = F32(iou_thr), F32(score_thr)
    scale = F32(-0.5) / F32(sigma) if sigma > 0 else F32(0)
    soft = sigma > 0
    out: list[tuple[int, int, int, float]] = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            sc = scores[b, c].astype(F32)
            # heap keyed on (-score, index): highest score first, then lowest index
            heap = [(-float(sc[i]), i, 0) for i in range(sc.shape[0]) if sc[i] > score_thr_f]
            heapq.heapify(heap)
            selected: list[tuple[int, float]] = []
            while heap and len(selected) < max_out:
                neg, idx, begin = heapq.heappop(heap)
                score = F32(-neg)
                original = score
                suppressed = False
                for j in range(len(selected) - 1, begin - 1, -1):
                    iou = F32(_iou(boxes[b, idx], boxes[b, selected[j][0]]))
                    weight = np.exp(scale * iou * iou, dtype=F32)
                    if not soft and not (iou <= iou_thr_f):
                        weight = F32(0)
                    score = F32(score * weight)
                    hard = iou >= iou_thr_f if inclusive_iou else iou > iou_thr_f
                    if hard and not soft:
                        suppressed = True
                        break
                    if score <= score_thr_f:
                        break
                if suppressed:
                    continue
                if score == original:
                    selected.append((idx, float(score)))
                elif score > score_thr_f:
                    heapq.heappush(heap, (-float(score), idx, len(selected)))
            out.extend((b, c, i, s) for i, s in selected)
    return out


@register("NonMaxSuppression", "opset9")
class NonMaxSuppression(Op):
    """NonMaxSuppression-9: outputs selected_indices ``[M, 3]``, selected_scores ``[M, 3]``
    and valid_outputs ``[1]`` (M = number selected)."""

    inclusive_iou = False
    padded_output = False

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.center = self.attr_str("box_encoding", "corner").lower() == "center"
        self.sort_desc = self.attr_bool("sort_result_descending", True)
        self.output_type = self.attr_type("output_type", "i64")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [TensorInfo(self.output_type, (-1, 3)), same(inputs[1], (-1, 3)),
                TensorInfo(self.output_type, (1,))]

    @staticmethod
    def _scalar(inputs: list[np.ndarray], i: int, default: float) -> float:
        if len(inputs) > i and np.size(inputs[i]):
            return float(np.ravel(inputs[i])[0])
        return default

    def _select(self, inputs: list[np.ndarray]) -> list[tuple[int, int, int, float]]:
        boxes = _corners(np.asarray(inputs[0]), self.center)
        scores = np.asarray(inputs[1])
        max_out = int(self._scalar(inputs, 2, 0))
        iou_thr = self._scalar(inputs, 3, 0.0)
        score_thr = self._scalar(inputs, 4, 0.0)
        sigma = self._scalar(inputs, 5, 0.0)
        sel = nms_select(boxes, scores, max(max_out, 0), iou_thr, score_thr, sigma,
                         self.inclusive_iou)
        if self.sort_desc:
            sel.sort(key=lambda t: (-t[3], t[0], t[1], t[2]))
        return sel

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        sel = self._select(inputs)
        it = self.output_type.dtype
        idx = np.array([t[:3] for t in sel], dtype=it).reshape(-1, 3)
        sdt = np.asarray(inputs[1]).dtype
        scores = np.array([(t[0], t[1], t[3]) for t in sel], dtype=sdt).reshape(-1, 3)
        return [idx, scores, np.array([len(sel)], dtype=it)]


@register("NonMaxSuppression", "opset5")
class NonMaxSuppression5(NonMaxSuppression):
    """NonMaxSuppression-5: boxes with IOU equal to the threshold are suppressed too."""

    inclusive_iou = True


class _LegacyNMS(NonMaxSuppression):
    """NonMaxSuppression-1/3/4: one output ``[B*C*min(N, max), 3]`` padded with -1."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [TensorInfo(self.output_type, (-1, 3))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        sel = self._select(inputs)
        b, c, n = np.shape(inputs[1])
        max_out = int(self._scalar(inputs, 2, 0))
        rows = b * c * min(n, max(max_out, 0))
        out = np.full((rows, 3), -1, dtype=self.output_type.dtype)
        for i, t in enumerate(sel[:rows]):
            out[i] = t[:3]
        return [out]


@register("NonMaxSuppression", "opset4")
class NonMaxSuppression4(_LegacyNMS):
    """NonMaxSuppression-4."""


@register("NonMaxSuppression", "opset3")
class NonMaxSuppression3(_LegacyNMS):
    """NonMaxSuppression-3."""


@register("NonMaxSuppression", "opset1")
class NonMaxSuppression1(_LegacyNMS):
    """NonMaxSuppression-1 (indices always i64)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_type = self.attr_type("output_type", "i64")


# --------------------------------------------------------------------------- ROI ops


@register("ROIAlign", "opset9")
class ROIAlign(Op):
    """ROIAlign-9: ``mode`` avg/max, ``aligned_mode`` asymmetric / half_pixel_for_nn /
    half_pixel. Max mode starts from 0, as OpenVINO's reference does."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.pooled_h = self.attr_int("pooled_h", 1)
        self.pooled_w = self.attr_int("pooled_w", 1)
        self.sampling_ratio = self.attr_int("sampling_ratio", 0)
        self.spatial_scale = self.attr_float("spatial_scale", 1.0)
        self.mode = self.attr_str("mode", "avg").lower()
        self.aligned_mode = self.attr_str("aligned_mode", "asymmetric").lower()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, rois = inputs[0], inputs[1]
        n = rois.shape[0] if rois.shape is not None else -1
        c = x.shape[1] if x.shape is not None else -1
        return [same(x, (n, c, self.pooled_h, self.pooled_w))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        dtype = x.dtype
        t = F32 if dtype.itemsize <= 4 else np.float64
        rois = np.asarray(inputs[1]).astype(t)
        batch_idx = np.ravel(inputs[2]).astype(np.int64)
        _, c, h, w = x.shape
        ph, pw = self.pooled_h, self.pooled_w
        out = np.zeros((rois.shape[0], c, ph, pw), dtype=t)
        xs = x.astype(t)
        for r in range(rois.shape[0]):
            x1, y1, rw, rh, to_image = self._space(rois[r], t)
            bw, bh = t(rw / t(pw)), t(rh / t(ph))
            sx = self.sampling_ratio or int(np.ceil(bw))
            sy = self.sampling_ratio or int(np.ceil(bh))
            n = sx * sy
            plane = xs[batch_idx[r]]
            dx, dy = t(bw / t(sx)) if sx else t(0), t(bh / t(sy)) if sy else t(0)
            for i in range(ph):
                for j in range(pw):
                    acc = np.zeros(c, dtype=t)
                    for yi in range(sy):
                        py = t(y1 + t(i) * bh + dy * t(t(yi) + t(0.5)))
                        for xi in range(sx):
                            px = t(x1 + t(j) * bw + dx * t(t(xi) + t(0.5)))
                            yy, xx = to_image(py, px)
                            val = self._sample(plane, yy, xx, h, w, t)
                            if self.mode == "max":
                                acc = np.maximum(acc, val)
                            else:
                                acc = acc + val / t(n)  # type: ignore[operator]
                    out[r, :, i, j] = acc
        return [out.astype(dtype)]

    def _space(self, roi: np.ndarray, t: type):
        """The ROI's sampling space: start x, start y, width, height and the map from a
        sampling point (y, x) to image coordinates."""
        off_src = t(0.5) if self.aligned_mode == "half_pixel" else t(0)
        off_dst = t(-0.5) if self.aligned_mode in ("half_pixel", "half_pixel_for_nn") else t(0)
        scale = t(self.spatial_scale)
        x1, y1, x2, y2 = (t((roi[k] + off_src) * scale + off_dst) for k in range(4))
        rw, rh = t(x2 - x1), t(y2 - y1)
        if self.aligned_mode == "asymmetric":
            rw, rh = max(rw, t(1)), max(rh, t(1))
        return x1, y1, rw, rh, lambda py, px: (py, px)

    @staticmethod
    def _sample(plane: np.ndarray, y: np.floating, x: np.floating, h: int, w: int,
                t: type) -> np.ndarray:
        if x < -1.0 or x > w or y < -1.0 or y > h:
            return np.zeros(plane.shape[0], dtype=t)
        y = max(y, t(0))
        x = max(x, t(0))
        y_lo, x_lo = int(y), int(x)
        if y_lo >= h - 1:
            y_lo = y_hi = h - 1
            y = t(y_lo)
        else:
            y_hi = y_lo + 1
        if x_lo >= w - 1:
            x_lo = x_hi = w - 1
            x = t(x_lo)
        else:
            x_hi = x_lo + 1
        ly, lx = t(y - t(y_lo)), t(x - t(x_lo))
        hy, hx = t(1) - ly, t(1) - lx
        return (hy * hx * plane[:, y_lo, x_lo] + hy * lx * plane[:, y_lo, x_hi]
                + ly * hx * plane[:, y_hi, x_lo] + ly * lx * plane[:, y_hi, x_hi])


@register("ROIAlign", "opset3")
class ROIAlign3(ROIAlign):
    """ROIAlign-3: no ``aligned_mode`` (asymmetric)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.aligned_mode = "asymmetric"


@register("ROIAlignRotated", "opset15")
class ROIAlignRotated(ROIAlign):
    """ROIAlignRotated-15: rois ``[N, 5]`` = (center x, center y, width, height, angle);
    sampling points are rotated about the centre (``clockwise_mode`` negates the angle);
    average pooling."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.clockwise = self.attr_bool("clockwise_mode", False)
        self.mode = "avg"

    def _space(self, roi: np.ndarray, t: type):
        scale = t(self.spatial_scale)
        cx, cy = t(roi[0] * scale - t(0.5)), t(roi[1] * scale - t(0.5))
        width, height = t(roi[2] * scale), t(roi[3] * scale)
        angle = -roi[4] if self.clockwise else roi[4]
        cos, sin = F32(np.cos(angle)), F32(np.sin(angle))

        def to_image(py, px):
            return t(py * cos - px * sin + cy), t(py * sin + px * cos + cx)

        return t(-width / t(2)), t(-height / t(2)), width, height, to_image


@register("ROIPooling", "opset2")
class ROIPooling(Op):
    """ROIPooling-2, ``method="max"``: rois ``[num, 5]`` = (batch, x1, y1, x2, y2)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.pooled = self.attr_ints("output_size", [1, 1])
        self.spatial_scale = self.attr_float("spatial_scale", 1.0)
        self.method = self.attr_str("method", "max").lower()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, rois = inputs[0], inputs[1]
        n = rois.shape[0] if rois.shape is not None else -1
        c = x.shape[1] if x.shape is not None else -1
        return [same(x, (n, c, *self.pooled))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if self.method != "max":
            raise ValueError(f"ROIPooling method {self.method!r} is not supported")
        x = np.asarray(inputs[0])
        rois = np.asarray(inputs[1]).astype(np.float64)
        _, c, h, w = x.shape
        ph, pw = self.pooled
        out = np.zeros((rois.shape[0], c, ph, pw), dtype=x.dtype)
        for r, roi in enumerate(rois):
            b = int(roi[0])
            x1, y1, x2, y2 = (int(np.round(v * self.spatial_scale)) for v in roi[1:])
            rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
            bh, bw = rh / ph, rw / pw
            for i in range(ph):
                hs = min(max(int(np.floor(i * bh)) + y1, 0), h)
                he = min(max(int(np.ceil((i + 1) * bh)) + y1, 0), h)
                for j in range(pw):
                    ws = min(max(int(np.floor(j * bw)) + x1, 0), w)
                    we = min(max(int(np.ceil((j + 1) * bw)) + x1, 0), w)
                    if he > hs and we > ws:
                        out[r, :, i, j] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
        return [out]
