"""The night folders of rankings-fetch-firestore, without the emulator: who may fetch into DIR,
one fetch at a time, current checked first, a stopped or killed run leaving nothing the next
one trips on, the deadline, clean-up that never fails a night and touches only this hook's
folders, unique night names, and a full disk.

    python3 Tests/firestore-hooks/nights.py [HOOKS]     default: jobs/firestore

Two kinds of check: the shipped hook run as a process (Firestore stood in for by a closed port,
which refuses at once, or a socket that accepts and never answers, as a stopped server does), and
the module rankings_nights.py driven in a process of its own with a fetch written here (the
successful nights, which need no Firestore to reach clean-up). Run as root: the checks need
another user (nobody) and a small tmpfs for the full disk.

Prints `ok`/`FAIL` per check, then `N passed, M failed`; exits 1 on any failure.
"""
import fcntl
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOOKS = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--drive" else
                        (sys.argv[1] if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(__file__), "..", "..", "jobs", "firestore")))
HOOK = os.path.join(HOOKS, "rankings-fetch-firestore")
NOBODY = pwd.getpwnam("nobody")
passed = failed = 0


# --- driving the module with a fetch of our own ---------------------------------------------

def drive(hooks, directory, plan):
    """In a process of its own (run as `nights.py --drive HOOKS DIR PLAN`): one run of
    rankings_nights.Run whose fetch does what PLAN (JSON) says; prints the status as the hook
    would exit with it."""
    sys.path.insert(0, hooks)
    sys.dont_write_bytecode = True
    import rankings_firestore as fs
    import rankings_nights as nights
    plan = json.loads(plan)
    environ = dict(plan.get("environ", {}))
    try:
        with nights.Run("rankings-fetch-firestore", directory, environ) as night:
            night.start()
            with open(os.path.join(night.folder, "rating_events.ndjson"), "w") as out:
                out.write(plan.get("content", "{}\n"))
            if plan.get("fill"):
                # Files until the file system has no inode left: the commit's link then cannot be made.
                number = 0
                try:
                    while True:
                        open(os.path.join(night.folder, f"f{number}"), "w").close()
                        number += 1
                except OSError:
                    pass
            night.record = {"mode": "full", "documents_read": 1, "snapshot_documents": 1, "drift_documents": 0}
            night.commit(int(plan.get("keep", 7)))
        status = 0
    except fs.Failure as failure:
        fs.say("rankings-fetch-firestore", f"error: {failure}")
        status = failure.status
    print(status)


def run_driven(directory, plan, user=None):
    command = [sys.executable, os.path.abspath(__file__), "--drive", HOOKS, directory, json.dumps(plan)]
    if user:
        command = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"] + command
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"the driver failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return int(done.stdout.strip().splitlines()[-1]), done.stderr


# --- helpers ---------------------------------------------------------------------------------

