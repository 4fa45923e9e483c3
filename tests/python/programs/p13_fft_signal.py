"""Finding the tones in a noisy signal with the FFT."""
import numpy as np

fs = 256
t = np.arange(fs) / fs
rng = np.random.default_rng(2)
sig = np.sin(2 * np.pi * 12 * t) + 0.5 * np.sin(2 * np.pi * 40 * t) + 0.1 * rng.standard_normal(fs)
spec = np.fft.rfft(sig)
freqs = np.fft.rfftfreq(sig.size, d=1 / fs)
power = np.abs(spec) ** 2
peaks = freqs[np.argsort(power)[-2:]]
print(np.sort(peaks))
print(spec.dtype, spec.shape, freqs.dtype)
filtered = spec.copy()
filtered[freqs > 20] = 0
clean = np.fft.irfft(filtered, n=sig.size)
print(np.round(clean[:5], 6))
full = np.fft.fft(sig)
print(np.allclose(np.fft.ifft(full).real, sig))
print(np.fft.fftshift(np.fft.fftfreq(8, d=0.5)))
img = np.outer(np.hanning(8), np.hamming(8))
f2 = np.fft.fft2(img)
print(np.round(np.abs(f2[:2, :3]), 6))
RESULT = {"power": power, "clean": clean, "f2": f2, "peaks": np.sort(peaks)}
