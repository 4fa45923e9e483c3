"""Machine-learning forward passes: softmax over rows, a two-layer MLP, and a small
convolutional network (valid 3x3 convolutions as sums of shifted slices, ReLU, 2x2 pooling)."""
import numpy as np

from . import program


def _logits(n, rng):
    return (rng.standard_normal((n, 1000)).astype(np.float32),)


@program(_logits, tiny=3, S=2000, M=20_000)
def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _mlp(n, rng):
    return (rng.standard_normal((n, 256)).astype(np.float32),
            rng.standard_normal((256, 512)).astype(np.float32) * 0.05, rng.standard_normal(512).astype(np.float32),
            rng.standard_normal((512, 10)).astype(np.float32) * 0.05, rng.standard_normal(10).astype(np.float32))


@program(_mlp, tiny=4, S=200, M=2000)
def mlp(X, W1, b1, W2, b2):
    h = np.maximum(X @ W1 + b1, 0)
    z = h @ W2 + b2
    z = z - z.max(axis=1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)


def _images(n, rng):
    return (rng.standard_normal((n, 3, 32, 32)).astype(np.float32),
            rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.2, rng.standard_normal(8).astype(np.float32))


@program(_images, tiny=1, S=64, M=640)
def conv_net(x, w, b):
    """conv 3x3 (valid) -> bias -> ReLU -> 2x2 max pool -> global mean, written with slices."""
    n, c, hgt, wid = x.shape
    k = w.shape[0]
    out = np.zeros((n, k, hgt - 2, wid - 2), np.float32)
    for di in range(3):
        for dj in range(3):
            patch = x[:, :, di:di + hgt - 2, dj:dj + wid - 2]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, di, dj])
    out = np.maximum(out + b[None, :, None, None], 0)
    h2, w2 = out.shape[2] // 2, out.shape[3] // 2
    pooled = out[:, :, :2 * h2, :2 * w2].reshape(n, k, h2, 2, w2, 2).max(axis=(3, 5))
    return pooled.mean(axis=(2, 3))
