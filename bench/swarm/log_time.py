"""The time of day of a peer's log line, shared by the swarm benches' log readers
(churn_check.py, slow_report.py)."""
import re

STAMP = re.compile(r"^\[(\d\d):(\d\d):(\d\d)\.(\d+)\]")


def seconds(line):
    """Seconds since midnight of the line's stamp ("[HH:MM:SS.mmm] ..."), None without one."""
    m = STAMP.match(line)
    return None if not m else int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3]) + float("0." + m[4])
