"""The fetch's night folders (STATE/firestore) and the night's one lock: root refused where another
user keeps the state, a second night refused while one holds the lock, current checked before
anything is read, a stopped or killed night's partial folder, the try's deadline, clean-up that
never fails a night and touches only the fetch's own folders, unique night names, and a full disk
while switching current.

    python3 Tests/firestore-steps/test_folders.py      (run.sh runs it; as root for every check)

The whole night (`rankings-night run --environment`) for the lock, root and the signals; fetch.run
in this process for the rest (as `nobody`, for the clean-up, in a child process of its own:
`test_folders.py --drive DIR PROJECT ADDRESS`). Firestore is a closed port (refused at once), a
socket that accepts and never answers (a stopped server), or Google's emulator, behind faults.py's
proxy where a page must wait until the test has done its part. Checks that need another user
(nobody) or a small tmpfs skip unless run as root."""
import fcntl
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "firestore-loop"))
import support  # noqa: E402 (puts Tests/ on sys.path too)

if __name__ == "__main__" and sys.argv[1:2] == ["--drive"]:
    # fetch.run into DIR as whoever runs this: the record and the lines said, as JSON.
    directory, project, address = sys.argv[2:5]
    done = support.fetch(directory, support.connect(project, address))
    print(json.dumps({"status": done.returncode, "said": done.stderr, "record": done.result}))
    sys.exit(0)

import emulator as emu  # noqa: E402
import faults  # noqa: E402
import harness  # noqa: E402
from rankings_night import record as records  # noqa: E402

PROJECT = "demo-rankings-folders"
FIRST = "20261101T050000Z"
NOBODY = pwd.getpwnam("nobody")
server = None


def setUpModule():
    global server
    server = support.start_emulator()
    emu.write(emu.client(PROJECT, server.address), "rating_events", support.votes(random.Random(5), 40, 30).items())


def tearDownModule():
    if server:
        server.stop()


def as_user(user, command):
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"] + command


