"""Complex arithmetic and scalar loops: a contour-integral eigenvalue filter (complex
linalg.solve in a loop over quadrature points), an autosort radix-2 FFT starting from a
complex DFT matrix product, and a CRC-16 computed byte by byte."""
import numpy as np

from . import program


def _contour(n, rng):
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    V = rng.standard_normal((n, 4))
    return A, V, 16


@program(_contour, tiny=4, S=150, M=400)
def contour_integral(A, V, npts):
    """Sum over quadrature points z_k on a circle of z_k^j (z_k I - A)^{-1} V, j = 0, 1; the
    points inside the unit disc are counted with abs(z) < 1."""
    n = A.shape[0]
    S0 = np.zeros((n, V.shape[1]), np.complex128)
    S1 = np.zeros((n, V.shape[1]), np.complex128)
    inside = 0
    for k in range(npts):
        theta = 2 * np.pi * (k + 0.5) / npts
        z = 0.8 * np.exp(1j * theta)
        w = 0.8 * np.exp(1j * theta) / npts
        Y = np.linalg.solve(z * np.eye(n) - A, V)
        S0 += w * Y
        S1 += w * np.power(z, 1) * Y
        if abs(z) < 1:
            inside += 1
    return S0, S1, inside


def _signal(n, rng):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n),)


@program(_signal, tiny=64, S=2**14, M=2**17)
def fft_autosort(x):
    """Radix-2 FFT without bit reversal (autosort, as Stockham's): 16-point DFTs of the
    decimated sequences as one complex matrix product, then butterfly stages that double
    the transform length, each combining the even and odd halves with twiddle factors."""
    n = x.shape[0]
    b = min(n, 16)
    k = np.arange(b)
    dft = np.exp(-2j * np.pi * k[:, None] * k[None, :] / b)
    X = dft @ x.reshape(b, -1)
    while X.shape[0] < n:
        half = X.shape[1] // 2
        even, odd = X[:, :half], X[:, half:]
        tw = np.exp(-1j * np.pi * np.arange(X.shape[0]) / X.shape[0])[:, None]
        X = np.concatenate([even + tw * odd, even - tw * odd])
    return X.ravel()


def _bytes(n, rng):
    return (rng.integers(0, 256, n).astype(np.uint8),)


@program(_bytes, tiny=8, S=10_000, M=100_000)
def crc16(data):
    """CRC-16/CCITT over a byte array, one byte and one bit at a time (scalar code)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= int(byte) << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
    return np.uint16(crc)
