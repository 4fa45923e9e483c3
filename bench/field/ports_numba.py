"""Explicit-loop versions of the cases, as Numba users write them (``@njit(parallel=True)``
with ``prange`` over the outer loop). Validated against the NumPy source like every port."""
import math

import numpy as np


def ports():
    from numba import njit, prange

    jit = njit(parallel=True, cache=False)

    @jit
    def outer_sum(X, Y):
        n, m = X.shape
        out = np.empty(n)
        for i in prange(n):
            acc = 0.0
            for j in range(m):
                xj = X[i, j]
                for k in range(m):
                    acc += xj * Y[i, k]
            out[i] = acc
        return out

    @jit
    def kmeans(X, means):
        n = X.shape[0]
        k = means.shape[0]
        out = np.empty(n, dtype=np.int64)
        for i in prange(n):
            best, arg = np.inf, 0
            for c in range(k):
                d0 = X[i, 0] - means[c, 0]
                d1 = X[i, 1] - means[c, 1]
                d = math.sqrt(d0 * d0 + d1 * d1)
                if d < best:
                    best, arg = d, c
            out[i] = arg
        return out

    @jit
    def chain(a, b):
        out = np.empty(a.shape[0], dtype=np.bool_)
        for i in prange(a.shape[0]):
            out[i] = a[i] * b[i] - 4.1 * a[i] > 2.5 * b[i]
        return out

    @jit
    def haversine(lat1, lon1, lat2, lon2):
        out = np.empty(lat1.shape[0])
        for i in prange(lat1.shape[0]):
            s1 = math.sin((lat2[i] - lat1[i]) / 2)
            s2 = math.sin((lon2[i] - lon1[i]) / 2)
            a = s1 * s1 + math.cos(lat1[i]) * math.cos(lat2[i]) * s2 * s2
            out[i] = 2 * 6371.0 * math.atan2(math.sqrt(a), math.sqrt(1 - a))
        return out

    @jit
    def eos(T3, S3, p3):
        T, S, p = T3.ravel(), S3.ravel(), p3.ravel()
        out = np.empty(T.shape[0])
        for i in prange(T.shape[0]):
            t, s, q = T[i], S[i], p[i]
            rho_w = 999.84 + t * (6.79e-2 + t * (-9.09e-3 + t * (1.0e-4 + t * (-1.12e-6 + t * 6.5e-9))))
            rho_s = (s * (0.824 + t * (-4.09e-3 + t * (7.64e-5 + t * (-8.25e-7 + t * 5.39e-9))))
                     + s * math.sqrt(s) * (-5.72e-3 + t * (1.02e-4 - t * 1.65e-6)) + 4.83e-4 * s * s)
            K = (19652.2 + t * (148.4 + t * (-2.33 + t * (1.36e-2 - t * 5.16e-5)))
                 + s * (54.67 + t * (-0.603 + t * (1.10e-2 - t * 6.17e-5)))
                 + q * (3.24 + t * (1.44e-3 + t * (1.16e-4 - t * 5.78e-7))))
            out[i] = (rho_w + rho_s) / (1.0 - q / K)
        return out.reshape(T3.shape)

    @jit
    def clip_axpy(x, y):
        out = np.empty_like(x)
        lo, hi = -(1 << 20), 1 << 20
        for i in prange(x.shape[0]):
            v = 3 * x[i] + y[i]
            out[i] = lo if v < lo else (hi if v > hi else v)
        return out

    @jit
    def softmax(x):
        rows, cols = x.shape
        out = np.empty_like(x)
        for r in prange(rows):
            mx = x[r, 0]
            for k in range(1, cols):
                mx = max(mx, x[r, k])
            s = np.float32(0.0)
            for k in range(cols):
                out[r, k] = np.exp(x[r, k] - mx)
                s += out[r, k]
            for k in range(cols):
                out[r, k] /= s
        return out

    @jit
    def normalise(x):
        n, m = x.shape
        out = np.empty_like(x)
        for j in prange(m):
            s = 0.0
            for i in range(n):
                s += x[i, j]
            mu = s / n
            v = 0.0
            for i in range(n):
                v += (x[i, j] - mu) ** 2
            sd = math.sqrt(v / n)
            for i in range(n):
                out[i, j] = (x[i, j] - mu) / sd
        return out

    @jit
    def jacobi(u0, steps):
        a = u0.copy()
        b = u0.copy()
        n, m = a.shape
        for _ in range(steps):
            for i in prange(1, n - 1):
                for j in range(1, m - 1):
                    b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
            a, b = b, a
        return a

    @jit
    def heat3d(u0, steps):
        a = u0.copy()
        b = u0.copy()
        n0, n1, n2 = a.shape
        for _ in range(steps):
            for i in prange(1, n0 - 1):
                for j in range(1, n1 - 1):
                    for k in range(1, n2 - 1):
                        c = a[i, j, k]
                        b[i, j, k] = c + 0.1 * (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k] + a[i, j + 1, k]
                                                + a[i, j, k - 1] + a[i, j, k + 1] - 6.0 * c)
            a, b = b, a
        return a

    @njit(inline="always")
    def _lap(inp, ii, jj, k):
        return 4.0 * inp[ii, jj, k] - (inp[ii + 1, jj, k] + inp[ii - 1, jj, k] + inp[ii, jj + 1, k] + inp[ii, jj - 1, k])

    @jit
    def hdiff(inp, coeff):
        I, J, K = coeff.shape
        out = np.empty_like(coeff)
        for i in prange(I):
            for j in range(J):
                for k in range(K):
                    c = inp[i + 2, j + 2, k]
                    l0 = _lap(inp, i + 2, j + 2, k)
                    fxp = _lap(inp, i + 3, j + 2, k) - l0
                    if fxp * (inp[i + 3, j + 2, k] - c) > 0:
                        fxp = 0.0
                    fxm = l0 - _lap(inp, i + 1, j + 2, k)
                    if fxm * (c - inp[i + 1, j + 2, k]) > 0:
                        fxm = 0.0
                    fyp = _lap(inp, i + 2, j + 3, k) - l0
                    if fyp * (inp[i + 2, j + 3, k] - c) > 0:
                        fyp = 0.0
                    fym = l0 - _lap(inp, i + 2, j + 1, k)
                    if fym * (c - inp[i + 2, j + 1, k]) > 0:
                        fym = 0.0
                    out[i, j, k] = c - coeff[i, j, k] * (fxp - fxm + fyp - fym)
        return out

    @jit
    def thomas(a, b, c, d):
        n, m = b.shape
        x = np.empty_like(d)
        for j in prange(m):
            cp = np.empty(n)
            dp = np.empty(n)
            cp[0] = c[0, j] / b[0, j]
            dp[0] = d[0, j] / b[0, j]
            for i in range(1, n):
                den = b[i, j] - a[i, j] * cp[i - 1]
                cp[i] = c[i, j] / den
                dp[i] = (d[i, j] - a[i, j] * dp[i - 1]) / den
            x[n - 1, j] = dp[n - 1]
            for i in range(n - 2, -1, -1):
                x[i, j] = dp[i] - cp[i] * x[i + 1, j]
        return x

    @jit
    def mlp(X, W1, b1, W2, b2):
        h = np.maximum(X @ W1 + b1, 0.0)
        z = h @ W2 + b2
        out = np.empty_like(z)
        for r in prange(z.shape[0]):
            mx = z[r].max()
            s = 0.0
            for k in range(z.shape[1]):
                out[r, k] = math.exp(z[r, k] - mx)
                s += out[r, k]
            for k in range(z.shape[1]):
                out[r, k] /= s
        return out

    @jit
    def nbody(pos, vel, mass, mask):
        n = pos.shape[0]
        acc = np.zeros((n, 3))
        for i in prange(n):
            a0 = a1 = a2 = 0.0
            for j in range(n):
                if mask[i, j]:
                    d0 = pos[j, 0] - pos[i, 0]
                    d1 = pos[j, 1] - pos[i, 1]
                    d2 = pos[j, 2] - pos[i, 2]
                    w = mass[j] * (d0 * d0 + d1 * d1 + d2 * d2 + 1e-3) ** -1.5
                    a0 += w * d0
                    a1 += w * d1
                    a2 += w * d2
            acc[i, 0], acc[i, 1], acc[i, 2] = a0, a1, a2
        v = vel + 0.01 * acc
        return pos + 0.01 * v, v

    @jit
    def cholesky(A):
        n = A.shape[0]
        L = np.zeros_like(A)
        for j in range(n):
            s = A[j, j]
            for k in range(j):
                s -= L[j, k] * L[j, k]
            L[j, j] = math.sqrt(s)
            for i in prange(j + 1, n):
                t = A[i, j]
                for k in range(j):
                    t -= L[i, k] * L[j, k]
                L[i, j] = t / L[j, j]
        return L

    @jit
    def lu(A0):
        A = A0.copy()
        n = A.shape[0]
        for k in range(n - 1):
            piv = A[k, k]
            for i in prange(k + 1, n):
                A[i, k] /= piv
                f = A[i, k]
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
        return A

    @jit
    def masked_mean(data, radius, r1, r2):
        npt = r1.shape[0]
        res = np.empty(npt)
        for i in prange(npt):
            s, c = 0.0, 0
            for k in range(data.shape[0]):
                if r1[i] <= radius[k] and radius[k] < r2[i]:
                    s += data[k]
                    c += 1
            res[i] = s / c if c else np.nan
        return res

    @njit
    def tiny(a, b):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i] + 1.0
        return s

    return {"outer_sum": outer_sum, "kmeans": kmeans, "bool_chain": chain, "haversine": haversine, "eos": eos,
            "clip_axpy": clip_axpy, "softmax": softmax, "normalise": normalise, "jacobi2d": jacobi,
            "heat3d": heat3d, "hdiff": hdiff, "thomas": thomas, "mlp": mlp, "nbody": nbody,
            "cholesky": cholesky, "lu": lu, "masked_mean": masked_mean, "tiny": tiny}
