"""Loops with boolean masks and shrinking arrays: a radial profile computed ring by ring,
Mandelbrot iterating only the points still bounded, an n-body step with a distance mask, and
a 2-D histogram built from np.histogram of one axis per bin of the other."""
import numpy as np

from . import program


def _image(n, rng):
    data = rng.random((n, n))
    y, x = np.indices(data.shape)
    return data, x.astype(np.float64), y.astype(np.float64), max(4, n // 16)


@program(_image, tiny=16, S=700, M=2000)
def radial_profile(data, x, y, nbins):
    """Mean of the pixels in each ring around the centre: one boolean mask per ring."""
    cy, cx = (data.shape[0] - 1) / 2.0, (data.shape[1] - 1) / 2.0
    radius = np.sqrt((x - cx) ** 2 + (y - cy) ** 2)
    edges = np.linspace(0, radius.max() + 1e-9, nbins + 1)
    res = np.zeros(nbins)
    for i in range(nbins):
        r1, r2 = edges[i], edges[i + 1]
        res[i] = data[(r1 <= radius) & (radius < r2)].mean()
    return res


def _plane(n, rng):
    xs = np.linspace(-2.0, 0.6, n)
    ys = np.linspace(-1.2, 1.2, n)
    return (xs[None, :] + 1j * ys[:, None]).ravel(), 40


@program(_plane, tiny=8, S=250, M=800)
def mandelbrot(c, maxiter):
    """Escape counts; each iteration works only on the points that have not escaped yet."""
    counts = np.zeros(c.shape, np.int64)
    z = np.zeros_like(c)
    idx = np.arange(c.shape[0])
    cc = c.copy()
    for it in range(maxiter):
        z = z * z + cc
        alive = np.abs(z) <= 2.0
        counts[idx[~alive]] = it
        z, cc, idx = z[alive], cc[alive], idx[alive]
        if idx.shape[0] == 0:
            break
    counts[idx] = maxiter
    return counts


def _bodies(n, rng):
    return rng.random((n, 3)), rng.random((n, 3)) - 0.5, rng.random(n) + 0.5


@program(_bodies, tiny=6, S=150, M=450)
def nbody(pos, vel, mass):
    """A few leapfrog steps of softened gravity; pairs closer than a cutoff get no force."""
    pos, vel = pos.copy(), vel.copy()
    dt, soft, cutoff = 0.01, 0.1, 0.02
    for _ in range(3):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = np.sum(d * d, axis=-1) + soft ** 2
        inv = r2 ** -1.5
        inv[r2 < cutoff ** 2 + soft ** 2] = 0.0
        acc = np.einsum("ij,ijk->ik", inv * mass[None, :], d)
        vel += acc * dt
        pos += vel * dt
    kinetic = 0.5 * np.sum(mass * np.sum(vel ** 2, axis=1))
    return pos, vel, kinetic


def _points(n, rng):
    return rng.standard_normal(n), rng.standard_normal(n), 20


@program(_points, tiny=50, S=50_000, M=500_000)
def histogram2d_by_rows(x, y, nbins):
    """A 2-D histogram: np.histogram of y for the points of each bin of x."""
    xe = np.linspace(x.min(), x.max(), nbins + 1)
    ye = np.linspace(y.min(), y.max(), nbins + 1)
    H = np.zeros((nbins, nbins), np.int64)
    which = np.clip(np.searchsorted(xe, x, side="right") - 1, 0, nbins - 1)
    for i in range(nbins):
        H[i], _ = np.histogram(y[which == i], bins=ye)
    return H
