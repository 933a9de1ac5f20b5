"""What this suite's tests share: the real night (`rankings-night`, as a process, with exactly the
settings a test gives it) against Google's emulator, each test in a Firestore project and a state
directory of its own, every call of the night through faults.py's proxy (Tests/firestore-loop), so
that a test sees what the night asked, and can refuse, hold or slow it.

    TEST_RANKINGS   the job (run.sh passes its argument); its directory goes first on PATH, where
                    a checkout's night finds `rankings`
    TEST_NIGHT      the rankings-night to run (default: this checkout's jobs/night/rankings-night)
"""
import concurrent.futures
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "firestore-loop"))
import harness  # noqa: E402
import emulator as emu  # noqa: E402 (Google's emulator, started once or shared: RANKINGS_TEST_EMULATOR)
import faults  # noqa: E402 (the proxy)

RANKINGS = os.path.realpath(os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug",
                                                                              "rankings"))
NIGHT = os.environ.get("TEST_NIGHT") or os.path.join(harness.NIGHT, "rankings-night")
UTC = datetime.timezone.utc
DAY = 86400
# A child keeps only these of the test's environment: never a RANKINGS_* variable, nor the
# FIRESTORE_EMULATOR_HOST Google's client sets in this process.
KEPT = ("HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")
RUN = f"{os.getpid() % 100000}"     # project ids differ between runs on one emulator
server = work = None


def start():
    """setUpModule's: the emulator (the shared one when RANKINGS_TEST_EMULATOR names it) and a folder."""
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-night.")
    server = emu.Emulator()
    try:
        server.start()
    except BaseException:
        server.stop()
        raise


def stop():
    import shutil
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def environment(settings):
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    env["PATH"] = os.path.dirname(RANKINGS) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")
    env.update({k: str(v) for k, v in settings.items() if v is not None})
    return env


def device_id(n):
    digits = hashlib.md5(f"device {n}".encode()).hexdigest().upper()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def week_id(when):
    year, week, _ = when.isocalendar()
    return f"{year:04d}-W{week:02d}"


def votes(rng, count, oldest_days, newest_days=3, jokes=20):
    """count votes as the app writes them (one a device a joke a week, DEVICE_JOKE_WEEK; an integer
    rating; a Timestamp) stamped between oldest_days and newest_days ago, over few jokes so that the
    proof asks few COUNTs: {id: fields}."""
    now, made = datetime.datetime.now(UTC), {}
    while len(made) < count:
        when = now - datetime.timedelta(seconds=rng.uniform(newest_days * DAY, oldest_days * DAY))
        device, joke = device_id(rng.randrange(10**6)), f"J{rng.randrange(jokes):03d}"
        made[f"{device}_{joke}_{week_id(when)}"] = {"joke_id": joke, "rating": rng.randint(1, 5), "device_id": device,
                                                   "week_id": week_id(when), "timestamp": when}
    return made


def write(db, documents, collection="rating_events"):
    """(id, fields) pairs set in commits of 500 (the most one takes), four at once."""
    documents = list(documents)

    def commit(chunk):
        batch = db.batch()
        for name, fields in chunk:
            batch.set(db.collection(collection).document(name), fields)
        batch.commit()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(commit, [documents[i:i + 500] for i in range(0, len(documents), 500)]))
    return len(documents)


def rest(project, path):
    """A document as the emulator's REST API gives it (its bytes: fields, createTime, updateTime),
    read around the proxy; None when there is none."""
    url = f"http://{server.address}/v1/projects/{project}/databases/(default)/documents/{path}"
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def timestamp(value):
    """A REST timestampValue in nanoseconds since the epoch."""
    whole, _, fraction = value.rstrip("Z").partition(".")
    seconds = datetime.datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp()
    return int(seconds) * 10**9 + int(fraction.ljust(9, "0")[:9] or 0)


def samples(path):
    """The metrics file's samples, `name{labels}` to the value as written."""
    with open(path, encoding="utf-8") as text:
        return dict(line.split() for line in text if line.strip() and not line.startswith("#"))


def warnings(done):
    """The night's WARNING lines (plain form: `rankings-night: warning: ...`)."""
    return [line for line in done.stderr.splitlines() if line.startswith("rankings-night: warning: ")]


def errors(done):
    return [line for line in done.stderr.splitlines() if line.startswith("rankings-night: error: ")]


class Held:
    """A proxy rule's function that holds the request it is given until released (or 60 s)."""

    def __init__(self):
        self.arrived, self.released = threading.Event(), threading.Event()

    def __call__(self):
        self.arrived.set()
        self.released.wait(60)


def refusal(status, word, message):
    return status, {"error": {"code": status, "message": message, "status": word}}


