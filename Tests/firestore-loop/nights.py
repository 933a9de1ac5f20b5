"""Incremental nights against Google's Firestore emulator: eight nights on 20,000 votes, each
fetched by rankings-fetch-firestore into one folder the way the nightly chain does, and each
incremental one compared with a full read of the same collection at the same moment: the
document the job makes from DIR/current must be the full read's, byte for byte, on every night
but the one COUNT cannot see, and that one until the next scheduled full night, which reports
the drift; each night's rankings-fetch.prom must pass `promtool check metrics` and say what the
night did. Then the 30-day window fetched at the source, against the whole collection read with
--since.

    python nights.py RANKINGS        (alone, with an emulator of its own; run.sh runs it from
                                      loop.py, on the loop's emulator)

Prints one line per check, then `N passed, M failed`; exits 1 on any failure.
"""
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here)
import emulator as emu  # noqa: E402
import faults  # noqa: E402
from checking import check, expect, finish, promtool_samples  # noqa: E402

PROJECT = "demo-rankings-nights"
VOTES = 20_000
hooks = os.path.join(root, "jobs", "firestore")
rankings = sys.argv[1]
UTC = datetime.timezone.utc


def hook(directory, address, **settings):
    env = dict(os.environ, RANKINGS_FIRESTORE_PROJECT=PROJECT, RANKINGS_BIN=rankings,
               RANKINGS_FIRESTORE_BACKOFF_SECONDS="0.1", FIRESTORE_EMULATOR_HOST=address, **settings)
    done = subprocess.run([os.path.join(hooks, "rankings-fetch-firestore"), directory], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise AssertionError(f"fetch into {directory}: exit {done.returncode}: {done.stderr.strip()}")
    with open(os.path.join(directory, "current", ".night.json"), encoding="utf-8") as text:
        return json.load(text)


def document(source, computed_at, *flags):
    done = subprocess.run([rankings, "aggregate", "--computed-at", computed_at, "--allow-empty", *flags, source],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise AssertionError(f"aggregate {source}: exit {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout


def vote_id(device, joke, week):
    return f"D{device:05d}_J{joke:03d}_2026-W{week:02d}"


def run(address):
    """The nights, against the emulator at address, in a project of their own (Tests/firestore-loop/
    loop.py runs them on its emulator, so the script starts one emulator in all)."""
    work = tempfile.mkdtemp(prefix="rankings-firestore-nights.")
    chain = os.path.join(work, "chain")
    rng = random.Random(27)
    try:
        db = emu.client(PROJECT, address)
        events = db.collection("rating_events")
        now = datetime.datetime.now(UTC)

        def vote(device, joke, week, rating, when):
            return vote_id(device, joke, week), {"joke_id": f"J{joke:03d}", "rating": rating,
                                                 "device_id": f"D{device:05d}", "week_id": f"2026-W{week:02d}",
                                                 "timestamp": when}

        def write(votes):
            emu.write(db, "rating_events", votes)

        started = time.monotonic()
        # 20,000 votes over the last 200 days; a device votes on a joke once a week.
        seeded = {}
        while len(seeded) < VOTES:
            when = now - datetime.timedelta(seconds=rng.uniform(3 * 86400, 200 * 86400))
            name, fields = vote(rng.randrange(4000), rng.randrange(300), rng.randrange(1, 30), rng.randint(1, 5), when)
            seeded[name] = fields
        write(seeded.items())
        names = sorted(seeded)
        print(f"# emulator at {address}, seeded {len(seeded)} votes in {time.monotonic() - started:.1f}s",
              flush=True)

        # The chain's nights write rankings-fetch.prom beside RANKINGS_METRICS, as the units do.
        settings = {"RANKINGS_FIRESTORE_MARGIN": "48h", "RANKINGS_METRICS": os.path.join(work, "rankings.prom")}
        history = []

        def night(number, changes, expect_mode, expect_drift=0, same=True, counted=False, **extra):
            """Applies tonight's changes, fetches into the chain, reads the whole collection into a
            folder of its own, and compares what the job makes of each. A night that is itself a
            full read is its own reference: a second full read at the same moment is the same
            query at another readTime (and the hook holds each full read to COUNT), so it is not
            read twice."""
            changes()
            if counted:
                with faults.FaultyProxy(address, {}) as proxy:
                    record = hook(chain, proxy.address, **settings, **extra)
                    returned = proxy.documents
            else:
                record = hook(chain, address, **settings, **extra)
                returned = None
            expect("mode", record["mode"], expect_mode)
            expect("drift", record["drift_documents"], expect_drift)
            samples = promtool_samples(os.path.join(work, "rankings-fetch.prom"))
            expect("rankings-fetch.prom", {k: samples.get(f"rankings_fetch_{k}") for k in
                                           ("last_run_exit_status", "full", "drift_documents", "documents_read",
                                            "snapshot_documents")},
                   {"last_run_exit_status": "0", "full": "1" if expect_mode == "full" else "0",
                    "drift_documents": str(expect_drift), "documents_read": str(record["documents_read"]),
                    "snapshot_documents": str(record["snapshot_documents"])})
            if expect_mode != "full":
                full_dir = os.path.join(work, f"full-{number}")
                full = hook(full_dir, address, RANKINGS_FIRESTORE_INCREMENTAL="no")
                expect("the full read's mode", full["mode"], "full")
                stamp = datetime.datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                mine = document(os.path.join(chain, "current"), stamp)
                theirs = document(os.path.join(full_dir, "current"), stamp)
                shutil.rmtree(full_dir)
                # COUNT holds every night to the collection's size, the blind spot's too.
                expect("documents in the snapshot", record["snapshot_documents"], full["snapshot_documents"])
                expect("the document from current is the full read's", mine == theirs, same)
            else:
                # The whole collection, and before it the incremental read COUNT refused, if any.
                expect("a full night reads the whole collection", record["documents_read"] >= record["snapshot_documents"], True)
            if returned is not None:
                expect("documents read (the hook's count against the emulator's answers)", record["documents_read"], returned)
            history.append(record)
            return (f"{record['mode']}, read {record['documents_read']} of {record['snapshot_documents']}, "
                    f"drift {record['drift_documents']}")

        def nothing():
            pass

        check("night 1: no previous night, so a full read", lambda: night(1, nothing, "full"))

        def new_votes():
            # 1 % new votes, stamped within the last hour (what tonight's app wrote).
            write(vote(5000 + i, rng.randrange(300), 30, rng.randint(1, 5),
                       datetime.datetime.now(UTC) - datetime.timedelta(minutes=rng.uniform(0, 60)))
                  for i in range(VOTES // 100))

        def night2():
            detail = night(2, new_votes, "incremental", counted=True)
            record = history[-1]
            if record["documents_read"] > 0.03 * record["snapshot_documents"]:
                raise AssertionError(f"read {record['documents_read']} of {record['snapshot_documents']}: over 3 %")
            expect("watermark", record["watermark"] is not None, True)
            return detail
        check("night 2: 1 % new votes, read incrementally (at most 3 % of the collection)", night2)

        def re_ratings():
            # A device re-rating a joke in the same week keeps the document id; rating and time change.
            chosen = rng.sample(names, 100)
            write((n, dict(seeded[n], rating=6 - seeded[n]["rating"], timestamp=datetime.datetime.now(UTC)))
                  for n in chosen)
        check("night 3: 100 re-ratings of existing documents", lambda: night(3, re_ratings, "incremental"))

        def late_votes():
            # Written tonight with a device's clock a day behind, or synced late: inside the margin.
            write(vote(6000 + i, rng.randrange(300), 30, rng.randint(1, 5),
                       datetime.datetime.now(UTC) - datetime.timedelta(hours=rng.uniform(20, 40)))
                  for i in range(150))
        check("night 4: votes stamped inside the margin but before the last readTime",
              lambda: night(4, late_votes, "incremental"))

        def deletions_and_an_old_vote():
            for n in names[:10]:
                events.document(n).delete()
            write([vote(7000, 1, 1, 5, now - datetime.timedelta(days=5))])
        check("night 5: 10 deletions and a vote stamped before the margin: COUNT differs, a full read, drift 11",
              lambda: night(5, deletions_and_an_old_vote, "full", expect_drift=11))

        def blind_spot():
            # One deletion and one write outside the margin: the count is the same. The deleted vote
            # is Hilarious and the new one Horrible, so the totals tell them apart.
            gone = next(n for n in names[10:] if seeded[n]["rating"] >= 4)
            events.document(gone).delete()
            write([vote(7001, 2, 1, 1, now - datetime.timedelta(days=6))])
        check("night 6: one deletion and one old write (COUNT's blind spot): incremental, and wrong until the next full night",
              lambda: night(6, blind_spot, "incremental", same=False))

        check("night 7: a quiet night: still the blind spot's error", lambda: night(7, new_votes, "incremental", same=False))

        check("night 8: a scheduled full night (3 nights after the last, RANKINGS_FIRESTORE_FULL_EVERY=3) reports drift 2 and heals",
              lambda: night(8, new_votes, "full", expect_drift=2, RANKINGS_FIRESTORE_FULL_EVERY="3"))

        def window():
            # The 30-day board at the source: only the window's votes are read, and the document is the
            # one the job makes from the whole collection with --since -30d.
            # Night 8 was a full read and nothing was written since: the chain holds the whole
            # collection.
            folder = os.path.join(work, "monthly")
            record = hook(folder, address, RANKINGS_FIRESTORE_SINCE="-30d")
            expect("mode", record["mode"], "window")
            stamp = datetime.datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            full = history[-1]
            expect("night 8's mode", full["mode"], "full")
            mine = document(os.path.join(folder, "current"), stamp, "--since", "-30d")
            theirs = document(os.path.join(chain, "current"), stamp, "--since", "-30d")
            expect("the monthly document", mine == theirs, True)
            if not 0 < record["documents_read"] < full["snapshot_documents"] * 0.3:
                raise AssertionError(f"read {record['documents_read']} of {full['snapshot_documents']}")
            return f"read {record['documents_read']} of {full['snapshot_documents']}"
        check("RANKINGS_FIRESTORE_SINCE=-30d reads the window only, and the board equals --since -30d on everything",
              window)

        def boundary():
            # A vote exactly at the window's start is in it, as with the job's --since; a microsecond
            # earlier is not.
            edge = (now + datetime.timedelta(days=10)).replace(microsecond=123456)
            write([vote(8000, 3, 2, 5, edge), vote(8001, 3, 2, 5, edge - datetime.timedelta(microseconds=1))])
            folder = os.path.join(work, "edge")
            since = edge.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            record = hook(folder, address, RANKINGS_FIRESTORE_SINCE=since)
            with open(os.path.join(folder, "current", "rating_events.ndjson"), encoding="utf-8") as text:
                got = {json.loads(line)["name"].rsplit("/", 1)[1] for line in text}
            expect("the vote at the start", vote_id(8000, 3, 2) in got, True)
            expect("the vote a microsecond before", vote_id(8001, 3, 2) in got, False)
            expect("documents read", record["documents_read"], len(got))
        check("a vote exactly at RANKINGS_FIRESTORE_SINCE is fetched, one a microsecond earlier is not", boundary)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    server = emu.Emulator()
    try:
        server.start()
        run(server.address)
    finally:
        server.stop()
    finish()
