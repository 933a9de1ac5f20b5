"""Work shared out (parallel.py): threads keep the items' order and raise the first failure;
processes do too, carry a failure whole (its status, its attributes), and leave no child behind
when one fails or when the fetch itself is killed."""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import parallel  # noqa: E402
from rankings_night.statuses import CONFIG, UNAVAILABLE, Failure, status_of  # noqa: E402
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


class Threads(harness.Case):
    def test_results_in_order_and_the_first_failure_raised(self):
        self.expect("results", parallel.each(lambda x: x * x, range(50), 4), [x * x for x in range(50)])
        with self.assertRaises(ZeroDivisionError):
            parallel.each(lambda x: 1 / (x - 7), range(50), 4)


class Processes(harness.Case):
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