def closed_port():
    """An address nothing listens on: every call is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


class Silent:
    """A server that accepts connections (the kernel does, into the backlog) and never answers:
    every call waits for its limit, as against a stopped Firestore."""

    def __enter__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.address = f"127.0.0.1:{self.socket.getsockname()[1]}"
        return self

    def __exit__(self, *_):
        self.socket.close()


class Held:
    """faults.py's proxy holding the first page of a stream until released: the fetch is then
    mid-read, its partial folder made and its streams forked."""

    def __enter__(self):
        self.reached, self.release = threading.Event(), threading.Event()
        self.proxy = faults.FaultyProxy(server.address).__enter__()
        self.proxy.before(faults.pages, lambda: (self.reached.set(), self.release.wait(120)))
        self.address = self.proxy.address
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.proxy.__exit__(*exc)


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
        self.work = tempfile.mkdtemp(prefix="rankings-folders.")
        os.chmod(self.work, 0o755)
        self.state = os.path.join(self.work, "state")
        self.directory = os.path.join(self.state, "firestore")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def needs_root(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (another user, a tmpfs)")

    def night(self, address, **settings):
        return support.night(self.state, PROJECT, address, **settings)

    def started(self, address, **settings):
        argv, env = support.night_process(self.state, PROJECT, address, **settings)
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def fetch(self, address, **client):
        return support.fetch(self.directory, support.connect(PROJECT, address, **client))

    def test_root_is_refused_64_naming_the_user_where_another_user_owns_the_state_before_anything_is_made(self):
        self.needs_root()
        seed(self.directory, [FIRST], FIRST)
        subprocess.run(["chown", "-R", "nobody:nogroup", self.work], check=True)
        before = harness.tree(self.state)
        done = self.night(closed_port())
        self.expect_exit(done, 64, f"running as root, but {self.state} belongs to nobody")
        self.expect_in("the advice", "sudo -u nobody rankings-night run", done.stderr)
        self.expect("the state", harness.tree(self.state), before)
        # A state directory not there yet counts its nearest parent's owner.
        self.state = os.path.join(self.work, "new", "state")
        self.expect_exit(self.night(closed_port()), 64)
        self.expect("nothing made", os.path.exists(os.path.join(self.work, "new")), False)

    def test_a_second_night_is_refused_75_while_another_holds_the_lock_and_the_state_stays(self):
        seed(self.directory, [FIRST], FIRST)
        lock = os.open(os.path.join(self.state, ".rankings.lock"), os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            before = harness.tree(self.state)
            with Silent() as silent:
                done = self.night(silent.address)
        finally:
            os.close(lock)
        self.expect_exit(done, 75, f"another night holds {self.state}/.rankings.lock")
        self.expect("the state", harness.tree(self.state), before)

    def test_a_current_that_is_not_a_symbolic_link_is_refused_73_before_anything_is_read(self):
        seed(self.directory, [FIRST], None)
        os.mkdir(os.path.join(self.directory, "current"))
        before = harness.tree(self.directory)
        # Firestore never answers: a fetch that started would wait, so refusing at once shows it did not.
        with Silent() as silent:
            firestore = support.connect(PROJECT, silent.address, timeout=600)
            firestore.transport.deadline = time.monotonic() + 60
            done = support.fetch(self.directory, firestore)
        self.expect_exit(done, 73, f"{self.directory}/current exists and is not a symbolic link")
        self.expect("DIR", harness.tree(self.directory), before)

    def test_sigterm_during_the_fetch_is_143_its_partial_folder_removed_and_the_metrics_say_143(self):
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        metrics = os.path.join(self.state, "rankings.prom")
        with Held() as held:
            night = self.started(held.address, RANKINGS_METRICS=metrics)
            try:
                wait_for(lambda: held.reached.is_set() and partials(self.directory))
                night.send_signal(signal.SIGTERM)
                _, stderr = night.communicate(timeout=60)
            finally:
                night.kill()
                night.wait()
        self.expect(f"exit status ({stderr[-600:]})", night.returncode, 143)
        self.expect_in("message", "rankings-night: error: fetch: stopped by SIGTERM", stderr)
        self.expect("DIR", harness.tree(self.directory), before)
        samples = support.promtool_samples(metrics)
        self.expect("the metrics", (samples["rankings_night_last_run_exit_status"],
                                    samples['rankings_night_step_exit_status{step="fetch"}']), ("143", "143"))

    def test_sigkill_leaves_a_partial_folder_the_next_fetch_removes_even_when_it_fails(self):
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        with Held() as held:
            night = self.started(held.address)
            try:
                wait_for(lambda: held.reached.is_set() and partials(self.directory))
            finally:
                night.kill()
                night.communicate()
        self.expect("partial folders left by SIGKILL", len(partials(self.directory)), 1)
        # The next fetch fails too (nothing answers), but only after it removed the dead folder.
        self.expect_exit(self.fetch(closed_port(), attempts=1), 69)
        self.expect("DIR", harness.tree(self.directory), before)

    def test_the_tries_deadline_ends_a_fetch_that_hangs_69_dir_as_it_was(self):
        seed(self.directory, [FIRST], FIRST)
        before = harness.tree(self.directory)
        with Silent() as silent:
            firestore = support.connect(PROJECT, silent.address, timeout=600)
            firestore.transport.deadline, started = time.monotonic() + 1, time.monotonic()
            done = support.fetch(self.directory, firestore)
        self.expect_exit(done, 69, "the deadline comes before another")
        self.assertLess(time.monotonic() - started, 60, "the deadline did not end it")
        self.expect("DIR", harness.tree(self.directory), before)

    def test_prune_leaves_links_files_and_other_users_folders_alone_and_a_stuck_night_is_a_warning_not_a_failure(self):
        """Nights past the 7 kept go; a symbolic link or a file with a night's name, a night another
        user (root, running by hand) made, and what a link points at all stay; a night that cannot be
        removed is a warning and counted, and the fetch still succeeds."""
        self.needs_root()
        outside = os.path.join(self.work, "outside")
        os.mkdir(outside)
        with open(os.path.join(outside, "keep-me"), "w") as out:
            out.write("not a night\n")
        old = [f"202611{day:02d}T050000Z" for day in range(1, 9)]
        seed(self.directory, old, old[-1])
        os.symlink(outside, os.path.join(self.directory, "20261001T050000Z"))
        with open(os.path.join(self.directory, "20261002T050000Z"), "w") as out:
            out.write("a file\n")
        # The second oldest night holds something the job's user cannot delete (root's, in a folder of root's).
        stuck = os.path.join(self.directory, old[1], "root-made")
        os.mkdir(stuck)
        open(os.path.join(stuck, "file"), "w").close()
        subprocess.run(["chown", "-R", "nobody:nogroup", self.state], check=True)
        subprocess.run(["chown", "-R", "root:root", stuck], check=True)
        root_night = os.path.join(self.directory, "20261003T050000Z")
        os.mkdir(root_night)
        outside_before, root_night_before = harness.tree(outside), harness.tree(root_night)
        done = harness.run(as_user(NOBODY, [sys.executable, "-B", os.path.abspath(__file__), "--drive", self.directory,
                                            PROJECT, server.address]), timeout=180)
        self.expect_exit(done, 0)
        fetched = json.loads(done.stdout)
        self.expect(f"status ({fetched['said'][-600:]})", fetched["status"], 0)
        new = os.readlink(os.path.join(self.directory, "current"))
        self.assertGreater(new, old[-1], "current is not the new night")
        self.expect("kept", sorted(n for n in os.listdir(self.directory) if n[0].isdigit()),
                    sorted(["20261001T050000Z", "20261002T050000Z", "20261003T050000Z"] + old[1:] + [new]))
        self.expect("the link", os.readlink(os.path.join(self.directory, "20261001T050000Z")), outside)
        with open(os.path.join(self.directory, "20261002T050000Z")) as f:
            self.expect("the file", f.read(), "a file\n")
        self.expect("what the link names", harness.tree(outside), outside_before)
        self.expect("root's night", harness.tree(root_night), root_night_before)
        said = fetched["said"]
        self.expect_in("warning", f"warning: fetch: cannot remove an old night, {self.directory}/{old[1]}", said)
        self.expect_in("warning", f"warning: fetch: left alone {self.directory}/20261001T050000Z: nobody's file, not a folder of nobody", said)
        self.expect_in("warning", f"warning: fetch: left alone {root_night}: root's folder, not a folder of nobody", said)
        self.expect("prune_errors", fetched["record"]["prune_errors"], 1)

    def test_three_nights_in_a_row_get_three_names_in_time_order(self):
        names = []
        for _ in range(3):
            self.expect_exit(self.fetch(server.address), 0)
            names.append(os.readlink(os.path.join(self.directory, "current")))
        self.expect("nights", sorted(n for n in os.listdir(self.directory) if n[0].isdigit()), names)
        self.expect("distinct, in time order", sorted(set(names)), names)
        for name in names:
            self.expect(f"{name}'s form", len(name), len("20261124T050000.123456Z"))

    def test_no_space_left_while_switching_current_is_73_with_the_reason_and_dir_as_it_was(self):
        self.needs_root()
        os.makedirs(self.directory)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=64", "tmpfs", self.directory], check=True)
        write = records.write

        def filled(folder, record):
            # The record written, then files until the file system has no inode left: the link
            # that would switch current to the new night finds none.
            write(folder, record)
            number = 0
            try:
                while True:
                    open(os.path.join(folder, f"f{number}"), "w").close()
                    number += 1
            except OSError:
                pass
        try:
            seed(self.directory, [FIRST], FIRST)
            before = harness.tree(self.directory)
            records.write = filled
            try:
                done = self.fetch(server.address)
            finally:
                records.write = write
            self.expect_exit(done, 73, "No space left on device; current unchanged")
            self.expect("DIR", harness.tree(self.directory), before)
        finally:
            subprocess.run(["umount", self.directory], check=False)


if __name__ == "__main__":
    harness.main()
