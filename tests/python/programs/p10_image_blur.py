"""Blurring, thresholding and histogram of a synthetic 8-bit image."""
import numpy as np

yy, xx = np.mgrid[0:32, 0:48]
img = ((np.sin(xx / 5.0) + np.cos(yy / 4.0) + 2.0) * 60).astype(np.uint8)
img[10:14, 20:30] = 255
print(img.dtype, img.shape, img.min(), img.max())
padded = np.pad(img.astype(np.float32), 1, mode="edge")
kernel = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float32) / 16
blur = np.zeros(img.shape, dtype=np.float32)
for dy in range(3):
    for dx in range(3):
        blur += kernel[dy, dx] * padded[dy:dy + img.shape[0], dx:dx + img.shape[1]]
blur8 = np.clip(np.rint(blur), 0, 255).astype(np.uint8)
print(blur8[9:15, 18:22])
hist, edges = np.histogram(blur8, bins=8, range=(0, 256))
print(hist, edges)
mask = blur8 > 200
print(mask.sum(), np.argwhere(mask)[:3])
gx = np.diff(img.astype(np.int16), axis=1)
print(np.abs(gx).max(), gx.dtype)
flipped = img[::-1, ::2]
print(flipped.strides, flipped[:2, :5])
rgb = np.stack([img, blur8, 255 - img], axis=-1)
gray = (rgb @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)
print(gray[0, :8], gray.dtype)
RESULT = {"blur": blur8, "hist": hist, "gray": gray, "flipped": flipped}
