"""Project schedule with datetime64/timedelta64 arithmetic and business days."""
import numpy as np

start = np.array(["2024-01-08", "2024-02-01", "2024-02-27", "2024-03-29"], dtype="datetime64[D]")
durations = np.array([10, 15, 3, 30], dtype="timedelta64[D]")
end = start + durations
print(end)
print((end - start).astype(int))
workdays = np.busday_count(start, end, holidays=["2024-02-19"])
print("workdays:", workdays, workdays.dtype)
due = np.busday_offset(start, 5, roll="forward")
print("due:", due)
months = start.astype("datetime64[M]")
print(months, np.unique(months))
stamps = np.arange("2024-03-10T00", "2024-03-10T06", dtype="datetime64[h]")
print(stamps, np.diff(stamps))
hours = (stamps - stamps[0]) / np.timedelta64(1, "h")
print(hours, hours.dtype)
weekday = (start.astype("datetime64[D]").view("int64") - 4) % 7
print("weekday:", weekday)
RESULT = {"end": end, "workdays": workdays, "hours": hours, "weekday": weekday}
