"""The scripts' checks: one line per check (`ok   ...` or `FAIL ...`, with a detail where it is
evidence), then `N passed, M failed` and the exit status."""
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