def filter_values(call):
    """{field: [value...]} of the fieldFilters anywhere in a call's query."""
    found = {}

    def walk(node):
        if isinstance(node, dict):
            if "fieldFilter" in node:
                f = node["fieldFilter"]
                found.setdefault(f["field"]["fieldPath"], []).append(f.get("value"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(call.query.get("where"))
    return found


def needs_index(call):
    """A COUNT Firestore serves only with a composite index: a rating range with a joke_id's
    equality or a timestamp's range beside it (the proof's per-joke and 30-day COUNTs)."""
    fields = filter_values(call) if call.kind == "count" else {}
    return "rating" in fields and ("joke_id" in fields or "timestamp" in fields)


def proof_count(call):
    """A COUNT of the proof (a rating range), not the index probe's (joke_id "" or the year 9999)."""
    fields = filter_values(call) if call.kind == "count" else {}
    probe = {"stringValue": ""} in fields.get("joke_id", []) or \
        any("9999" in json.dumps(v) for v in fields.get("timestamp", []))
    return "rating" in fields and not probe


NO_INDEX = refusal(400, "FAILED_PRECONDITION", "The query requires an index. You can create it here: "
                                               "https://console.firebase.google.com/project/demo/firestore/indexes")


class Project:
    """One test's Firestore project (its own id on the emulator) and state directory."""

    def __init__(self, name):
        self.project = f"n{RUN}-{name}"[:60]
        self.folder = tempfile.mkdtemp(prefix=f"{name}.", dir=work)
        self.state = os.path.join(self.folder, "state")
        self.metrics = os.path.join(self.state, "rankings.prom")
        self.db = emu.client(self.project, server.address)

    def settings(self, proxy, **more):
        """The night's settings of this project through `proxy`; more given as None are left out."""
        settings = {"RANKINGS_FIRESTORE_PROJECT": self.project, "FIRESTORE_EMULATOR_HOST": proxy.address,
                    "RANKINGS_STATE_DIRECTORY": self.state, "RANKINGS_RETRIES": "0", "RANKINGS_METRICS": self.metrics}
        settings.update(more)
        return {k: v for k, v in settings.items() if v is not None}

    def config(self, lines, name="rankings.conf"):
        """A configuration file of these KEY=VALUE lines (values with spaces quoted)."""
        path = os.path.join(self.folder, name)
        with open(path, "w", encoding="utf-8") as out:
            for key, value in (lines.items() if isinstance(lines, dict) else lines):
                out.write(f'{key}="{value}"\n' if " " in str(value) or "(" in str(value) else f"{key}={value}\n")
        return path

    def night(self, *argv, settings=None, timeout=240, program=None, cwd=None):
        """`rankings-night ARGV...` run to its end (a bound, not a timing assertion), with exactly these
        settings in its environment; .seconds is how long it took."""
        started = time.monotonic()
        done = harness.run((program or [NIGHT]) + list(argv), timeout=timeout, env=environment(settings or {}),
                           cwd=cwd or self.folder)
        done.seconds = time.monotonic() - started
        return done

    def run(self, proxy, *extra, **more):
        """One night with --environment: this project through `proxy`, the settings `more` on top."""
        return self.night("run", "--environment", *extra, settings=self.settings(proxy, **more))

    def start(self, proxy, **more):
        """The same night started, not waited for (its output in files): a Popen with .out()."""
        out = open(os.path.join(self.folder, "night.out"), "w+")
        process = subprocess.Popen([NIGHT, "run", "--environment"], env=environment(self.settings(proxy, **more)),
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.folder)

        def said():
            out.seek(0)
            return out.read()
        process.said = said
        return process

    def history(self, proxy, **more):
        """`rankings-night status --json` of this project's state: the nights, oldest first."""
        done = self.night("status", "--environment", "--json", "-n", "20", settings=self.settings(proxy, **more))
        if done.returncode != 0:
            raise AssertionError(f"status --json: exit {done.returncode}: {done.stderr}")
        return json.loads(done.stdout)

    def status(self, proxy, **more):
        done = self.night("status", "--environment", "-n", "1", settings=self.settings(proxy, **more))
        if done.returncode != 0:
            raise AssertionError(f"status: exit {done.returncode}: {done.stderr}")
        return done.stdout

    def document(self, name="all_time"):
        return rest(self.project, f"weekly_rankings/{name}")

    def board(self, role="all_time"):
        with open(os.path.join(self.state, f"{role}.json"), encoding="utf-8") as text:
            return json.load(text)

    def read_time(self):
        """The readTime of the night STATE/firestore/current names."""
        with open(os.path.join(self.state, "firestore", "current", ".night.json"), encoding="utf-8") as text:
            return json.load(text)["read_time"]

    def record(self):
        with open(os.path.join(self.state, "firestore", "current", ".night.json"), encoding="utf-8") as text:
            return json.load(text)


def proxy():
    return faults.FaultyProxy(server.address)

