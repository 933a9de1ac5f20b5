"""The night folders of rankings-fetch-firestore, without Firestore: who may fetch into DIR, one
fetch at a time, current checked first, a stopped or killed run leaving nothing the next one trips
on, the deadline, clean-up that never fails a night and touches only the fetch's own folders,
unique night names, and a full disk.

    python3 Tests/firestore-hooks/nights.py       (run.sh runs it; as root for every check)

Two kinds of check: the shipped hook run as a process (Firestore stood in for by a closed port,
which refuses at once, or a socket that accepts and never answers, as a stopped server does), and
the hook's own run() in a process of its own with its Firestore read replaced by a stand-in that
writes the snapshot (`nights.py --drive DIR PLAN`), so that successful nights reach the commit and
the clean-up. Checks that need another user (nobody) or a small tmpfs skip unless run as root."""
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

HERE = os.path.dirname(os.path.abspath(__file__))
NIGHT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "jobs", "night")
HOOK = os.path.join(NIGHT, "rankings-fetch-firestore")
FIRST = "20261101T050000Z"


def drive(directory, plan):
    """rankings-fetch-firestore's main() on DIR, its Firestore read a stand-in doing what PLAN
    (JSON) says; prints the status the hook exits with."""
    sys.path.insert(0, NIGHT)
    sys.dont_write_bytecode = True
    import types
    from rankings_night import fetch
    plan = json.loads(plan)

    class StandIn:
        def __init__(self, settings, folder, previous_folder, previous):
            self.folder = folder
            self.firestore = types.SimpleNamespace(transport=types.SimpleNamespace(deadline=None))
            self.record = {"method": "rest", "mode": "full", "project": settings.firestore_project,
                          "database": settings.firestore_database, "collection": "rating_events",
                          "documents_read": 1, "snapshot_documents": 1, "drift_documents": 0}

        def run(self, _plan):
            with open(os.path.join(self.folder, "rating_events.ndjson"), "w") as out:
                out.write("{}\n")
            if plan.get("fill"):
                # Files until the file system has no inode left, then one freed: the record takes
                # it, and linking the new current finds none.
                number = 0
                try:
                    while True:
                        open(os.path.join(self.folder, f"f{number}"), "w").close()
                        number += 1
                except OSError:
                    os.unlink(os.path.join(self.folder, f"f{number - 1}"))
            return self.record

    fetch.Fetch = StandIn
    environ = dict({"RANKINGS_FIRESTORE_PROJECT": "demo-nights"}, **plan.get("environ", {}))
    print(fetch.main([directory], environ))


if __name__ == "__main__" and sys.argv[1:2] == ["--drive"]:
    drive(sys.argv[2], sys.argv[3])
    sys.exit(0)

sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402

NOBODY = pwd.getpwnam("nobody")


def as_user(user, command):
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"] + command


def closed_port():
    """A port nothing listens on: every call is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(port, **settings):
    """Exactly these settings (none of the caller's RANKINGS_* variables), one try a call."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    env.update(RANKINGS_FIRESTORE_PROJECT="demo-nights", FIRESTORE_EMULATOR_HOST=f"127.0.0.1:{port}",
               RANKINGS_FIRESTORE_ATTEMPTS="1", RANKINGS_FIRESTORE_BACKOFF_SECONDS="0.1", **settings)
    return env


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


def seed(directory, nights, current):
    """Nights as an earlier run left them, and current pointing at one."""
    os.makedirs(directory, exist_ok=True)
    for name in nights:
        os.mkdir(os.path.join(directory, name))
        with open(os.path.join(directory, name, "rating_events.ndjson"), "w") as out:
            out.write(f"{name}\n")
    if current:
        os.symlink(current, os.path.join(directory, "current"))


def partials(directory):
    return [n for n in os.listdir(directory) if n.startswith(".partial-")]


def metric(folder, name):
    with open(os.path.join(folder, "rankings-fetch.prom")) as text:
        return next((line.split()[1] for line in text if line.split(" ")[0] == name), None)


