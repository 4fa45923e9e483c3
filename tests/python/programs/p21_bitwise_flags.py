"""Permission bit flags with unsigned integer bit operations."""
import numpy as np

READ, WRITE, EXEC, ADMIN = (np.uint8(1) << np.arange(4, dtype=np.uint8))
perms = np.array([0b0001, 0b0011, 0b0111, 0b1111, 0b0100, 0], dtype=np.uint8)
print(READ, WRITE, EXEC, ADMIN)
print((perms & WRITE) != 0)
granted = perms | EXEC
print(granted, np.bitwise_count(granted))
revoked = perms & ~np.uint8(ADMIN)
print(revoked, revoked.dtype)
bits = np.unpackbits(perms[:, None], axis=1)
print(bits)
print(np.packbits(bits, axis=1).ravel())
x = np.array([250, 251, 252], dtype=np.uint8)
print(x + np.uint8(10), (x.astype(np.int16) + 10))
print(np.left_shift(np.arange(5, dtype=np.int32), 3), np.right_shift(-16, np.arange(3)))
print(np.bitwise_xor.reduce(perms), np.bitwise_or.accumulate(perms))
print(np.binary_repr(13, width=8), np.base_repr(255, 16))
RESULT = {"granted": granted, "bits": bits, "revoked": revoked, "x": x + np.uint8(10)}
