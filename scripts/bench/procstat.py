"""Process-tree CPU time and RSS from /proc (Linux only). Shared by the bench helpers."""
import os

CLK_TCK = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def _stat_fields(pid):
    """Fields after the command name: index 0 is field 3 (state) of proc(5)."""
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    return text[text.rfind(")") + 2:].split()


def tree(pid):
    """pid and all its live descendants."""
    if not pid:
        return []
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry))
    result, todo = [], [int(pid)]
    while todo:
        p = todo.pop()
        if os.path.exists(f"/proc/{p}"):
            result.append(p)
            todo.extend(children.get(p, []))
    return result


def cpu_ticks(pids):
    """utime+stime of the processes plus cutime+cstime (their reaped children)."""
    total = 0
    for p in pids:
        fields = _stat_fields(p)
        if fields:
            total += sum(int(x) for x in fields[11:15])
    return total


def cpu_user_ticks(pids):
    """utime+cutime of the processes: the user-space part of cpu_ticks (the rest is the kernel's)."""
    total = 0
    for p in pids:
        fields = _stat_fields(p)
        if fields:
            total += int(fields[11]) + int(fields[13])
    return total


def rss_kib(pids):
    """Sum of VmRSS over the processes, KiB."""
    total = 0
    for p in pids:
        text = _read(f"/proc/{p}/status")
        if not text:
            continue
        for line in text.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
                break
    return total


def system_busy_ticks():
    """Busy jiffies of all CPUs together (everything but idle and iowait)."""
    return cpu_busy_ticks(None)[0]


def cpu_busy_ticks(cpu):
    """(busy, total) jiffies since boot of one CPU, or of all of them (cpu None), from /proc/stat."""
    name = "cpu" if cpu is None else f"cpu{cpu}"
    for line in _read("/proc/stat").splitlines():
        fields = line.split()
        if fields[0] == name:
            values = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
            return sum(values) - values[3] - values[4], sum(values)
    return 0, 0