def check(name, function):
    global passed, failed
    work = tempfile.mkdtemp(prefix="rankings-nights.")
    os.chmod(work, 0o755)
    try:
        function(work)
        passed += 1
        print(f"ok   {name}", flush=True)
    except Exception as problem:  # noqa: BLE001 (any failure is this check's)
        failed += 1
        print(f"FAIL {name}: {problem}", flush=True)
    finally:
        subprocess.run(["chattr", "-R", "-i", work], stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(work, ignore_errors=True)


def expect(what, actual, expected):
    if actual != expected:
        raise AssertionError(f"{what}: got {actual!r}, expected {expected!r}")


def expect_in(what, needle, haystack):
    if needle not in haystack:
        raise AssertionError(f"{what}: {needle!r} not in {haystack!r}")


def closed_port():
    """A port nothing listens on: every call is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def hook_env(port, **settings):
    return dict(os.environ, RANKINGS_FIRESTORE_PROJECT="demo-nights", FIRESTORE_EMULATOR_HOST=f"127.0.0.1:{port}",
                RANKINGS_FIRESTORE_ATTEMPTS="1", RANKINGS_FIRESTORE_BACKOFF_SECONDS="0.1", **settings)


def run_hook(directory, port, user=None, **settings):
    command = [HOOK, directory]
    if user:
        command = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"] + command
    return subprocess.run(command, env=hook_env(port, **settings), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def listing(directory):
    """Every entry of DIR with what it is: the bytes of a link, a folder's entries, a file's bytes."""
    found = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.islink(path):
            found[name] = ("link", os.readlink(path))
        elif os.path.isdir(path):
            found[name] = ("folder", sorted(os.listdir(path)))
        else:
            with open(path, "rb") as data:
                found[name] = ("file", data.read())
    return found


def seed(directory, nights_, current):
    """Nights made as a successful run leaves them, and current pointing at one."""
    os.makedirs(directory, exist_ok=True)
    for name in nights_:
        os.mkdir(os.path.join(directory, name))
        with open(os.path.join(directory, name, "rating_events.ndjson"), "w") as out:
            out.write(f"{name}\n")
    if current:
        os.symlink(current, os.path.join(directory, "current"))


def metric(metrics_dir, name):
    with open(os.path.join(metrics_dir, "rankings-fetch.prom")) as text:
        for line in text:
            if line.split(" ")[0] == name:
                return line.split()[1]
    return None


def partials(directory):
    return [n for n in os.listdir(directory) if n.startswith(".partial-")]


class Silent:
    """A server that accepts connections (the kernel does, into the backlog) and never answers:
    every call waits for its timeout, as against a stopped Firestore."""

    def __enter__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]
        return self

    def __exit__(self, *_):
        self.socket.close()


def wait_for(condition, seconds=60):
    """A bound, not a timing assertion: polls until condition() holds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"still false after {seconds}s: {condition.__doc__ or condition}")


# --- the hook as a process -------------------------------------------------------------------

def root_is_refused(work):
    directory = os.path.join(work, "firestore")
    seed(directory, ["20261101T050000Z"], "20261101T050000Z")
    subprocess.run(["chown", "-R", "nobody:nogroup", work], check=True)
    before = listing(directory)
    done = run_hook(directory, closed_port())
    expect("exit status", done.returncode, 64)
    expect_in("message", f"running as root, but {directory} belongs to nobody", done.stderr)
    expect_in("message", "sudo -u nobody", done.stderr)
    expect("DIR", listing(directory), before)
    # A DIR not there yet counts its parent's owner.
    done = run_hook(os.path.join(work, "new", "firestore"), closed_port())
    expect("exit status, new DIR", done.returncode, 64)
    expect("nothing made", os.path.exists(os.path.join(work, "new")), False)


