"""What the emulator suites share: the night's steps in this process (fetch.run, publish.publish
on the night's Firestore client, their lines as the night logs them), the whole night as a process
(`rankings-night run --environment`) with exactly the settings a test gives it, votes made the way
the app writes them, the job's document from a night, and a metrics file as Prometheus reads it.

    TEST_RANKINGS   the rankings executable (run.sh passes its argument; default .build/debug/rankings):
                    the night finds it on PATH, as from a checkout
"""
import collections
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
sys.path.insert(0, os.path.join(harness.ROOT, "Tests", "night"))
import layered  # noqa: E402 (the tests' own reader of a night's layers)
from rankings_night import fetch as fetching, publish as publishing  # noqa: E402
from rankings_night.firestore import Firestore, now  # noqa: E402
from rankings_night.log import Log  # noqa: E402
from rankings_night.statuses import status_of  # noqa: E402
from rankings_night.stop import STOP  # noqa: E402
from rankings_night.transport import Retry  # noqa: E402

RANKINGS = os.path.abspath(os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings"))
NIGHT = os.path.join(harness.NIGHT, "rankings-night")
SAMPLE = os.path.join(harness.ROOT, "sample-data")
UTC = datetime.timezone.utc

# All a child keeps of the test's own environment: never a RANKINGS_* variable (the programs refuse
# one they do not know, and one left in the caller's shell would change what is tested), nor
# FIRESTORE_EMULATOR_HOST (Google's client in this process sets it) nor an HTTP proxy.
KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")


def environment(**settings):
    """The test's PATH and locale, and exactly these settings; a setting given as None is left out."""
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    env.update({k: str(v) for k, v in settings.items() if v is not None})
    return env


class Said:
    """What the night's steps say, written as its log writes them (`rankings-night: [warning: ]STEP:
    TEXT`): the `say` of a client (its retries) and of the steps run with it; `step` names the next
    lines'. A file appended to, so that the full read's forked streams say theirs there too."""

    def __init__(self, step="fetch"):
        fd, path = tempfile.mkstemp(prefix="rankings-said.")
        self.step, self.stream, self.reader = step, open(path, "a", encoding="utf-8"), open(path, encoding="utf-8")
        os.close(fd)
        os.unlink(path)
        self.log = Log(stream=self.stream)

    def __call__(self, text, severity="INFO"):
        self.log(f"{self.step}: {text}", severity)

    @property
    def text(self):
        self.reader.seek(0)
        return self.reader.read()


def connect(project, address, attempts=5, backoff=0.1, timeout=60.0):
    """The night's Firestore client of the emulator (or a proxy in front of it) at address, as
    Firestore.from_settings makes it (no token), with short back-offs; `.said` is what it says."""
    said = Said()
    firestore = Firestore(project, api=f"http://{address}/v1", retry=Retry(attempts=attempts, initial=backoff),
                          timeout=timeout, say=said)
    firestore.said = said
    return firestore


# A step run in this process, as a finished program reads: its status (the night's mapping of what
# it raised), its lines (and the night's error line when it failed), what it returned or raised.
Step = collections.namedtuple("Step", "returncode stderr result error")


def step(name, firestore, work):
    """work() as the night's step `name` runs it on `firestore`: a Step, whatever it raised."""
    said, start = firestore.said, len(firestore.said.text)
    said.step = name
    STOP.reset()
    try:
        result, error, status = work(), None, 0
    except Exception as raised:  # noqa: BLE001 (what the night maps to a status; a bug is 70)
        result, error, status = getattr(raised, "record", None), raised, status_of(raised)
        said.log.error(f"{name}: {raised}")
    return Step(status, said.text[start:], result, error)


def fetch(directory, firestore, full_because=None, compressed=False):
    """fetch.run into DIR in this process: a Step whose result is the record (or the failed try's)."""
    return step("fetch", firestore, lambda: fetching.run(directory, firestore, firestore.said, full_because, compressed))


def publish(firestore, path, name="all_time", read_time=None, max_drop=None):
    """publish.publish of the board at path as weekly_rankings/NAME, stamped read_time (default:
    Firestore's now), checked by the real `rankings check`: a Step whose result is "written" or
    "superseded"."""
    read_time = read_time or now(firestore, "rating_events")
    return step("publish", firestore, lambda: publishing.publish(firestore, path, name, read_time, max_drop, RANKINGS,
                                                                 firestore.said))


def night_process(state, project, address, *flags, **settings):
    """(argv, environment) of `rankings-night run --environment [-- FLAGS]` on STATE against the
    emulator (or a proxy) at address, no retries, the job first on PATH, and exactly these settings."""
    if os.path.basename(RANKINGS) != "rankings":
        raise AssertionError(f"TEST_RANKINGS={RANKINGS}: the night finds its job on PATH by the name rankings")
    env = environment(**{"RANKINGS_STATE_DIRECTORY": state, "RANKINGS_FIRESTORE_PROJECT": project,
                         "FIRESTORE_EMULATOR_HOST": address, "RANKINGS_RETRIES": "0", **settings})
    env["PATH"] = os.path.dirname(RANKINGS) + os.pathsep + env.get("PATH", os.defpath)
    return [NIGHT, "run", "--environment"] + (["--", *flags] if flags else []), env


def night(state, project, address, *flags, timeout=300, **settings):
    """The whole night run to its end (a bound, not a timing assertion); .seconds, for the log."""
    argv, env = night_process(state, project, address, *flags, **settings)
    started = time.monotonic()
    done = harness.run(argv, timeout=timeout, env=env)
    done.seconds = time.monotonic() - started
    return done


def record(directory):
    """The record of the night DIR/current names."""
    with open(os.path.join(directory, "current", ".night.json"), encoding="utf-8") as text:
        return json.load(text)


def names(folder):
    """The documents of a night's snapshot (its layers, the later winning: Tests/night/layered.py),
    by their paths below .../documents/."""
    return [d["name"].split("/documents/", 1)[1] for d in layered.documents(folder)]


def document(source, computed_at, *flags):
    """The job's all-time document from a night's folder, as bytes."""
    done = subprocess.run([RANKINGS, "aggregate", "--computed-at", computed_at, "--allow-empty", *flags, source],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise AssertionError(f"aggregate {source}: exit {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout


def stamp():
    return datetime.datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def device_id(device):
    """The app's device ids are UUIDs in capitals: device number n's, always the same."""
    digits = hashlib.md5(f"device {device}".encode()).hexdigest().upper()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def vote(device, joke, week, rating, when):
    """(id, fields) of a vote as the app writes it: one a device a joke a week (DEVICE_JOKE_WEEK),
    the rating an integer, the time a Timestamp."""
    return (f"{device_id(device)}_J{joke:03d}_2026-W{week:02d}",
            {"joke_id": f"J{joke:03d}", "rating": rating, "device_id": device_id(device),
             "week_id": f"2026-W{week:02d}", "timestamp": when})


def votes(rng, count, oldest_days, newest_days=3, jokes=300):
    """count distinct votes on `jokes` jokes stamped between oldest_days and newest_days ago
    (outside the 48-hour margin unless newest_days is smaller), as a dict id -> fields. (A whole
    night's proof asks 2 COUNTs a joke a board: fewer jokes, a shorter night.)"""
    now, made = datetime.datetime.now(UTC), {}
    while len(made) < count:
        when = now - datetime.timedelta(seconds=rng.uniform(newest_days * 86400, oldest_days * 86400))
        name, fields = vote(rng.randrange(4000), rng.randrange(jokes), rng.randrange(1, 30), rng.randint(1, 5), when)
        made[name] = fields
    return made


def rest_value(value):
    if isinstance(value, bool):
        return {"booleanValue": value}
    if isinstance(value, int):
        return {"integerValue": str(value)}
    if isinstance(value, datetime.datetime):
        return {"timestampValue": value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}
    return {"stringValue": value}


def written(project, collection, folder):
    """The collection as the test wrote it, as a night's folder of REST Documents: what a
    complete fetch reads."""
    os.makedirs(folder, exist_ok=True)
    prefix = f"projects/{project}/databases/(default)/documents/rating_events/"
    with open(os.path.join(folder, "rating_events.ndjson"), "w", encoding="utf-8") as out:
        for name in sorted(collection):
            out.write(json.dumps({"name": prefix + name, "fields": {k: rest_value(v) for k, v in
                                                                   collection[name].items()}}) + "\n")
    return folder


def promtool_samples(path):
    """The metrics file at path as Prometheus reads it: `promtool check metrics` (Debian's
    prometheus, installed by run.sh) must print nothing and exit 0, as for the job's own file in
    Tests/metrics/run.sh. Returns its samples, name to value as written."""
    with open(path, "rb") as metrics:
        done = subprocess.run(["promtool", "check", "metrics"], stdin=metrics, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0 or done.stdout:
        raise AssertionError(f"promtool check metrics <{path}: exit {done.returncode}: {done.stdout.strip()}")
    with open(path, encoding="utf-8") as metrics:
        return dict(line.split() for line in metrics if not line.startswith("#"))


def said(done, words):
    """The lines of a program's standard error (or a Step's) holding words."""
    return [line for line in done.stderr.splitlines() if words in line]


def start_emulator():
    """Google's emulator on a free port, stopped again when it does not come up."""
    import emulator
    server = emulator.Emulator()
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server
