"""Monte Carlo estimates with a seeded Generator."""
import numpy as np

rng = np.random.default_rng(2024)
pts = rng.random((20000, 2))
inside = (pts ** 2).sum(axis=1) <= 1.0
pi_est = 4 * inside.mean()
print(f"pi ~ {pi_est:.4f}")
walks = rng.choice([-1, 1], size=(200, 100)).cumsum(axis=1)
print(walks.dtype, walks[:, -1].mean(), np.abs(walks).max())
first_hit = np.argmax(np.abs(walks) >= 10, axis=1)
print(np.bincount(first_hit)[:12])
perm = rng.permutation(10)
print(perm)
samples = rng.normal(3.0, 2.0, size=5000)
print(np.round([samples.mean(), samples.std()], 2))
boot = rng.choice(samples, size=(100, 5000), replace=True).mean(axis=1)
print(np.round(np.percentile(boot, [2.5, 97.5]), 3))
np.random.seed(1)
legacy = np.random.rand(3)
print(legacy, np.random.randint(0, 10, size=4))
RESULT = {"inside": inside, "walks": walks, "boot": boot, "legacy": legacy, "perm": perm}
