"""k-means clustering with broadcasting."""
import numpy as np

rng = np.random.default_rng(42)
centers_true = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
pts = np.concatenate([c + rng.normal(0, 0.7, size=(40, 2)) for c in centers_true])
k = 3
centers = pts[[0, 50, 100]].copy()
for it in range(10):
    d2 = ((pts[:, None, :] - centers[None, :, :]) ** 2).sum(axis=-1)
    labels = d2.argmin(axis=1)
    new = np.array([pts[labels == j].mean(axis=0) for j in range(k)])
    shift = np.linalg.norm(new - centers)
    centers = new
    if shift < 1e-9:
        break
print("iterations:", it + 1)
print(np.round(centers, 5))
print(np.bincount(labels, minlength=k))
inertia = d2[np.arange(len(pts)), labels].sum()
print(round(float(inertia), 5))
order = np.lexsort((centers[:, 1], centers[:, 0]))
print(order)
RESULT = {"centers": centers, "labels": labels, "inertia": inertia}
