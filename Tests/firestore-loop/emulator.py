"""Google's Firestore emulator for a test: started on a free port, seeded with the sample events
the way the app writes them, stopped with its whole process group."""
import datetime
import json
import os
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    # A random port in 20000-40000 that nothing listens on now (other test runs share the host).
    import random
    while True:
        port = random.randint(20000, 40000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue


class Emulator:
    def __init__(self, host="127.0.0.1", port=None):
        self.host = host
        self.port = port or free_port()
        self.log = tempfile.NamedTemporaryFile("w+", prefix="firestore-emulator.", suffix=".log")
        self.process = None

    @property
    def address(self):
        return f"{self.host}:{self.port}"

    def start(self, seconds=120):
        self.process = subprocess.Popen(
            ["gcloud", "emulators", "firestore", "start", f"--host-port={self.address}"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.log.seek(0)
            if "Dev App Server is now running" in self.log.read():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.5)
        self.log.seek(0)
        raise RuntimeError(f"the emulator did not start:\n{self.log.read()[-2000:]}")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None


def client(project, address):
    os.environ["FIRESTORE_EMULATOR_HOST"] = address
    from google.cloud import firestore
    return firestore.Client(project=project)


def seed(db, events_path):
    """The sample events as the app writes them (integer ratings, Timestamps), under their ids;
    plus documents the fetch must leave out: another collection, and a rating_events
    subcollection below it."""
    batch, n = db.batch(), 0
    with open(events_path, encoding="utf-8") as events:
        for line in events:
            e = json.loads(line)
            t = e["timestamp"]
            when = datetime.datetime.fromtimestamp(t["_seconds"], datetime.timezone.utc) \
                + datetime.timedelta(microseconds=t["_nanoseconds"] // 1000)
            batch.set(db.collection("rating_events").document(e["id"]),
                      {"joke_id": e["joke_id"], "rating": e["rating"], "device_id": e["device_id"],
                       "week_id": e["week_id"], "timestamp": when})
            n += 1
            if n % 500 == 0:
                batch.commit()
                batch = db.batch()
    batch.set(db.collection("jokes").document("not-an-event"), {"joke_id": "x", "rating": 5})
    batch.set(db.collection("jokes").document("not-an-event").collection("rating_events").document("nested"),
              {"joke_id": "x", "rating": 5})
    batch.commit()
    return n
