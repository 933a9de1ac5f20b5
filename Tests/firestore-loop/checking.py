"""The scripts' checks: one line per check (`ok   ...` or `FAIL ...`, with a detail where it is
evidence), then `N passed, M failed` and the exit status."""
import subprocess
import sys

passed = failed = 0


def check(name, function):
    global passed, failed
    try:
        detail = function()
        passed += 1
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
    except Exception as problem:  # noqa: BLE001 (any failure is this check's)
        failed += 1
        print(f"FAIL {name}: {problem}", flush=True)


def expect(what, actual, expected):
    if actual != expected:
        raise AssertionError(f"{what}: got {actual!r}, expected {expected!r}")


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def promtool_samples(path):
    """The metrics file at path as Prometheus reads it: `promtool check metrics` (Debian's
    prometheus, installed by run.sh) must print nothing and exit 0, as for the job's own file in
    Tests/metrics/run.sh. Returns its samples, name to value as written."""
    with open(path, "rb") as metrics:
        done = subprocess.run(["promtool", "check", "metrics"], stdin=metrics, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0 or done.stdout:
        raise AssertionError(f"promtool check metrics <{path}: exit {done.returncode}: {done.stdout.strip()}")
    with open(path, encoding="utf-8") as metrics:
        return dict(line.split() for line in metrics if not line.startswith("#"))
