"""Ordinary least squares with several linear-algebra routes."""
import numpy as np

rng = np.random.default_rng(5)
n = 50
X = np.column_stack([np.ones(n), rng.uniform(0, 10, n), rng.uniform(-5, 5, n)])
beta_true = np.array([1.5, -0.7, 2.0])
y = X @ beta_true + rng.normal(0, 0.1, n)
beta, res, rank, sv = np.linalg.lstsq(X, y, rcond=None)
print(np.round(beta, 6), rank, np.round(sv, 5))
normal = np.linalg.solve(X.T @ X, X.T @ y)
print(np.allclose(beta, normal))
Q, R = np.linalg.qr(X)
beta_qr = np.linalg.solve(R, Q.T @ y)
print(np.round(beta_qr - beta, 10) + 0.0)  # + 0.0: a difference of ~1e-16 (LAPACK last bits) rounds to either zero
inv = np.linalg.inv(X.T @ X)
se = np.sqrt(np.diag(inv) * res[0] / (n - 3))
print(np.round(se, 6))
print(np.round(np.linalg.det(X.T @ X), 3), np.round(np.linalg.cond(X), 5))
print(np.round(np.linalg.norm(y - X @ beta), 6), np.linalg.matrix_rank(X))
pinv = np.linalg.pinv(X)
print(np.round(pinv @ y - beta, 9) + 0.0)
RESULT = {"beta": beta, "se": se, "Q": Q, "R": R, "inv": inv}
