"""The night's one stop: set by its one signal handler (night.py), asked by all that works in the night's process;
it kills the forked streams in `children` and cuts the calls in `cuts`: a step ends at once, or at its next call."""
import contextlib
import os
import signal
import threading

from .statuses import Failure


class Stopped(Failure):
    """The night was told to stop: 128 + the signal's number, never tried again."""

    def __init__(self, signum):
        super().__init__(128 + signum, f"stopped by {signal.Signals(signum).name}", final=True)


class Stop:
    def __init__(self):
        self.reset()

    def reset(self):
        self.signum, self.event, self.children, self.cuts = None, threading.Event(), set(), set()

    def set(self, signum):
        """From the signal handler: the first signal is the one the night ends with."""
        self.signum = signum if self.signum is None else self.signum
        self.event.set()
        # From a thread: the handler runs between two bytecodes of whatever holds a lock a cut needs.
        threading.Thread(target=lambda cuts: [cut() for cut in cuts], args=(list(self.cuts),), daemon=True).start()
        for pid in list(self.children):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def check(self):
        if self.signum is not None:
            raise Stopped(self.signum)

    def sleep(self, seconds):
        self.event.wait(max(seconds, 0))
        self.check()


STOP = Stop()
