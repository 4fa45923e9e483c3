"""Calibrating a sensor with polynomial fits (np.polynomial and np.polyfit)."""
import numpy as np
from numpy.polynomial import Polynomial, Chebyshev

x = np.linspace(0.0, 4.0, 21)
y = 0.5 * x**3 - 2.0 * x**2 + x + 3.0 + 0.01 * np.sin(7 * x)
p = Polynomial.fit(x, y, 3)
coef = p.convert().coef
print(np.round(coef, 6))
print(np.round(p(np.array([0.5, 1.5, 2.5])), 6))
c = Chebyshev.fit(x, y, 4)
print(np.round(c.convert(kind=Polynomial).coef, 5))
legacy = np.polyfit(x, y, 3)
print(np.round(legacy, 6))
print(np.round(np.polyval(legacy, 2.0), 6))
roots = np.sort_complex(np.roots([1.0, -6.0, 11.0, -6.0]))
print(roots)
d = np.polynomial.polynomial.polyder([3.0, 1.0, -2.0, 0.5])
i = np.polynomial.polynomial.polyint(d, k=3.0)
print(d, i)
resid = y - p(x)
print(f"rms={np.sqrt(np.mean(resid**2)):.3e}")
RESULT = {"coef": coef, "legacy": legacy, "roots": roots, "d": d, "i": i, "resid": resid}
