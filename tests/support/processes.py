"""Processes seen through /proc (Linux): which run, who started them, and waiting for them
to be gone; for the tests that kill a parent and look for what it left behind."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every running process (zombies are not)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            found[int(entry.name)] = (int(parent), cmdline)
    return found


def descendants(pid: int) -> dict[int, str]:
    """pid -> command line of every running process ``pid`` started, at any depth."""
    procs = processes()
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, cmd) in procs.items():
            if ppid == parent and child not in out:
                out[child] = cmd
                todo.append(child)
    return out


def left_after(pids: Iterable[int], seconds: float) -> set[int]:
    """Those of ``pids`` still running once ``seconds`` have passed (or fewer, as soon as
    none is)."""
    wanted = set(pids)
    deadline = time.monotonic() + seconds
    while True:
        left = wanted & set(processes())
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)
