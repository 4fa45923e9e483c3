"""Stationary distribution of a weather Markov chain."""
import numpy as np

P = np.array([[0.7, 0.2, 0.1],
              [0.3, 0.4, 0.3],
              [0.2, 0.3, 0.5]])
print(P.sum(axis=1))
P50 = np.linalg.matrix_power(P, 50)
print(np.round(P50, 8))
w, v = np.linalg.eig(P.T)
i = np.argmin(np.abs(w - 1))
pi = np.real(v[:, i] / v[:, i].sum())
print(np.round(pi, 8), np.allclose(pi @ P, pi))
A = np.vstack([P.T - np.eye(3), np.ones(3)])
b = np.r_[np.zeros(3), 1.0]
pi2 = np.linalg.lstsq(A, b, rcond=None)[0]
print(np.allclose(pi, pi2))
state = np.array([1.0, 0.0, 0.0])
traj = [state]
for _ in range(5):
    state = state @ P
    traj.append(state)
traj = np.array(traj)
print(np.round(traj, 5))
print(np.round(np.sort(np.abs(w))[::-1], 8))
RESULT = {"P50": P50, "pi": pi, "traj": traj}
