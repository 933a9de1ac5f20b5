"""Google's Firestore emulator for a test: started on a free port, seeded with the sample events
the way the app writes them, stopped with its whole process group.

RANKINGS_TEST_EMULATOR=HOST:PORT hands a suite an emulator that is already running (.ci/run
starts one for all the suites that take it): start() then only checks that it answers and stop()
leaves it running. Suites sharing one emulator keep apart by project id (each suite has its own;
an export or a clear names one project and touches no other), and must not freeze or stop it
(Tests/image and Tests/container do: they start their own)."""
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


SHARED = "RANKINGS_TEST_EMULATOR"


class Emulator:
    def __init__(self, host="127.0.0.1", port=None):
        # A shared emulator's address, unless the caller asks for a port of its own.
        self.shared = os.environ.get(SHARED) if port is None else None
        if self.shared:
            host, _, port = self.shared.rpartition(":")
        self.host = host
        self.port = int(port) if port else free_port()
        self.log = tempfile.NamedTemporaryFile("w+", prefix="firestore-emulator.", suffix=".log")
        self.process = None

    @property
    def address(self):
        return f"{self.host}:{self.port}"

    def start(self, seconds=120):
        if self.shared:
            # A wrong address fails here, naming the variable, rather than as a test's timeout.
            try:
                with socket.create_connection((self.host, self.port), timeout=10):
                    return
            except OSError as e:
                raise RuntimeError(f"{SHARED}={self.shared}: no emulator answers there ({e})") from e
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
    # gRPC's notes on a fork (the night's streams fork while the client writes) are not the test's.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from google.cloud import firestore
    return firestore.Client(project=project)


def write(db, collection, documents):
    """(id, fields) pairs set in batches of 500, the most one commit takes."""
    batch, n = db.batch(), 0
    for name, fields in documents:
        batch.set(db.collection(collection).document(name), fields)
        n += 1
        if n % 500 == 0:
            batch.commit()
            batch = db.batch()
    batch.commit()
    return n


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


def show(db, collection, name):
    """A document as Google's client reads it: each field's value and Python type, and the
    document's update time (unchanged means nothing wrote it)."""
    snapshot = db.collection(collection).document(name).get()
    if not snapshot.exists:
        return {"exists": False}

    def typed(value):
        if isinstance(value, list):
            return [typed(v) for v in value]
        if isinstance(value, dict):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, datetime.datetime):
            return {"Timestamp": value.astimezone(datetime.timezone.utc).isoformat()}
        return value

    return {"exists": True, "update_time": snapshot.update_time.isoformat(),
            "types": {k: type(v).__name__ for k, v in snapshot.to_dict().items()},
            "fields": typed(snapshot.to_dict())}


if __name__ == "__main__":
    # For shell scripts (Tests/container): emulator.py ADDRESS PROJECT seed EVENTS
    #   emulator.py ADDRESS PROJECT show|delete|vote COLLECTION DOC
    #   emulator.py ADDRESS PROJECT matches COLLECTION DOC GOLDEN
    import sys
    address, project, command, *rest = sys.argv[1:]
    store = client(project, address)
    if command == "seed":
        print(seed(store, rest[0]))
    elif command == "matches":
        # COLLECTION DOC GOLDEN: the document reads as the JSON golden does, in the app's types.
        got = show(store, rest[0], rest[1])
        with open(rest[2], encoding="utf-8") as g:
            want = json.load(g)
        types = {k: ("list" if isinstance(v, list) else "int" if isinstance(v, int) else "str")
                 for k, v in want.items()}
        for key in ("computed_at", "week_start", "week_end"):
            if key in want:
                types[key] = "DatetimeWithNanoseconds"
                stamp = datetime.datetime.fromisoformat(want[key].replace("Z", "+00:00"))
                want[key] = {"Timestamp": stamp.astimezone(datetime.timezone.utc).isoformat()}
        # The snapshot's readTime the night adds (the app ignores it), as a Timestamp or not at all.
        if got["exists"] and got["types"].get("snapshot_read_time") == "DatetimeWithNanoseconds":
            del got["types"]["snapshot_read_time"], got["fields"]["snapshot_read_time"]
        if not got["exists"] or got["types"] != types or got["fields"] != want:
            sys.exit(f"{rest[0]}/{rest[1]} does not match {rest[2]}:\n{json.dumps(got, indent=1)}")
        print(json.dumps(got["types"], sort_keys=True))
    elif command == "vote":
        # COLLECTION DOC: one Hilarious vote for the sample's first joke, stamped now (tonight's).
        store.collection(rest[0]).document(rest[1]).set(
            {"joke_id": "LBcw2Dam9tSSPaIh0tG4", "rating": 5, "device_id": "container-device",
             "week_id": "2026-W48", "timestamp": datetime.datetime.now(datetime.timezone.utc)})
    elif command == "delete":
        store.collection(rest[0]).document(rest[1]).delete()
    elif command == "show":
        print(json.dumps(show(store, rest[0], rest[1]), indent=1, sort_keys=True))
    else:
        sys.exit(f"unknown command {command}")
