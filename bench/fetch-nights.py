"""What a night costs against Google's Firestore emulator: a full night, then an incremental
night after 1 % new or changed votes, each the whole night as 0.5 runs it (`rankings-night run
--environment`: fetch into STATE/firestore, the job on its current night, the board's proof,
the publish), with documents read and wall time of each step.

    bench/fetch-nights.sh [--votes 100000] [--rounds 3]

Run by fetch-nights.sh inside the Firestore client's virtual environment; prints a Markdown
table. Each round: a full night (a fresh state directory: with no night to build on, 0.5 reads
everything; 0.4 forced it with RANKINGS_FIRESTORE_INCREMENTAL=no), 1 % of the collection written
(half new votes, half re-ratings, stamped now), then an incremental night in the chain's state
directory. Medians over the rounds. 0.4's chain was three programs (the fetch hook, the job, the
publish hook), each timed from outside; 0.5's is one, so each step's seconds are the ones the
night's history keeps, and the night's own steps are the 0.4 chain's plus the proof (a column of
its own; `night s` is the night's whole wall time, from its history). The fetch step also asks
the proof's probe COUNT first, as every 0.5 night does.
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
sys.path[:0] = [os.path.join(root, "Tests", "firestore-loop"), os.path.join(root, "jobs", "night")]
import emulator as emu  # noqa: E402
from rankings_night import paths  # noqa: E402

PROJECT = "demo-rankings-bench"
UTC = datetime.timezone.utc
NIGHT = os.path.join(root, "jobs", "night", "rankings-night")
# Of this process's environment the night gets these alone: 0.5 refuses a RANKINGS_* variable it does not
# know (RANKINGS_TEST_EMULATOR, say), and Google's client here sets FIRESTORE_EMULATOR_HOST itself.
KEPT = ("HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")


def run_night(state, env):
    """`rankings-night run --environment` on STATE: the entry its history keeps of it (steps, fetch, times)."""
    done = subprocess.run([NIGHT, "run", "--environment"], env=dict(env, RANKINGS_STATE_DIRECTORY=state),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"rankings-night run: exit {done.returncode}: {done.stderr.strip()[-3000:]}")
    with open(paths.history(state), encoding="utf-8") as text:
        return json.load(text)[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    # The night finds its job on PATH by the name rankings (as from a checkout).
    if os.path.basename(options.rankings) != "rankings":
        sys.exit(f"fetch-nights: {options.rankings}: the night runs its job by the name rankings")
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

        env = {k: os.environ[k] for k in KEPT if k in os.environ}
        env.update(PATH=os.path.dirname(os.path.abspath(options.rankings)) + os.pathsep + os.environ["PATH"],
                   RANKINGS_FIRESTORE_PROJECT=PROJECT, FIRESTORE_EMULATOR_HOST=server.address, RANKINGS_RETRIES="0")
        chain = os.path.join(work, "chain")
        rows = {"full": [], "incremental": []}
        next_device = options.votes

        def night(state, label):
            entry = run_night(state, env)
            record, steps = entry["fetch"], entry["steps"]
            if record["mode"] != label:
                sys.exit(f"expected a {label} night, got {record['mode']}")
            rows[label].append((record["documents_read"], record["snapshot_documents"],
                                *(steps[name]["seconds"] for name in ("fetch", "aggregate", "prove", "publish")),
                                entry["ended"] - entry["started"]))

        night(chain, "full")                       # the chain's first night
        for _ in range(options.rounds):
            full_state = os.path.join(work, "full")
            shutil.rmtree(full_state, ignore_errors=True)     # fresh: a full read
            night(full_state, "full")
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
              f"of the snapshot | fetch s | job s | prove s | publish s | night s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for label, values in rows.items():
            read, held, fetch, job, prove, publish, whole = (statistics.median(v) for v in zip(*values))
            print(f"| {label} | {read:,.0f} | {held:,.0f} | {fetch:.2f} | {job:.2f} | {prove:.2f} | {publish:.2f} | "
                  f"{whole:.2f} |")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
