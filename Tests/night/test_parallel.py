"""Work shared out (parallel.py): threads keep the items' order and raise the first failure;
processes do too, carry a failure whole (its status, its attributes), run beside() on a thread,
and leave no child behind when one fails or when the fetch itself is killed; both end at the
night's stop (stop.STOP)."""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import parallel  # noqa: E402
from rankings_night.statuses import CONFIG, UNAVAILABLE, Failure, status_of  # noqa: E402
from rankings_night.stop import STOP, Stopped  # noqa: E402
from rankings_night.transport import Refused  # noqa: E402

NIGHT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "jobs", "night")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:     # reaped, or a zombie no one waits for
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def pids_in(folder, count):
    """The pids the children wrote into folder, once `count` of them have."""
    for _ in range(500):
        names = os.listdir(folder)
        if len(names) >= count:
            return [int(name) for name in names]
        time.sleep(0.02)
    raise AssertionError(f"only {len(os.listdir(folder))} of {count} children started")


class Stopping(harness.Case):
    def setUp(self):
        STOP.reset()
        self.addCleanup(STOP.reset)

    def stop_in(self, seconds):
        timer = threading.Timer(seconds, STOP.set, (signal.SIGTERM,))
        timer.start()
        self.addCleanup(timer.cancel)


class Threads(Stopping):
    def test_results_in_order_and_the_first_failure_raised(self):
        self.expect("results", parallel.each(lambda x: x * x, range(50), 4), [x * x for x in range(50)])
        with self.assertRaises(ZeroDivisionError):
            parallel.each(lambda x: 1 / (x - 7), range(50), 4)

    def test_a_stop_takes_no_item_after_it_and_waits_on_no_call(self):
        taken = []

        def work(x):
            taken.append(x)
            time.sleep(30 if x == 0 else 0.05)
        self.stop_in(0.3)
        began = time.monotonic()
        with self.assertRaises(Stopped):
            parallel.each(work, range(100), 2)
        self.assertLess(time.monotonic() - began, 2, "the call held in item 0 is not waited for")
        count = len(taken)
        time.sleep(0.2)
        self.expect("items taken after the stop", len(taken), count)
        self.assertLess(count, 20)


class Processes(Stopping):
    def test_each_item_in_a_process_of_its_own_results_in_order(self):
        got = parallel.apart(lambda x: (x * x, os.getpid()), range(6))
        self.expect("results", [square for square, _ in got], [x * x for x in range(6)])
        pids = {pid for _, pid in got}
        self.expect("processes", (len(pids), os.getpid() in pids), (6, False))
        self.expect("none left", [pid for pid in pids if alive(pid)], [])

    def test_a_failure_comes_back_whole(self):
        def work(x):
            if x == 2:
                error = Refused("rest: the readTime is too old", 400, "FAILED_PRECONDITION")
                error.documents_read = 1234
                raise error
            return x
        with self.assertRaises(Refused) as caught:
            parallel.apart(work, range(3))
        got = caught.exception
        self.expect("refusal", (str(got), status_of(got), got.code, got.reason, got.documents_read),
                    ("rest: the readTime is too old", UNAVAILABLE, 400, "FAILED_PRECONDITION", 1234))
        with self.assertRaises(Failure) as caught:
            parallel.apart(lambda x: (_ for _ in ()).throw(Failure(CONFIG, "no", final=True)), [1])
        self.expect("failure", (type(caught.exception), str(caught.exception), caught.exception.status,
                                caught.exception.final), (Failure, "no", CONFIG, True))
        with self.assertRaises(OSError) as caught:
            parallel.apart(lambda x: open("/nonexistent/folder/file", "x"), [1])
        self.expect("a file's failure", (caught.exception.errno, caught.exception.filename),
                    (2, "/nonexistent/folder/file"))

    def test_when_one_fails_the_others_are_killed(self):
        with tempfile.TemporaryDirectory() as folder:
            def work(x):
                if x == 0:
                    pids_in(folder, 3)
                    raise Failure(UNAVAILABLE, "stream 0 broke")
                open(os.path.join(folder, str(os.getpid())), "w").close()
                time.sleep(300)
            with self.assertRaises(Failure):
                parallel.apart(work, range(4))
            self.expect("children left", [pid for pid in pids_in(folder, 3) if alive(pid)], [])

    def test_a_child_that_dies_without_its_answer_is_unavailable_not_a_bug(self):
        # Killed as the OOM killer kills: another try may succeed (69), where it was a bug (70).
        with self.assertRaises(Failure) as caught:
            parallel.apart(lambda x: os.kill(os.getpid(), signal.SIGKILL), [1])
        self.expect("status, final", (caught.exception.status, caught.exception.final), (UNAVAILABLE, False))
        self.expect_in("why", "ended without its answer (killed by signal 9", str(caught.exception))
        with self.assertRaises(Failure) as caught:
            parallel.apart(lambda x: os._exit(3), [1])
        self.expect_in("why", "ended without its answer (exit 3", str(caught.exception))

    def test_beside_runs_on_a_thread_once_the_children_are_forked(self):
        got = parallel.apart(lambda x: (x, os.getpid()), range(3),
                             beside=lambda: (threading.current_thread() is not threading.main_thread(), os.getpid(),
                                             len(STOP.children)))
        self.expect("the children's", [x for x, _ in got[:3]], [0, 1, 2])
        self.expect("beside's: a thread of this process, every child forked", got[3], (True, os.getpid(), 3))
        with self.assertRaises(Failure) as caught:
            parallel.apart(lambda x: x, range(2), beside=lambda: (_ for _ in ()).throw(Failure(UNAVAILABLE, "count")))
        self.expect("beside's failure", str(caught.exception), "count")
        self.expect("none left", STOP.children, set())

    def test_a_stop_kills_every_child_and_is_raised(self):
        with tempfile.TemporaryDirectory() as folder:
            def work(x):
                open(os.path.join(folder, str(os.getpid())), "w").close()
                time.sleep(300)
            self.stop_in(0.5)
            with self.assertRaises(Stopped) as caught:
                parallel.apart(work, range(4))
            self.expect("status", caught.exception.status, 128 + signal.SIGTERM)
            self.expect("children left", [pid for pid in pids_in(folder, 4) if alive(pid)], [])
            self.expect("registered", STOP.children, set())
        with self.assertRaises(Stopped):
            parallel.apart(lambda x: x, range(2))    # none forked after it

    def test_a_child_ends_at_sigterm_as_it_would_without_the_night(self):
        def work(x):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        previous = signal.signal(signal.SIGTERM, lambda *_: None)    # the night's handler
        try:
            with self.assertRaises(Failure) as caught:
                parallel.apart(work, [1])
        finally:
            signal.signal(signal.SIGTERM, previous)
        self.expect_in("why", f"killed by signal {int(signal.SIGTERM)}", str(caught.exception))

    def test_the_children_die_with_a_killed_parent(self):
        with tempfile.TemporaryDirectory() as folder:
            program = textwrap.dedent(f"""
                import os, sys, time
                sys.path.insert(0, {NIGHT!r})
                from rankings_night import parallel
                def work(x):
                    open(os.path.join({folder!r}, str(os.getpid())), "w").close()
                    time.sleep(300)
                parallel.apart(work, range(3))
            """)
            parent = subprocess.Popen([sys.executable, "-c", program])
            children = pids_in(folder, 3)
            parent.kill()
            parent.wait()
            for _ in range(500):
                if not any(alive(pid) for pid in children):
                    break
                time.sleep(0.02)
            self.expect("children left after the parent was killed", [pid for pid in children if alive(pid)], [])


if __name__ == "__main__":
    harness.main()
