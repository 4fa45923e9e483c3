"""Explicit finite differences for the 2-D heat equation on a meshgrid."""
import numpy as np

n = 21
x = np.linspace(0, 1, n)
X, Y = np.meshgrid(x, x, indexing="ij")
u = np.exp(-50 * ((X - 0.5) ** 2 + (Y - 0.5) ** 2))
dx = x[1] - x[0]
dt = 0.2 * dx ** 2
for step in range(40):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]) / dx ** 2
    u = u + dt * lap
print(np.round(u.max(), 8), np.unravel_index(np.argmax(u), u.shape))
total = np.trapezoid(np.trapezoid(u, x, axis=1), x)
print(round(float(total), 8))
gy, gx = np.gradient(u, dx)
print(np.round(np.hypot(gx, gy).max(), 6))
print(np.round(u[10, ::4], 6))
profile = np.interp([0.25, 0.33, 0.5], x, u[10])
print(np.round(profile, 8))
RESULT = {"u": u, "gx": gx, "profile": profile}
