"""Work shared out: the COUNTs of a full read's ranges to a few threads (each mostly waits on
Firestore), its streams to processes (each parses a stream's pages: threads would share one
interpreter lock, one core's worth, about 16,000 documents a second however many streams)."""
import ctypes
import os
import pickle
import queue
import selectors
import signal
import threading

from .statuses import UNAVAILABLE, Failure

_PR_SET_PDEATHSIG = 1


def each(work, items, workers, stop=None):
    """work(item) for every item, on up to `workers` daemon threads (a stopped fetch ends with
    its process, never waiting on a thread held in a call); the results in the items' order.
    The first exception is raised again here, and the other threads stop taking items."""
    stop = stop or threading.Event()
    items = list(items)
    results, todo, done = [None] * len(items), queue.Queue(), queue.Queue()
    for number, item in enumerate(items):
        todo.put((number, item))

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
    for _ in items:
        while True:
            try:
                number, result, error = done.get(timeout=1)
                break
            except queue.Empty:
                continue
        if error is not None:
            stop.set()
            raise error
        results[number] = result
    return results


def apart(work, items):
    """work(item) for every item at once, each in a child process of its own (forked: it starts
    with this process's state and returns its result, which must pickle); the results in the
    items' order. The first child to fail has its exception raised again here and the others
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
            children[reader] = (number, pid)
            answers[reader] = []
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
                _kill(pid)
            os.close(reader)
        watch.close()


def _child(work, item, writer, parent):
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
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
    """The child's answer; a child that died before it was sent (killed: the OOM killer, an
    operator's kill) is not a bug in the work but a try that may succeed again: 69."""
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 (nothing or half an answer: the child died before it was sent)
        how = (f"killed by signal {-os.waitstatus_to_exitcode(status)}" if os.WIFSIGNALED(status)
               else f"exit {os.waitstatus_to_exitcode(status)}")
        return "error", Failure(UNAVAILABLE, f"a stream's process ended without its answer ({how}; "
                                             "out of memory? see the kernel's log)")


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
