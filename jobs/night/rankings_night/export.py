"""The export method: a managed export of rating_events (exportDocuments) into
RANKINGS_FIRESTORE_BUCKET, waited for and copied into the night's folder, whose root it becomes.
On the emulator, its own export endpoint writes the export into the folder directly."""
import json
import os
import subprocess
import tempfile
import time

from .auth import run_bounded
from .firestore import Firestore
from .statuses import UNAVAILABLE, Failure

COLLECTION = "rating_events"
SECONDS = 20 * 60     # the wait and the copy, inside a try's 25 minutes
POLL_SECONDS = 10


def fetch_export(settings, folder, night, ends, say):
    firestore = Firestore(settings, say)
    record = {"method": "export", "mode": "full", "project": settings.firestore_project,
              "database": settings.firestore_database, "collection": COLLECTION}
    if settings.emulator_host:
        url = f"http://{settings.emulator_host}/emulator/v1/projects/{settings.firestore_project}:export"
        firestore.transport.call("POST", url, {"database": firestore.database_path,
                                               "export_directory": os.path.abspath(folder)})
        inner = [os.path.join(folder, n) for n in os.listdir(folder)]
        if len(inner) != 1 or not os.path.isdir(inner[0]):
            raise Failure(UNAVAILABLE, f"the emulator's export left {len(inner)} entries in {folder}, not 1 folder")
        for name in os.listdir(inner[0]):
            os.rename(os.path.join(inner[0], name), os.path.join(folder, name))
        os.rmdir(inner[0])
        say(f"export: the emulator exported {os.path.basename(inner[0])}")
        return record
    bucket = settings.firestore_bucket
    if not bucket:
        raise Failure(78, "RANKINGS_FIRESTORE_FETCH=export needs RANKINGS_FIRESTORE_BUCKET")
    bucket = bucket.rstrip("/") if bucket.startswith(("gs://", "/")) else "gs://" + bucket.rstrip("/")
    deadline = min(time.monotonic() + SECONDS, ends or float("inf"))
    prefix = f"{bucket}/{night}"
    operation = firestore.call("POST", ":exportDocuments", {"collectionIds": [COLLECTION], "outputUriPrefix": prefix})
    name = operation.get("name", "") if isinstance(operation, dict) else ""
    if not name:
        raise Failure(UNAVAILABLE, f"exportDocuments answered no operation: {json.dumps(operation)[:200]}")
    say(f"export: started {name} into {prefix}")
    while not operation.get("done"):
        if time.monotonic() + POLL_SECONDS > deadline:
            raise Failure(UNAVAILABLE, f"export {name} not done within {SECONDS // 60} minutes "
                                       "(it may still finish in the bucket; the next try starts another)")
        time.sleep(POLL_SECONDS)
        operation = firestore.transport.call("GET", f"{firestore.api}/{name}")
        if not isinstance(operation, dict):
            raise Failure(UNAVAILABLE, f"export {name}: the operation is not an object")
    if "error" in operation:
        error = operation["error"]
        raise Failure(UNAVAILABLE, f"export {name} failed: {error.get('message', error) if isinstance(error, dict) else error}")
    with tempfile.NamedTemporaryFile("w", prefix="rankings-token.") as token_file:
        token_file.write(firestore.credentials.headers().get("Authorization", "").removeprefix("Bearer "))
        token_file.flush()
        command = ["gcloud", "storage", "rsync", "--recursive", f"--access-token-file={token_file.name}", prefix, folder]
        try:
            done = run_bounded(command, max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            raise Failure(UNAVAILABLE, f"gcloud storage rsync {prefix}: not done within the export's "
                                       f"{SECONDS // 60} minutes (stopped)") from None
        except OSError as error:
            raise Failure(UNAVAILABLE, f"cannot run gcloud storage rsync: {error.strerror}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[-500:]
        raise Failure(UNAVAILABLE, f"gcloud storage rsync {prefix} failed: {detail}")
    say(f"export: copied {prefix} into {folder}")
    return record