def wait_for(condition, seconds=60):
    """A bound, not a timing assertion: polls until condition() holds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"still false after {seconds}s: {condition}")


class Folders(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-nights.")
        os.chmod(self.work, 0o755)
        self.directory = os.path.join(self.work, "firestore")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def needs_root(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (another user, a tmpfs)")

    def hook(self, port, user=None, **settings):
        command = [HOOK, self.directory]
        return harness.run(as_user(user, command) if user else command, env=environment(port, **settings))

    def driven(self, plan, user=None):
        command = [sys.executable, os.path.abspath(__file__), "--drive", self.directory, json.dumps(plan)]
        done = harness.run(as_user(user, command) if user else command, timeout=60)
        if done.returncode != 0 or not done.stdout.strip():
            self.fail(f"the driver failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        return int(done.stdout.strip().splitlines()[-1]), done.stderr

    def with_lock(self, before):
        """DIR as before, and the lock file every run leaves."""
        return dict(before, **{".rankings-fetch.lock": harness.tree(self.directory).get(".rankings-fetch.lock")})

    def test_root_is_refused_64_naming_the_user_where_another_user_owns_dir_before_anything_is_made(self):
        self.needs_root()
        seed(self.directory, [FIRST], FIRST)
        subprocess.run(["chown", "-R", "nobody:nogroup", self.work], check=True)
        before = harness.tree(self.directory)
        done = self.hook(closed_port())
        self.expect_exit(done, 64, f"running as root, but {self.directory} belongs to nobody")
        self.expect_in("the advice", "sudo -u nobody", done.stderr)
        self.expect("DIR", harness.tree(self.directory), before)
        # A DIR not there yet counts its parent's owner.
        self.directory = os.path.join(self.work, "new", "firestore")
        self.expect_exit(self.hook(closed_port()), 64)
        self.expect("nothing made", os.path.exists(os.path.join(self.work, "new")), False)

    def test_a_second_fetch_is_refused_75_while_another_holds_the_lock_and_dir_stays(self):
        seed(self.directory, [FIRST], FIRST)
        lock = os.open(os.path.join(self.directory, ".rankings-fetch.lock"), os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            before = harness.tree(self.directory)
            with Silent() as silent:
                done = self.hook(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="30")
        finally:
            os.close(lock)
        self.expect_exit(done, 75, f"another fetch holds {self.directory}/.rankings-fetch.lock")
        self.expect("DIR", harness.tree(self.directory), before)

    def test_a_current_that_is_not_a_symbolic_link_is_refused_73_before_anything_is_fetched(self):
        seed(self.directory, [FIRST], None)
        os.mkdir(os.path.join(self.directory, "current"))
        before = harness.tree(self.directory)
        # Firestore never answers: a fetch that started would wait, so refusing at once shows it did not.
        with Silent() as silent:
            done = self.hook(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600")
        self.expect_exit(done, 73, f"{self.directory}/current exists and is not a symbolic link")
        self.expect("DIR", harness.tree(self.directory), self.with_lock(before))

    def test_sigterm_during_the_fetch_is_143_its_partial_folder_removed_and_the_metric_says_143(self):
        metrics = os.path.join(self.work, "metrics")
        os.mkdir(metrics)
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        with Silent() as silent:
            process = subprocess.Popen([HOOK, self.directory], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       env=environment(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600",
                                                       RANKINGS_METRICS=os.path.join(metrics, "rankings.prom")))
            try:
                wait_for(lambda: partials(self.directory))
                process.send_signal(signal.SIGTERM)
                _, stderr = process.communicate(timeout=60)
            finally:
                process.kill()
                process.wait()
        self.expect("exit status", process.returncode, 143)
        self.expect_in("message", "stopped by SIGTERM", stderr)
        self.expect("DIR", harness.tree(self.directory), self.with_lock(before))
        self.expect("metric", metric(metrics, "rankings_fetch_last_run_exit_status"), "143")

    def test_sigkill_leaves_a_partial_folder_the_next_run_removes_even_when_it_fails(self):
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        with Silent() as silent:
            process = subprocess.Popen([HOOK, self.directory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=environment(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600"))
            try:
                wait_for(lambda: partials(self.directory))
            finally:
                process.kill()
                process.wait()
        self.expect("partial folders left by SIGKILL", len(partials(self.directory)), 1)
        # The next run fails too (nothing answers), but only after it removed the dead folder.
        self.expect_exit(self.hook(closed_port()), 69)
        self.expect("DIR", harness.tree(self.directory), self.with_lock(before))

    def test_the_deadline_ends_a_fetch_that_hangs_69_without_a_traceback_dir_as_it_was(self):
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        with Silent() as silent:
            done = self.hook(silent.port, RANKINGS_FIRESTORE_TIMEOUT_SECONDS="600", RANKINGS_FIRESTORE_DEADLINE_SECONDS="1")
        self.expect_exit(done, 69, "did not end within RANKINGS_FIRESTORE_DEADLINE_SECONDS (1 s)")
        self.expect("a traceback", "Traceback" in done.stderr, False)
        self.expect("DIR", harness.tree(self.directory), self.with_lock(before))

    def test_prune_leaves_links_files_and_other_users_folders_alone_and_a_stuck_night_is_a_warning_not_a_failure(self):
        """Old nights go; a symbolic link or a file with a night's name, a night another user
        (root, running the hook by hand) made, and what a link points at all stay; a night that
        cannot be removed is a warning and a metric, and the night still succeeds (0)."""
        self.needs_root()
        metrics, outside = os.path.join(self.work, "metrics"), os.path.join(self.work, "outside")
        os.mkdir(metrics)
        os.mkdir(outside)
        with open(os.path.join(outside, "keep-me"), "w") as out:
            out.write("not a night\n")
        last = "20261103T050000.000001Z"
        seed(self.directory, [FIRST, "20261102T050000Z", last], last)
        os.symlink(outside, os.path.join(self.directory, "20261001T050000Z"))
        with open(os.path.join(self.directory, "20261002T050000Z"), "w") as out:
            out.write("a file\n")
        # An old night holding something the job's user cannot delete (root's, in a folder of root's).
        stuck = os.path.join(self.directory, "20261102T050000Z", "root-made")
        os.mkdir(stuck)
        open(os.path.join(stuck, "file"), "w").close()
        subprocess.run(["chown", "-R", "nobody:nogroup", self.directory, metrics], check=True)
        subprocess.run(["chown", "-R", "root:root", stuck], check=True)
        root_night = os.path.join(self.directory, "20261003T050000Z")
        os.mkdir(root_night)
        outside_before, root_night_before = harness.tree(outside), harness.tree(root_night)
        status, stderr = self.driven({"environ": {"RANKINGS_FIRESTORE_KEEP": "2",
                                                  "RANKINGS_METRICS": os.path.join(metrics, "rankings.prom")}}, NOBODY)
        self.expect(f"exit status ({stderr.strip()[-600:]})", status, 0)
        new = os.readlink(os.path.join(self.directory, "current"))
        self.assertGreater(new, last, "current is not the new night")
        self.expect("kept", sorted(n for n in os.listdir(self.directory) if n[0].isdigit()),
                    sorted(["20261001T050000Z", "20261002T050000Z", "20261003T050000Z", "20261102T050000Z", last, new]))
        self.expect("the link", os.readlink(os.path.join(self.directory, "20261001T050000Z")), outside)
        with open(os.path.join(self.directory, "20261002T050000Z")) as f:
            self.expect("the file", f.read(), "a file\n")
        self.expect("what the link names", harness.tree(outside), outside_before)
        self.expect("root's night", harness.tree(root_night), root_night_before)
        self.expect_in("warning", f"cannot remove an old night, {self.directory}/20261102T050000Z", stderr)
        self.expect_in("warning", f"left alone {self.directory}/20261001T050000Z: not a folder", stderr)
        self.expect_in("warning", f"left alone {root_night}: it belongs to root, not nobody", stderr)
        self.expect("rankings_fetch_prune_errors", metric(metrics, "rankings_fetch_prune_errors"), "1")
        self.expect("rankings_fetch_last_run_exit_status", metric(metrics, "rankings_fetch_last_run_exit_status"), "0")

    def test_three_nights_within_a_second_get_three_names_in_time_order(self):
        names = []
        for _ in range(3):
            status, stderr = self.driven({})
            self.expect(f"exit status ({stderr.strip()[-600:]})", status, 0)
            names.append(os.readlink(os.path.join(self.directory, "current")))
        self.expect("nights", sorted(n for n in os.listdir(self.directory) if n[0].isdigit()), names)
        self.expect("distinct, in time order", sorted(set(names)), names)
        for name in names:
            self.expect(f"{name}'s form", len(name), len("20261124T050000.123456Z"))

    def test_no_space_left_while_switching_current_is_73_with_the_reason_and_dir_as_it_was(self):
        self.needs_root()
        os.mkdir(self.directory)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=64", "tmpfs", self.directory], check=True)
        try:
            seed(self.directory, [FIRST], FIRST)
            before = harness.tree(self.directory)
            status, stderr = self.driven({"fill": True})
            self.expect(f"exit status ({stderr.strip()[-600:]})", status, 73)
            self.expect_in("message", "No space left on device", stderr)
            self.expect("a traceback", "Traceback" in stderr, False)
            self.expect("DIR", harness.tree(self.directory), self.with_lock(before))
        finally:
            subprocess.run(["umount", self.directory], check=False)


if __name__ == "__main__":
    harness.main()