def a_second_fetch_is_refused_while_one_holds_the_lock(work):
    directory = os.path.join(work, "firestore")
    seed(directory, ["20261101T050000Z"], "20261101T050000Z")
    lock = os.open(os.path.join(directory, ".rankings-fetch.lock"), os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    before = listing(directory)
    with Silent() as silent:
        done = run_hook(directory, silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="30")
    os.close(lock)
    expect("exit status", done.returncode, 75)
    expect_in("message", f"another fetch holds {directory}/.rankings-fetch.lock", done.stderr)
    expect("DIR", listing(directory), before)


def current_not_a_link_is_refused_before_fetching(work):
    directory = os.path.join(work, "firestore")
    seed(directory, ["20261101T050000Z"], None)
    os.mkdir(os.path.join(directory, "current"))
    before = listing(directory)
    # Firestore never answers: a fetch that started would wait, so refusing at once shows it did not.
    with Silent() as silent:
        done = run_hook(directory, silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600")
    expect("exit status", done.returncode, 73)
    expect_in("message", f"{directory}/current exists and is not a symbolic link", done.stderr)
    before[".rankings-fetch.lock"] = ("file", b"")
    expect("DIR", listing(directory), before)


def stopped_run_removes_its_partial_folder(work):
    directory, metrics = os.path.join(work, "firestore"), os.path.join(work, "metrics")
    os.mkdir(metrics)
    seed(directory, ["20261101T050000Z"], "20261101T050000Z")
    before = listing(directory)
    with Silent() as silent:
        process = subprocess.Popen([HOOK, directory], env=hook_env(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600",
                                                                    RANKINGS_METRICS=os.path.join(metrics, "rankings.prom")),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: partials(directory))
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    expect("exit status", process.returncode, 143)
    expect_in("message", "stopped by SIGTERM", stderr)
    before[".rankings-fetch.lock"] = ("file", b"")
    expect("DIR", listing(directory), before)
    expect("metric", metric(metrics, "rankings_fetch_last_run_exit_status"), "143")


def killed_runs_partial_is_removed_by_the_next_run(work):
    directory = os.path.join(work, "firestore")
    seed(directory, ["20261101T050000Z"], "20261101T050000Z")
    before = listing(directory)
    with Silent() as silent:
        process = subprocess.Popen([HOOK, directory], env=hook_env(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: partials(directory))
        finally:
            process.kill()
            process.wait()
    expect("a partial folder left by SIGKILL", len(partials(directory)), 1)
    # The next run fails too (nothing answers), but only after it removed the dead folder.
    done = run_hook(directory, closed_port())
    expect("next run's exit status", done.returncode, 69)
    before[".rankings-fetch.lock"] = ("file", b"")
    expect("DIR", listing(directory), before)


def the_deadline_ends_a_run_that_hangs(work):
    directory = os.path.join(work, "firestore")
    seed(directory, ["20261101T050000Z"], "20261101T050000Z")
    before = listing(directory)
    with Silent() as silent:
        done = run_hook(directory, silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600",
                        RANKINGS_FIRESTORE_DEADLINE_SECONDS="1")
    expect("exit status", done.returncode, 69)
    expect_in("message", "did not end within RANKINGS_FIRESTORE_DEADLINE_SECONDS (1 s)", done.stderr)
    expect("no traceback", "Traceback" in done.stderr, False)
    before[".rankings-fetch.lock"] = ("file", b"")
    expect("DIR", listing(directory), before)


def a_bad_deadline_is_a_setting_error(work):
    done = run_hook(os.path.join(work, "firestore"), closed_port(), RANKINGS_FIRESTORE_DEADLINE_SECONDS="soon")
    expect("exit status", done.returncode, 78)
    expect_in("message", "RANKINGS_FIRESTORE_DEADLINE_SECONDS must be a number", done.stderr)


# --- the module driven with a fetch of our own -----------------------------------------------

def prune_leaves_alone_what_it_did_not_make(work):
    """Old nights go; a symbolic link or a file with a night's name, a night folder another user
    (root, running the hook by hand) made, and what a link points at all stay; a night that
    cannot be removed is a warning and a metric, and the night still succeeds (0)."""
    directory, metrics, outside = os.path.join(work, "firestore"), os.path.join(work, "metrics"), os.path.join(work, "outside")
    os.mkdir(metrics)
    os.mkdir(outside)
    with open(os.path.join(outside, "keep-me"), "w") as out:
        out.write("not a night\n")
    seed(directory, ["20261101T050000Z", "20261102T050000Z", "20261103T050000.000001Z"], "20261103T050000.000001Z")
    os.symlink(outside, os.path.join(directory, "20261001T050000Z"))
    with open(os.path.join(directory, "20261002T050000Z"), "w") as out:
        out.write("a file\n")
    # An old night with something the job's user cannot delete in it (root's, in a folder of root's).
    stuck = os.path.join(directory, "20261102T050000Z", "root-made")
    os.mkdir(stuck)
    open(os.path.join(stuck, "file"), "w").close()
    subprocess.run(["chown", "-R", "nobody:nogroup", directory, metrics], check=True)
    subprocess.run(["chown", "-R", "root:root", stuck], check=True)
    root_night = os.path.join(directory, "20261003T050000Z")
    os.mkdir(root_night)
    outside_before, root_night_before = listing(outside), listing(root_night)

    status, stderr = run_driven(directory, {"keep": 2, "environ": {"RANKINGS_METRICS": os.path.join(metrics, "rankings.prom")}},
                                user=NOBODY)
    expect("exit status", status, 0)
    after = listing(directory)
    new = os.readlink(os.path.join(directory, "current"))
    expect("current is the new night", new > "20261103T050000.000001Z", True)
    expect("kept", sorted(n for n in after if n[0].isdigit()),
           sorted(["20261001T050000Z", "20261002T050000Z", "20261003T050000Z", "20261102T050000Z",
                   "20261103T050000.000001Z", new]))
    expect("link kept", after["20261001T050000Z"], ("link", outside))
    expect("file kept", after["20261002T050000Z"], ("file", b"a file\n"))
    expect("what the link names", listing(outside), outside_before)
    expect("root's night", listing(root_night), root_night_before)
    expect_in("warning", f"cannot remove an old night, {directory}/20261102T050000Z", stderr)
    expect_in("warning", f"left alone {directory}/20261001T050000Z: not a folder", stderr)
    expect_in("warning", f"left alone {root_night}: it belongs to root, not nobody", stderr)
    expect("prune errors metric", metric(metrics, "rankings_fetch_prune_errors"), "1")
    expect("exit status metric", metric(metrics, "rankings_fetch_last_run_exit_status"), "0")


def names_are_unique_within_a_second(work):
    directory = os.path.join(work, "firestore")
    names = []
    for _ in range(3):
        status, _ = run_driven(directory, {})
        expect("exit status", status, 0)
        names.append(os.readlink(os.path.join(directory, "current")))
    expect("three nights", sorted(n for n in os.listdir(directory) if n[0].isdigit()), names)
    expect("in time order, distinct", sorted(set(names)), names)
    for name in names:
        expect(f"{name}'s form", len(name), len("20261124T050000.123456Z"))


def a_full_disk_is_73_and_current_stays(work):
    """No inode left when the new current is being linked: 73 with the reason, the night's folder
    removed, current and the earlier night as they were."""
    directory = os.path.join(work, "firestore")
    os.mkdir(directory)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=64", "tmpfs", directory], check=True)
    try:
        seed(directory, ["20261101T050000Z"], "20261101T050000Z")
        before = listing(directory)
        status, stderr = run_driven(directory, {"fill": True})
        expect("exit status", status, 73)
        expect_in("message", "No space left on device", stderr)
        expect("no traceback", "Traceback" in stderr, False)
        before[".rankings-fetch.lock"] = ("file", b"")
        expect("DIR", listing(directory), before)
    finally:
        subprocess.run(["umount", directory], check=False)


def main():
    if os.geteuid() != 0:
        print("Tests/firestore-hooks/nights.py must run as root (another user, a tmpfs)", file=sys.stderr)
        sys.exit(77)
    check("root is refused (64, naming the user) where another user owns DIR, before anything is made",
          root_is_refused)
    check("a second fetch is refused (75) while another holds DIR's lock; DIR untouched",
          a_second_fetch_is_refused_while_one_holds_the_lock)
    check("current that is not a symbolic link is refused (73) before anything is fetched",
          current_not_a_link_is_refused_before_fetching)
    check("SIGTERM during the fetch: 143, the partial folder removed, current as it was, the metric says 143",
          stopped_run_removes_its_partial_folder)
    check("SIGKILL leaves a partial folder; the next run (holding the lock) removes it, even when it fails",
          killed_runs_partial_is_removed_by_the_next_run)
    check("RANKINGS_FIRESTORE_DEADLINE_SECONDS ends a hung fetch: 69, no traceback, DIR as it was",
          the_deadline_ends_a_run_that_hangs)
    check("a deadline that is not a number is 78", a_bad_deadline_is_a_setting_error)
    check("prune: 0 with a warning and rankings_fetch_prune_errors; links, files and other users' folders left alone",
          prune_leaves_alone_what_it_did_not_make)
    check("three nights in a row within a second get three names, in time order", names_are_unique_within_a_second)
    check("no space left while switching current: 73 with the reason, no traceback, DIR as it was",
          a_full_disk_is_73_and_current_stays)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--drive":
        drive(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
