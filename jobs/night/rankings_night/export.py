"""The export method: exportDocuments of rating_events into RANKINGS_FIRESTORE_BUCKET at a snapshotTime
(a whole minute: without one an export is no consistent view), copied into the night's folder, and
proven: its entities, as `rankings aggregate` reads them, as many as Firestore counts then. The
emulator's own endpoint exports into the folder directly (no snapshotTime: nothing may write)."""
import json
import os
import shutil
import subprocess
import tempfile
import time

from .auth import run_bounded
from .firestore import Firestore, count, now
from .statuses import CONFIG, UNAVAILABLE, Failure

COLLECTION = "rating_events"
SECONDS = 20 * 60     # the wait and the copy, inside a try's 25 minutes
POLL_SECONDS = 10


def fetch_export(settings, folder, night, ends, say):
    firestore = Firestore(settings, say)
    firestore.transport.deadline = ends
    snapshot_time = now(firestore, COLLECTION, whole_minute=not settings.emulator_host)
    if settings.emulator_host:
        emulator_export(settings, firestore, folder, say)
    else:
        managed_export(settings, firestore, folder, night, snapshot_time, ends, say)
    counted = sum(c for _, _, c in count(firestore, COLLECTION, snapshot_time, None, None,
                                         settings.firestore_streams, say))
    entities = rating_events_in(settings, folder)
    if entities != counted:
        raise Failure(UNAVAILABLE, f"export: the night is not whole: the export holds {entities} {COLLECTION} "
                                   f"entities, but Firestore counts {counted} at its snapshotTime {snapshot_time}")
    say(f"export: {entities} {COLLECTION} entities at snapshotTime {snapshot_time}, as many as Firestore counts")
    return {"method": "export", "mode": "full", "project": settings.firestore_project, "read_time": snapshot_time,
            "database": settings.firestore_database, "collection": COLLECTION, "snapshot_documents": entities,
            "documents_read": entities}


def rating_events_in(settings, folder):
    """The export's rating_events entities as `rankings aggregate` reads them (valid and bad, every
    file held to the metadata's counts), each document once (a file copied over another is not)."""
    with tempfile.NamedTemporaryFile(prefix="rankings-export-report.", suffix=".json") as report:
        done = subprocess.run([settings.bin, "aggregate", "--quiet", "--allow-empty", "--max-invalid", "1000000000",
                               "--dedupe", "id", "--report", report.name, "--output", os.devnull, folder],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"status {done.returncode}"]
            raise Failure(UNAVAILABLE, f"export: the copy in {folder} does not read whole: {said[0]}")
        with open(report.name, encoding="utf-8") as text:
            counts = json.load(text)
    if counts["duplicates_removed"]:
        raise Failure(UNAVAILABLE, f"export: the copy in {folder} holds {counts['duplicates_removed']} documents twice")
    return counts["valid_events"] + counts["bad_lines"]


def emulator_export(settings, firestore, folder, say):
    url = f"http://{settings.emulator_host}/emulator/v1/projects/{settings.firestore_project}:export"
    firestore.transport.call("POST", url, {"database": firestore.database_path, "export_directory": os.path.abspath(folder)})
    inner = [os.path.join(folder, n) for n in os.listdir(folder)]
    if len(inner) != 1 or not os.path.isdir(inner[0]):
        raise Failure(UNAVAILABLE, f"the emulator's export left {len(inner)} entries in {folder}, not 1 folder")
    for name in os.listdir(inner[0]):
        os.rename(os.path.join(inner[0], name), os.path.join(folder, name))
    os.rmdir(inner[0])
    say(f"export: the emulator exported {os.path.basename(inner[0])}")


def managed_export(settings, firestore, folder, night, snapshot_time, ends, say):
    bucket = settings.firestore_bucket
    if not bucket:
        raise Failure(CONFIG, "RANKINGS_FIRESTORE_FETCH=export needs RANKINGS_FIRESTORE_BUCKET")
    bucket = bucket.rstrip("/") if bucket.startswith("gs://") else "gs://" + bucket.rstrip("/")
    deadline = min(time.monotonic() + SECONDS, ends or float("inf"))
    prefix = f"{bucket}/{night}"
    operation = firestore.call("POST", ":exportDocuments", {"collectionIds": [COLLECTION], "outputUriPrefix": prefix,
                                                            "snapshotTime": snapshot_time})
    name = operation.get("name", "") if isinstance(operation, dict) else ""
    if not name:
        raise Failure(UNAVAILABLE, f"exportDocuments answered no operation: {json.dumps(operation)[:200]}")
    say(f"export: started {name} into {prefix} at snapshotTime {snapshot_time}")
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
    mount = settings.firestore_bucket_mount
    if mount:
        # The bucket mounted here (Cloud Storage FUSE; a Cloud Run job's volume): copied as it is.
        shutil.copytree(os.path.join(mount, prefix.split("/", 3)[3]), folder, dirs_exist_ok=True)
    else:
        copy_from_bucket(firestore, prefix, folder, deadline)
    say(f"export: copied {prefix} into {folder}")


def copy_from_bucket(firestore, prefix, folder, deadline):
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
        raise Failure(UNAVAILABLE, f"gcloud storage rsync {prefix} failed: "
                                   f"{done.stderr.decode('utf-8', 'replace').strip()[-500:]}")
