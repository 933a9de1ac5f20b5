"""Managed exports of the vote collection: exportDocuments answers a long-running operation that
GET .../operations/ID reports done; the emulator's own endpoint exports at once. Each is written
as a real Firestore managed export by bench/generate-export.py (LevelDB logs of entity protos)
from the votes at the export's snapshot time, read a page at a time, so ten million never sit in
memory. A local absolute outputUriPrefix is written there; a gs:// prefix under export_root when
one is set (gs://BUCKET/PATH -> export_root/BUCKET/PATH), else the operation is answered and
nothing is written."""
import json
import os
import secrets
import subprocess
import sys
import threading
import time

from . import times
from .query import Query, QueryError

WRITER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "bench", "generate-export.py")
METADATA = "type.googleapis.com/google.firestore.admin.v1.ExportDocumentsMetadata"
RESPONSE = "type.googleapis.com/google.firestore.admin.v1.ExportDocumentsResponse"
PAGE = 10_000


def pages(db, collection, read_time):
    """Every document of the collection at read_time, in name order, a page at a time."""
    cursor = None
    while True:
        query = {"from": [{"collectionId": collection}], "limit": PAGE,
                 "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]}
        if cursor is not None:
            query["startAt"] = {"values": [{"referenceValue": cursor}], "before": False}
        documents = Query(query, db.root).documents(db, read_time)
        yield documents
        if len(documents) < PAGE:
            return
        cursor = documents[-1]["name"]


def event(document):
    """The vote as generate-export.py reads it (generate.py's flat NDJSON)."""
    fields = document.get("fields", {})
    try:
        rating = fields["rating"]
        micros = times.parse(fields["timestamp"]["timestampValue"])
        return {"id": document["name"].rsplit("/", 1)[1], "joke_id": fields["joke_id"]["stringValue"],
                "rating": int(rating["integerValue"]) if "integerValue" in rating else float(rating["doubleValue"]),
                "device_id": fields["device_id"]["stringValue"], "week_id": fields["week_id"]["stringValue"],
                "timestamp": {"_seconds": micros // times.SECOND, "_nanoseconds": micros % times.SECOND * 1000}}
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{document['name']} is not a vote of the app's shape, "
                         "which the export writer needs") from None


def write(db, collection, read_time, directory, skip=0):
    """The export of the collection at read_time as `directory` (its last part is the export's
    name, as in a bucket), but for its first `skip` documents. Returns the documents written."""
    parent, name = os.path.split(directory.rstrip("/"))
    os.makedirs(parent, exist_ok=True)
    writer = subprocess.Popen([sys.executable, WRITER, parent, "--name", name], stdin=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    count = 0
    try:
        for page in pages(db, collection, read_time):
            kept, skip = page[skip:], max(skip - len(page), 0)
            writer.stdin.write("".join(json.dumps(event(d)) + "\n" for d in kept).encode())
            count += len(kept)
    finally:
        writer.stdin.close()
        said = writer.stderr.read().decode("utf-8", "replace")
        writer.wait()
    if writer.returncode != 0:
        raise OSError(f"generate-export.py failed ({writer.returncode}): {said.strip()[-300:]}")
    return count


class Exports:
    def __init__(self, settings, export_root=None):
        self.settings, self.export_root = settings, export_root
        self.operations = {}
        self.lock = threading.Lock()

    def local(self, prefix):
        if prefix.startswith("/"):
            return prefix
        if prefix.startswith("gs://") and self.export_root:
            return os.path.join(self.export_root, prefix[len("gs://"):])
        return None

    def start(self, db, body, collection, now, check_read_time):
        """exportDocuments: the operation, its export written in the background."""
        ids = body.get("collectionIds") if isinstance(body, dict) else None
        prefix = body.get("outputUriPrefix") if isinstance(body, dict) else None
        if ids != [collection]:
            raise QueryError(f"The simulator exports only collectionIds [\"{collection}\"], not {ids!r}.")
        if not isinstance(prefix, str) or not prefix.startswith(("gs://", "/")):
            raise QueryError("outputUriPrefix must be a gs:// URI (or, in the simulator, a local absolute path).")
        snapshot = now
        if "snapshotTime" in body:
            snapshot = check_read_time(body["snapshotTime"])
            if snapshot % round(self.settings.pitr_granularity * times.SECOND):
                raise QueryError("snapshot_time must be a whole minute.")
        name = f"{db.root.rsplit('/documents', 1)[0]}/operations/ASA{secrets.token_hex(12)}"
        operation = {"name": name, "metadata": {
            "@type": METADATA, "startTime": times.format(now), "operationState": "PROCESSING",
            "collectionIds": ids, "outputUriPrefix": prefix, "snapshotTime": times.format(snapshot)}}
        with self.lock:
            self.operations[name] = operation
            answer = json.loads(json.dumps(operation))
        ready = time.monotonic() + self.settings.export_seconds
        threading.Thread(target=self._run, args=(db, collection, snapshot, prefix, operation, ready),
                         daemon=True).start()
        return answer

    def _run(self, db, collection, snapshot, prefix, operation, ready):
        error, count = None, None
        try:
            directory = self.local(prefix)
            if directory is not None:
                count = write(db, collection, snapshot, directory, self.settings.export_skip)
        except (OSError, ValueError) as failure:
            error = str(failure)
        time.sleep(max(0.0, ready - time.monotonic()))
        with self.lock:
            metadata = operation["metadata"]
            metadata["endTime"] = times.format(db.now())
            if error is not None:
                metadata["operationState"] = "FAILED"
                operation["error"] = {"code": 13, "message": error}
            else:
                metadata["operationState"] = "SUCCESSFUL"
                if count is not None:
                    metadata["progressDocuments"] = {"completedWork": str(count), "estimatedWork": str(count)}
                operation["response"] = {"@type": RESPONSE, "outputUriPrefix": prefix}
            operation["done"] = True

    def get(self, name):
        with self.lock:
            operation = self.operations.get(name)
            return None if operation is None else json.loads(json.dumps(operation))

    @staticmethod
    def emulator_export(db, collection, directory):
        """The emulator's POST /emulator/v1/projects/P:export: firestore_export_SECONDS under the
        (existing) directory, at once, of the collection as it is now."""
        if not os.path.isdir(directory):
            raise QueryError("export_directory must be a directory", "FAILED_PRECONDITION")
        now = db.now()
        write(db, collection, now, os.path.join(directory, f"firestore_export_{now // times.SECOND}"))
