"""Round-tripping tables through text and bytes (savetxt/loadtxt/genfromtxt/frombuffer)."""
import io
import numpy as np

table = np.arange(12, dtype=np.float64).reshape(4, 3) * 1.5
buf = io.StringIO()
np.savetxt(buf, table, fmt="%.3f", delimiter=",", header="a,b,c")
text = buf.getvalue()
print(text)
back = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1)
print(back, np.array_equal(back, table))
csv = "name,age,score\nann,31,88.5\nben,27,92.0\ncai,45,\n"
rec = np.genfromtxt(io.StringIO(csv), delimiter=",", names=True, dtype=None, encoding="utf-8")
print(rec.dtype.names, rec["age"], rec["score"])
raw = table.astype(np.float32).tobytes()
again = np.frombuffer(raw, dtype=np.float32).reshape(4, 3)
print(again.dtype, again[1], again.flags.writeable)
bio = io.BytesIO()
np.save(bio, table)
bio.seek(0)
loaded = np.load(bio)
print(loaded.sum(), loaded.dtype)
ints = np.fromstring("1 2 3 4", dtype=np.int64, sep=" ")
print(ints, ints.dtype)
RESULT = {"back": back, "again": again, "loaded": loaded, "ints": ints, "age": rec["age"]}
