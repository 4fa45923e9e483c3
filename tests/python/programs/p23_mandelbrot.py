"""Mandelbrot escape times on a complex grid."""
import numpy as np

re = np.linspace(-2.0, 0.6, 40)
im = np.linspace(-1.2, 1.2, 24)
c = re[None, :] + 1j * im[:, None]
z = np.zeros_like(c)
escape = np.full(c.shape, 30, dtype=np.int32)
for i in range(30):
    active = escape == 30
    z[active] = z[active] ** 2 + c[active]
    escaped = active & (np.abs(z) > 2)
    escape[escaped] = i
print(c.dtype, escape.dtype, np.bincount(escape.ravel())[:10])
chars = np.array(list(" .:-=+*#%@"))
for row in escape[::3]:
    print("".join(chars[np.minimum(row, 29) // 3]))
print(np.round(np.angle(c[0, :4]), 6), np.round(np.abs(c[0, :4]), 6))
c64 = c.astype(np.complex64)
print(c64.dtype, np.round(np.conj(c64[1, :2]), 4), (c64 * c64).real.dtype)
RESULT = {"escape": escape, "c64": c64 * c64}
