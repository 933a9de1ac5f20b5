"""Work shared out: COUNTs to threads (each mostly waits), a full read's streams to processes (each parses:
threads share one interpreter lock). At the stop nothing more is taken, no caller waits, every stream dies."""
import collections
import contextlib
import ctypes
import os
import pickle
import selectors
import signal
import threading

from .statuses import UNAVAILABLE, Failure
from .stop import STOP

WAKE = 0.5      # seconds a caller waits before it asks the stop again


def each(work, items, workers):
    """work(item) for each item on up to `workers` threads, in order; the first exception raised, nothing more taken."""
    todo, failed, finished = collections.deque(enumerate(items)), [], threading.Semaphore(0)
    results = [None] * len(todo)

    def worker():
        while not failed:
            try:
                number, item = todo.popleft()     # a deque's pops are thread-safe
            except IndexError:
                return
            try:
                STOP.check()
                results[number] = work(item)
            except Exception as error:  # noqa: BLE001 (raised again in the caller's thread)
                failed.append(error)
            finished.release()

    for _ in range(min(workers, len(results))):
        threading.Thread(target=worker, daemon=True).start()
    for _ in results:
        while not finished.acquire(timeout=WAKE):
            STOP.check()
        if failed:
            raise failed[0]
    return results


def apart(work, items, beside=None):
    """work(item) for every item at once, each in a forked child (in STOP.children until reaped), and
    beside() on a thread once all are forked (a thread running at a fork may hold a lock the child then
    waits on for ever): the results, which must pickle, in order, beside()'s last. The first exception
    is raised here and the children left are killed; a child dies with this process too."""
    parent, watch = os.getpid(), selectors.DefaultSelector()
    try:
        for number, item in enumerate(items):
            STOP.check()
            reader, writer = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(reader)
                _child(work, item, writer, parent)
            STOP.children.add(pid)
            os.close(writer)
            watch.register(reader, selectors.EVENT_READ, (number, pid, []))
        if beside is not None:
            reader, writer = os.pipe()
            threading.Thread(target=_send, args=(beside, writer), daemon=True).start()
            watch.register(reader, selectors.EVENT_READ, (len(watch.get_map()), None, []))
        results = [None] * len(watch.get_map())
        while watch.get_map():
            for key, _ in watch.select(WAKE):
                number, pid, chunks = key.data
                chunks.append(os.read(key.fd, 1 << 16))
                if chunks[-1]:
                    continue
                watch.unregister(key.fd)
                os.close(key.fd)
                status = None if pid is None else os.waitpid(pid, 0)[1]
                STOP.children.discard(pid)
                STOP.check()    # a stream the stop killed is the stop, not a failure of its own
                try:
                    kind, value = pickle.loads(b"".join(chunks))
                except Exception:  # noqa: BLE001 (none, or half: it died first, as the OOM killer kills: 69)
                    how = (f"killed by signal {-os.waitstatus_to_exitcode(status)}" if os.WIFSIGNALED(status)
                           else f"exit {os.waitstatus_to_exitcode(status)}")
                    kind, value = "error", Failure(UNAVAILABLE, f"a stream's process ended without its answer ({how}; "
                                                                "out of memory? see the kernel's log)")
                if kind == "error":
                    raise value
                results[number] = value
            STOP.check()
        return results
    finally:
        for key in list(watch.get_map().values()):
            _, pid, _ = key.data
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                STOP.children.discard(pid)
            os.close(key.fd)
        watch.close()


def _child(work, item, writer, parent):
    try:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        STOP.reset()    # the parent's stop kills this child; this one kills none
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
        if os.getppid() == parent:      # else the parent died before the line above
            _send(lambda: work(item), writer)
    finally:
        os._exit(0)


def _send(work, writer):
    """work()'s answer, or its exception, pickled into the pipe, which is then closed."""
    try:
        answer = pickle.dumps(("result", work()))
    except Exception as error:  # noqa: BLE001 (raised again in the parent)
        try:
            answer = pickle.dumps(("error", error))
            pickle.loads(answer)
        except Exception:  # noqa: BLE001 (one that cannot travel whole: a bug, named)
            answer = pickle.dumps(("error", RuntimeError(f"{type(error).__name__}: {error}")))
    with contextlib.suppress(OSError), open(writer, "wb") as pipe:     # OSError: the parent went on without it
        pipe.write(answer)
