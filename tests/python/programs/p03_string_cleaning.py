"""Cleaning a column of free-text names with string arrays."""
import numpy as np

raw = np.array(["  Alice ", "bob", "CHARLIE  ", " dave", "Eve", "bob "])
clean = np.char.strip(raw)
print(clean, clean.dtype)
title = np.char.title(clean)
print(title)
lengths = np.char.str_len(clean)
print(lengths, lengths.dtype)
print(np.char.startswith(np.char.lower(clean), "b"))
print(np.char.find(title, "e"))
uniq, counts = np.unique(np.char.lower(clean), return_counts=True)
print(dict(zip(uniq.tolist(), counts.tolist())))
tags = np.char.add(np.char.upper(np.char.ljust(clean, 8, "_")), "|")
print(tags)
codes = np.strings.zfill(lengths.astype(str), 3)
print(codes, codes == "003")
order = np.argsort(title)
print(title[order], np.searchsorted(title[order], "Dave"))
RESULT = {"lengths": lengths, "counts": counts, "order": order, "tags": tags}
