"""What a night costs against Google's Firestore emulator: a full night, then an incremental
night after 1 % new or changed votes, each as the nightly chain runs it (the fetch hook, the job
on DIR/current, the publish hook), with documents read and wall time of each step.

    bench/fetch-nights.sh [--votes 100000] [--rounds 3]

Run by fetch-nights.sh inside the Firestore client's virtual environment; prints a Markdown
table. Each round: a full night (RANKINGS_FIRESTORE_INCREMENTAL=no into a fresh DIR), 1 % of the
collection written (half new votes, half re-ratings, stamped now), then an incremental night
into the chain's DIR. Medians over the rounds.
"""
import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(root, "Tests", "firestore-loop"))
import emulator as emu  # noqa: E402

PROJECT = "demo-rankings-bench"
UTC = datetime.timezone.utc
hooks = os.path.join(root, "jobs", "night")


def timed(argv, env):
    started = time.monotonic()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{argv[0]}: exit {done.returncode}: {done.stderr.strip()}")
    return time.monotonic() - started, done


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="rankings-fetch-nights.")
    server = emu.Emulator()
    rng = random.Random(2711)
    try:
        server.start()
        db = emu.client(PROJECT, server.address)
        events = db.collection("rating_events")
        now = datetime.datetime.now(UTC)

        def write(votes):
            emu.write(db, "rating_events", votes)

        def vote(device, joke, when):
            return (f"D{device:06d}_J{joke:03d}_2026-W01",
                    {"joke_id": f"J{joke:03d}", "rating": rng.randint(1, 5), "device_id": f"D{device:06d}",
                     "week_id": "2026-W01", "timestamp": when})

        started = time.monotonic()
        names = []
        seeded = (vote(i, rng.randrange(400), now - datetime.timedelta(seconds=rng.uniform(3 * 86400, 400 * 86400)))
                  for i in range(options.votes))
        seeded = list(seeded)
        names = [n for n, _ in seeded]
        write(seeded)
        print(f"# seeded {options.votes} votes in {time.monotonic() - started:.0f} s", file=sys.stderr)

        env = dict(os.environ, RANKINGS_FIRESTORE_PROJECT=PROJECT, FIRESTORE_EMULATOR_HOST=server.address,
                   RANKINGS_BIN=options.rankings)
        chain = os.path.join(work, "chain")
        rows = {"full": [], "incremental": []}
        next_device = options.votes

        def night(directory, label, **settings):
            fetch, _ = timed([os.path.join(hooks, "rankings-fetch-firestore"), directory], dict(env, **settings))
            with open(os.path.join(directory, "current", ".night.json"), encoding="utf-8") as text:
                record = json.load(text)
            out = os.path.join(work, "all_time.json")
            job, _ = timed([options.rankings, "aggregate", "--output", out, os.path.join(directory, "current")], env)
            publish, _ = timed([os.path.join(hooks, "rankings-publish-firestore"), out], env)
            if record["mode"] != label:
                sys.exit(f"expected a {label} night, got {record['mode']}")
            rows[label].append((record["documents_read"], record["snapshot_documents"], fetch, job, publish))

        night(chain, "full")                       # the chain's first night
        for _ in range(options.rounds):
            full_dir = os.path.join(work, "full")
            shutil.rmtree(full_dir, ignore_errors=True)
            night(full_dir, "full", RANKINGS_FIRESTORE_INCREMENTAL="no")
            changed = options.votes // 100
            stamp = datetime.datetime.now(UTC)
            fresh = [vote(next_device + i, rng.randrange(400), stamp) for i in range(changed // 2)]
            next_device += len(fresh)
            again = [(n, {"joke_id": "J001", "rating": rng.randint(1, 5), "device_id": n[:7],
                          "week_id": "2026-W01", "timestamp": stamp}) for n in rng.sample(names, changed - len(fresh))]
            write(fresh + again)
            night(chain, "incremental")
        rows["full"] = rows["full"][1:]             # the chain's first night was not a round

        print(f"| night ({options.votes:,} votes, {options.rounds} rounds, medians) | documents read | "
              f"of the snapshot | fetch s | job s | publish s | chain s |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, values in rows.items():
            read, held, fetch, job, publish = (statistics.median(v) for v in zip(*values))
            print(f"| {label} | {read:,.0f} | {held:,.0f} | {fetch:.2f} | {job:.2f} | {publish:.2f} | "
                  f"{fetch + job + publish:.2f} |")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
