"""Work shared out: COUNTs to threads (each mostly waits on Firestore), a full read's streams to
processes (each parses its pages: threads would share one interpreter lock, one core's worth)."""
import ctypes
import os
import pickle
import queue
import selectors
import signal
import threading

from .statuses import UNAVAILABLE, Failure


def each(work, items, workers):
    """work(item) for every item on up to `workers` daemon threads (a stopped fetch never waits on
    a thread held in a call), the results in the items' order. The first exception is raised here,
    and the other threads stop taking items."""
    stop, todo, done = threading.Event(), queue.Queue(), queue.Queue()
    items = list(items)
    for numbered in enumerate(items):
        todo.put(numbered)

    def worker():
        while not stop.is_set():
            try:
                number, item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((number, work(item), None))
            except Exception as error:  # noqa: BLE001 (raised again in the caller's thread)
                stop.set()
                done.put((number, None, error))
                return

    for _ in range(min(workers, len(items))):
        threading.Thread(target=worker, daemon=True).start()
    results = [None] * len(items)
    for _ in items:
        number, result, error = done.get()     # a signal (the fetch's deadline) still interrupts it
        if error is not None:
            stop.set()
            raise error
        results[number] = result
    return results


def apart(work, items):
    """work(item) for every item at once, each in a forked child of its own, the results (which
    must pickle) in the items' order. The first child's exception is raised here and the others
    are killed; a child dies with this process, so a fetch stopped at its limit leaves none."""
    parent, children, answers = os.getpid(), {}, {}
    watch = selectors.DefaultSelector()
    try:
        for number, item in enumerate(items):
            reader, writer = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(reader)
                _child(work, item, writer, parent)
            os.close(writer)
            children[reader], answers[reader] = (number, pid), []
            watch.register(reader, selectors.EVENT_READ)
        results, left = [None] * len(children), len(children)
        while left:
            for key, _ in watch.select():
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    answers[key.fd].append(chunk)
                    continue
                watch.unregister(key.fd)
                left -= 1
                number, pid = children[key.fd]
                _, status = os.waitpid(pid, 0)
                children[key.fd] = (number, None)
                kind, value = _answer(b"".join(answers[key.fd]), status)
                if kind == "error":
                    raise value
                results[number] = value
        return results
    finally:
        for reader, (_, pid) in children.items():
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            os.close(reader)
        watch.close()


def _child(work, item, writer, parent):
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
        try:
            answer = pickle.dumps(("result", work(item)))
        except Exception as error:  # noqa: BLE001 (raised again in the parent)
            try:
                answer = pickle.dumps(("error", error))
                pickle.loads(answer)
            except Exception:  # noqa: BLE001 (one that cannot travel whole: a bug, named)
                answer = pickle.dumps(("error", RuntimeError(f"{type(error).__name__}: {error}")))
        view = memoryview(answer)
        while view:
            view = view[os.write(writer, view):]
    finally:
        os._exit(0)


def _answer(data, status):
    """The child's answer; one that died before sending it (the OOM killer, an operator's kill) is
    not a bug in the work but a try that may succeed again: 69."""
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 (nothing or half an answer)
        how = (f"killed by signal {-os.waitstatus_to_exitcode(status)}" if os.WIFSIGNALED(status)
               else f"exit {os.waitstatus_to_exitcode(status)}")
        return "error", Failure(UNAVAILABLE, f"a stream's process ended without its answer ({how}; "
                                             "out of memory? see the kernel's log)")
