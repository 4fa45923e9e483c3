"""JAX ports of the cases (bench/field/cases.py): jax.numpy with functional updates
(``x.at[...].set``) where the NumPy source writes in place. Integer arguments (time steps)
are static. Built with ``jax.jit``; float64 is enabled by the caller (jax_enable_x64)."""


def ports():
    import jax
    import jax.numpy as jnp

    def outer_sum(X, Y):
        return jnp.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))

    def kmeans(X, means):
        return jnp.argmin(jnp.linalg.norm(X - means[:, None], axis=2), axis=0)

    def chain(a, b):
        return a * b - 4.1 * a > 2.5 * b

    def haversine(lat1, lon1, lat2, lon2):
        dlat = lat2 - lat1
        dlon = lon2 - lon1
        a = jnp.sin(dlat / 2) ** 2 + jnp.cos(lat1) * jnp.cos(lat2) * jnp.sin(dlon / 2) ** 2
        return 2 * 6371.0 * jnp.arctan2(jnp.sqrt(a), jnp.sqrt(1 - a))

    def eos(T, S, p):
        rho_w = 999.84 + T * (6.79e-2 + T * (-9.09e-3 + T * (1.0e-4 + T * (-1.12e-6 + T * 6.5e-9))))
        rho_s = (S * (0.824 + T * (-4.09e-3 + T * (7.64e-5 + T * (-8.25e-7 + T * 5.39e-9))))
                 + S * jnp.sqrt(S) * (-5.72e-3 + T * (1.02e-4 - T * 1.65e-6)) + 4.83e-4 * S * S)
        K = (19652.2 + T * (148.4 + T * (-2.33 + T * (1.36e-2 - T * 5.16e-5)))
             + S * (54.67 + T * (-0.603 + T * (1.10e-2 - T * 6.17e-5)))
             + p * (3.24 + T * (1.44e-3 + T * (1.16e-4 - T * 5.78e-7))))
        return (rho_w + rho_s) / (1.0 - p / K)

    def clip_axpy(x, y):
        return jnp.clip(3 * x + y, -(1 << 20), 1 << 20)

    def softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def normalise(x):
        return (x - x.mean(axis=0)) / x.std(axis=0)

    def jacobi(u, steps):
        def body(_, u):
            return u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))
        return jax.lax.fori_loop(0, steps, body, u)

    def heat3d(u, steps):
        def body(_, u):
            c = u[1:-1, 1:-1, 1:-1]
            return u.at[1:-1, 1:-1, 1:-1].set(c + 0.1 * (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1]
                                                          + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] - 6.0 * c))
        return jax.lax.fori_loop(0, steps, body, u)

    def hdiff(inp, coeff):
        I, J = coeff.shape[0], coeff.shape[1]
        lap = 4.0 * inp[1:I + 3, 1:J + 3] - (inp[2:I + 4, 1:J + 3] + inp[0:I + 2, 1:J + 3]
                                             + inp[1:I + 3, 2:J + 4] + inp[1:I + 3, 0:J + 2])
        flx = lap[1:, 1:-1] - lap[:-1, 1:-1]
        flx = jnp.where(flx * (inp[2:I + 3, 2:J + 2] - inp[1:I + 2, 2:J + 2]) > 0, 0.0, flx)
        fly = lap[1:-1, 1:] - lap[1:-1, :-1]
        fly = jnp.where(fly * (inp[2:I + 2, 2:J + 3] - inp[2:I + 2, 1:J + 2]) > 0, 0.0, fly)
        return inp[2:I + 2, 2:J + 2] - coeff * (flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1])

    def thomas(a, b, c, d):
        # The two sweeps as scans over rows (a JAX user's loop).
        def fwd(carry, row):
            cp_prev, dp_prev = carry
            ai, bi, ci, di = row
            den = bi - ai * cp_prev
            cp = ci / den
            dp = (di - ai * dp_prev) / den
            return (cp, dp), (cp, dp)
        z = jnp.zeros_like(b[0])
        _, (cp, dp) = jax.lax.scan(fwd, (z, z), (a, b, c, d))

        def bwd(x_next, row):
            cpi, dpi = row
            x = dpi - cpi * x_next
            return x, x
        _, xs = jax.lax.scan(bwd, z, (cp, dp), reverse=True)
        return xs

    def mlp(X, W1, b1, W2, b2):
        h = jnp.maximum(X @ W1 + b1, 0.0)
        z = h @ W2 + b2
        e = jnp.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def nbody(pos, vel, mass, mask):
        dx = pos[None, :, :] - pos[:, None, :]
        r2 = (dx * dx).sum(axis=2) + 1e-3
        w = jnp.where(mask, mass[None, :] * r2 ** -1.5, 0.0)
        acc = w @ pos - w.sum(axis=1)[:, None] * pos
        vel = vel + 0.01 * acc
        return pos + 0.01 * vel, vel

    def cholesky(A):
        # The same loop over rows, unrolled by the trace (static slice bounds).
        n = A.shape[0]
        L = jnp.zeros_like(A)
        for j in range(n):
            s = A[j, j] - L[j, :j] @ L[j, :j]
            L = L.at[j, j].set(jnp.sqrt(s))
            L = L.at[j + 1:, j].set((A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j])
        return L

    def lu(A):
        n = A.shape[0]
        for k in range(n - 1):
            A = A.at[k + 1:, k].set(A[k + 1:, k] / A[k, k])
            A = A.at[k + 1:, k + 1:].add(-jnp.outer(A[k + 1:, k], A[k, k + 1:]))
        return A

    def masked_mean(data, radius, r1, r2):
        # Boolean indexing has a data-dependent shape: a JAX user writes a masked sum.
        m = (r1[:, None] <= radius[None, :]) & (radius[None, :] < r2[:, None])
        return jnp.where(m, data[None, :], 0.0).sum(axis=1) / m.sum(axis=1)

    def tiny(a, b):
        return (a * b + 1.0).sum()

    static = {"jacobi2d": (1,), "heat3d": (1,)}
    fns = {"outer_sum": outer_sum, "kmeans": kmeans, "bool_chain": chain, "haversine": haversine, "eos": eos,
           "clip_axpy": clip_axpy, "softmax": softmax, "normalise": normalise, "jacobi2d": jacobi,
           "heat3d": heat3d, "hdiff": hdiff, "thomas": thomas, "mlp": mlp, "nbody": nbody,
           "cholesky": cholesky, "lu": lu, "masked_mean": masked_mean, "tiny": tiny}
    return {k: jax.jit(f, static_argnums=static.get(k, ())) for k, f in fns.items()}
