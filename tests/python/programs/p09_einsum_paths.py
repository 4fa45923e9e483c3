"""Batched bilinear forms with einsum, optimized contraction paths and tensordot."""
import numpy as np

rng = np.random.default_rng(3)
A = rng.standard_normal((4, 5, 6))
B = rng.standard_normal((6, 7))
C = rng.standard_normal((7, 3))
path, info = np.einsum_path("bij,jk,kl->bil", A, B, C, optimize="optimal")
print(path)
print(info.splitlines()[1:4])
out = np.einsum("bij,jk,kl->bil", A, B, C, optimize=path)
ref = A @ B @ C
print(out.shape, np.allclose(out, ref))
x = rng.standard_normal((4, 5))
quad = np.einsum("bi,bij,bj->b", x, A[:, :, :5], x)
print(np.round(quad, 6))
tr = np.einsum("ii->", np.arange(16.0).reshape(4, 4))
print(tr, np.einsum("ij->ji", np.arange(6).reshape(2, 3)))
td = np.tensordot(A, B, axes=([2], [0]))
print(td.shape, np.round(td.sum(), 6))
outer = np.einsum("i,j->ij", np.arange(3), np.arange(4))
print(outer)
RESULT = {"out": out, "quad": quad, "tr": tr, "td": td, "outer": outer}
