"""Time-step stencil loops with in-place slice updates: Jacobi 1-D/2-D, heat 3-D, FDTD 2-D,
Gauss-Seidel 2-D, ADI, and a lid-driven cavity-flow solver with boundary writes."""
import numpy as np

from . import program

STEPS = 20


def _line(n, rng):
    return rng.random(n), rng.random(n)


@program(_line, tiny=8, S=30_000, M=300_000)
def jacobi_1d(A, B):
    A, B = A.copy(), B.copy()
    for _ in range(STEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def _grid(n, rng):
    return rng.random((n, n)), rng.random((n, n))


@program(_grid, tiny=6, S=150, M=450)
def jacobi_2d(A, B):
    A, B = A.copy(), B.copy()
    for _ in range(STEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A, B


def _cube(n, rng):
    return rng.random((n, n, n)), rng.random((n, n, n))


@program(_cube, tiny=5, S=28, M=60)
def heat_3d(A, B):
    A, B = A.copy(), B.copy()
    for _ in range(STEPS // 2):
        for src, dst in ((A, B), (B, A)):
            c = src[1:-1, 1:-1, 1:-1]
            dst[1:-1, 1:-1, 1:-1] = (
                0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
                + c)
    return A, B


def _fields(n, rng):
    return rng.random((n, n)), rng.random((n, n)), rng.random((n, n)), rng.random(STEPS)


@program(_fields, tiny=6, S=150, M=450)
def fdtd_2d(ex, ey, hz, fict):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


def _one_grid(n, rng):
    return (rng.random((n, n)),)


@program(_one_grid, tiny=5, S=110, M=350)
def seidel_2d(A):
    """Gauss-Seidel sweeps: each row uses the rows already updated in this sweep, and
    within a row a Python loop carries the left neighbour."""
    A = A.copy()
    n = A.shape[0]
    for _ in range(2):
        for i in range(1, n - 1):
            A[i, 1:-1] = (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
                          + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, n - 1):
                A[i, j] = (A[i, j] + A[i, j - 1]) / 9.0
    return A


def _adi(n, rng):
    return (rng.random((n, n)),)


@program(_adi, tiny=5, S=120, M=400)
def adi(u):
    """Alternating-direction implicit sweeps: tridiagonal solves along columns, then rows,
    with the forward elimination and back substitution as loops over grid lines."""
    u = u.copy()
    n = u.shape[0]
    a, b, c = -0.5, 2.0, -0.5
    p = np.zeros((n, n))
    q = np.zeros((n, n))
    v = np.zeros((n, n))
    for _ in range(2):
        # Column sweep: each line j of v solves a tridiagonal system along i, vectorised over rows.
        v[0, 1:-1] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = v[0, 1:-1]
        for j in range(1, n - 1):
            p[1:-1, j] = -c / (a * p[1:-1, j - 1] + b)
            q[1:-1, j] = (u[j, 1:-1] - a * q[1:-1, j - 1]) / (a * p[1:-1, j - 1] + b)
        v[-1, 1:-1] = 1.0
        for j in range(n - 2, 0, -1):
            v[j, 1:-1] = p[1:-1, j] * v[j + 1, 1:-1] + q[1:-1, j]
        # Row sweep.
        u[1:-1, 0] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = u[1:-1, 0]
        for j in range(1, n - 1):
            p[1:-1, j] = -c / (a * p[1:-1, j - 1] + b)
            q[1:-1, j] = (v[1:-1, j] - a * q[1:-1, j - 1]) / (a * p[1:-1, j - 1] + b)
        u[1:-1, -1] = 1.0
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = p[1:-1, j] * u[1:-1, j + 1] + q[1:-1, j]
    return u


def _cavity(n, rng):
    return np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))


@program(_cavity, tiny=6, S=161, M=501)
def cavity_flow(u, v, p):
    """Lid-driven cavity (Navier-Stokes, explicit): a pressure Poisson loop nested in the
    time loop, with boundary conditions written into the edges each step."""
    u, v, p = u.copy(), v.copy(), p.copy()
    n = u.shape[0]
    dx = dy = 2.0 / (n - 1)
    dt, rho, nu = 0.001, 1.0, 0.1
    b = np.zeros_like(p)
    for _ in range(10):
        un, vn = u.copy(), v.copy()
        b[1:-1, 1:-1] = rho * (1.0 / dt * ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx) + (v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dy))
                               - ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx)) ** 2
                               - 2 * ((u[2:, 1:-1] - u[:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, :-2]) / (2 * dx))
                               - ((v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dy)) ** 2)
        for _ in range(10):
            pn = p.copy()
            p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, :-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[:-2, 1:-1]) * dx ** 2)
                             / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
            p[:, -1] = p[:, -2]
            p[0, :] = p[1, :]
            p[:, 0] = p[:, 1]
            p[-1, :] = 0
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, :-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, :-2])
                         + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, :-2])
                                 + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, :-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[:-2, 1:-1])
                         + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, :-2])
                                 + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p
