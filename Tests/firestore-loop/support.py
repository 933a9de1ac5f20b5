"""What the emulator suites share: the night's programs run as processes with exactly the settings
a test gives them, votes made the way the app writes them, the job's document from a night, and
a metrics file as Prometheus reads it.

    TEST_RANKINGS   the rankings executable (run.sh passes its argument; default .build/debug/rankings)
    TEST_HOOKS      where rankings-fetch-firestore and rankings-publish-firestore are (default
                    jobs/night); an earlier version's folder (git show 9737c29:jobs/firestore/...)
                    shows which checks that version fails
"""
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
sys.path.insert(0, os.path.join(harness.ROOT, "Tests", "night"))
import layered  # noqa: E402 (the tests' own reader of a night's layers)

HOOKS = os.environ.get("TEST_HOOKS") or harness.NIGHT
RANKINGS = os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")
NIGHT = os.path.join(harness.NIGHT, "rankings-night")
FETCH, PUBLISH = "rankings-fetch-firestore", "rankings-publish-firestore"
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


def hook(name, argument, timeout=180, **settings):
    """One of the hooks run to its end (a bound, not a timing assertion) with these settings, the
    rankings executable and short back-offs; .seconds is how long it took, for the log."""
    settings = {"RANKINGS_BIN": RANKINGS, "RANKINGS_FIRESTORE_BACKOFF_SECONDS": "0.1", **settings}
    started = time.monotonic()
    done = harness.run([os.path.join(HOOKS, name), argument], timeout=timeout, env=environment(**settings))
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


def votes(rng, count, oldest_days, newest_days=3):
    """count distinct votes stamped between oldest_days and newest_days ago (outside the default
    48-hour margin unless newest_days is smaller), as a dict id -> fields."""
    now, made = datetime.datetime.now(UTC), {}
    while len(made) < count:
        when = now - datetime.timedelta(seconds=rng.uniform(newest_days * 86400, oldest_days * 86400))
        name, fields = vote(rng.randrange(4000), rng.randrange(300), rng.randrange(1, 30), rng.randint(1, 5), when)
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
    """The lines of a program's standard error holding words."""
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
