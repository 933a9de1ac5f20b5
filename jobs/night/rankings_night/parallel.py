"""Work shared out to a few threads: the ranges of a full read and their COUNTs."""
import queue
import threading


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
