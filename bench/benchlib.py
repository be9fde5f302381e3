"""What the benchmark scripts under bench/ share: run a command that prints JSON, and say the load.

A script imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import benchlib
Standard library only.
"""
import json
import os
import subprocess


def run_json(argv, env=None, timeout=1800):
    """Runs argv and returns its standard output parsed as JSON; a failure raises RuntimeError
    naming the command, its exit status and its standard error."""
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def load_average():
    """The 1-minute load average, as the results record it before and after a run."""
    return os.getloadavg()
