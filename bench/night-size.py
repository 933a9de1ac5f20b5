"""What a night costs at size, against the Firestore simulator (Tests/simulator) run as a process
of its own at a per-stream rate like production's: full nights at each collection size and each
number of streams (wall time, documents read, the fetch's peak memory: all its processes), an incremental night after
1 % of the votes changed, the merge alone, and the job on the snapshot.

    bench/night-size.sh [--documents 1000000,10000000] [--streams 1,4,8,16] [--rate 4000]

Prints a Markdown table per size. The fetch's deadline is raised so that one stream is measured
to its end rather than refused (at 10 M one stream needs about 42 min at 4,000 a second).
"""
import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(root, "jobs", "night"))
from rankings_night import snapshot  # noqa: E402

FETCH = os.path.join(root, "jobs", "night", "rankings-fetch-firestore")
# The generator's votes, fixed so that the benchmark can make them again for the board's check.
VOTES = ["--seed", "1", "--end", "2026-11-01T00:00:00Z", "--genesis", "2026-11-02T00:00:00Z"]
SIMULATOR = os.path.join(root, "Tests", "simulator", "firestore_sim.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv, env=None):
    """(seconds, peak memory in MiB, stderr) of a child run to its end. The fetch's streams are
    processes of its own, forked (sharing its pages until written): its memory is the sum of
    its processes' proportional set sizes, sampled twice a second, or GNU time's maximum
    resident set when that is more (a run shorter than a sample). Not the child's own ru_maxrss:
    Linux starts it at this process's size, which it was forked from."""
    started = time.monotonic()
    argv = ["/usr/bin/time", "-f", "maxrss %M", *argv]
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak, ended = [0], threading.Event()

    def sample():
        while not ended.wait(0.5):
            peak[0] = max(peak[0], tree_pss(child.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = child.stderr.read()
    ended.set()
    sampler.join()
    status = child.wait()
    seconds = time.monotonic() - started
    err, _, maxrss = err.rstrip("\n").rpartition("\n")
    if status != 0:
        sys.exit(f"{argv[3]}: exit {status}: {err.strip()[-2000:]}")
    return seconds, max(peak[0], int(maxrss.split()[1])) / 1024, err


def tree_pss(root):
    """KiB: the proportional set size of process root and every process below it."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, total = {root}, 0
    for _ in range(4):
        tree |= {pid for pid, parent in parents.items() if parent in tree}
    for pid in tree:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                total += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total


def record(directory):
    with open(os.path.join(directory, "current", ".night.json")) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--documents", default="1000000,10000000")
    parser.add_argument("--streams", default="1,4,8,16")
    parser.add_argument("--rate", type=float, default=4000)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="rankings-night-size.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        for documents in (int(n) for n in options.documents.split(",")):
            port = free_port()
            sim = subprocess.Popen([sys.executable, SIMULATOR, "--port", str(port), "--documents", str(documents),
                                    *VOTES, "--stream-rate", str(options.rate)],
                                   stdout=subprocess.PIPE, text=True)
            sim.stdout.readline()
            env = {"PATH": os.environ["PATH"], "RANKINGS_FIRESTORE_PROJECT": "demo",
                   "FIRESTORE_EMULATOR_HOST": f"127.0.0.1:{port}", "RANKINGS_BIN": options.rankings,
                   "RANKINGS_FIRESTORE_DEADLINE_SECONDS": "14400", "RANKINGS_FIRESTORE_INCREMENTAL": "no"}
            rows = []
            digests = set()
            chain = None
            try:
                for streams in (int(s) for s in options.streams.split(",")):
                    directory = os.path.join(work, f"full-{documents}-{streams}")
                    seconds, memory, _ = run([FETCH, directory], dict(env, RANKINGS_FIRESTORE_STREAMS=str(streams)))
                    night = record(directory)
                    digests.add(night["snapshot_sha256"])
                    rows.append((f"full, {streams} stream{'s' if streams > 1 else ''} ({night['streams']} ranges)",
                                 night["documents_read"], seconds, memory))
                    print(f"# {documents}: {rows[-1]}", file=sys.stderr, flush=True)
                    if chain:
                        shutil.rmtree(directory)
                    else:
                        chain = directory
                        same = board_is_the_generators(options.rankings, directory, documents, work)
                        print(f"# {documents}: the board is the one of the generator's own votes: {same}",
                              file=sys.stderr, flush=True)
                # 1 % changed: half new votes, half re-ratings, stamped now.
                changed, rng = documents // 100, random.Random(3)
                votes = [{"id": f"zz-new-{i:09d}", "joke_id": f"joke-{rng.randrange(500)}", "rating": rng.randint(1, 5)}
                         for i in range(changed // 2)]
                for start in range(0, len(votes), 5000):
                    post(port, votes[start:start + 5000])
                rerated = [{"id": json.loads(line)["name"].rsplit("/", 1)[1], "joke_id": "joke-re-rated", "rating": 1}
                           for line in take(os.path.join(chain, "current", snapshot.SNAPSHOT), changed - len(votes), rng, documents)]
                for start in range(0, len(rerated), 5000):
                    post(port, rerated[start:start + 5000])
                previous = os.path.realpath(os.path.join(chain, "current"))
                seconds, memory, _ = run([FETCH, chain], dict(env, RANKINGS_FIRESTORE_INCREMENTAL="yes"))
                night = record(chain)
                assert night["mode"] == "incremental", night
                rows.append((f"incremental after 1 % changed ({changed} votes)", night["documents_read"], seconds, memory))
                # The merge alone, in this process: the previous snapshot and tonight's answer.
                answer = {}
                with open(os.path.join(chain, "current", snapshot.SNAPSHOT), "rb") as lines:
                    for line in lines:
                        if b"zz-new-" in line or b"joke-re-rated" in line:
                            answer[snapshot.line_name(line)] = line
                started, before = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                out = snapshot.Writer(os.path.join(work, "merged.ndjson"))
                with open(os.path.join(previous, snapshot.SNAPSHOT), "rb") as f:
                    digest = hashlib.sha256()
                    lines = 0
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        digest.update(chunk)
                        lines += chunk.count(b"\n")
                snapshot.merge(os.path.join(previous, snapshot.SNAPSHOT), (lines, digest.hexdigest()), answer, out)
                out.close()
                rows.append((f"the merge alone ({len(answer)} documents into {lines})", 0, time.monotonic() - started,
                             max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, before) / 1024))
                os.unlink(out.path)
                seconds, memory, _ = run([options.rankings, "aggregate", "--quiet", "--threads", "2", "--output",
                                          os.path.join(work, "all_time.json"), os.path.join(chain, "current")])
                rows.append(("the job on the snapshot (`rankings aggregate`, 2 threads)", 0, seconds, memory))
            finally:
                sim.terminate()
                sim.wait()
            size = os.path.getsize(os.path.join(chain, "current", snapshot.SNAPSHOT))
            print(f"\n### {documents:,} votes ({size / 2**30:.2f} GiB snapshot), {options.rate:g} documents/s per stream\n")
            print(f"Every full night's snapshot the same bytes: {'yes' if len(digests) == 1 else 'NO'}; the board the "
                  f"one `rankings aggregate` makes of the generator's own votes: {'yes' if same else 'NO'}.\n")
            print("| night | documents read | wall s | peak memory MiB (all processes) |")
            print("| --- | ---: | ---: | ---: |")
            for label, read, seconds, memory in rows:
                print(f"| {label} | {read:,} | {seconds:.1f} | {memory:.0f} |")
            sys.stdout.flush()
            shutil.rmtree(chain)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def board_is_the_generators(rankings, directory, documents, work):
    truth = os.path.join(work, "truth.ndjson")
    subprocess.run([sys.executable, SIMULATOR, "--documents", str(documents), *VOTES, "--write-ndjson", truth],
                   check=True, stderr=subprocess.DEVNULL)
    boards = []
    for source in (os.path.join(directory, "current"), truth):
        boards.append(subprocess.run([rankings, "aggregate", "--quiet", "--computed-at", "2026-11-27T05:00:00Z",
                                      source], check=True, stdout=subprocess.PIPE).stdout)
    os.unlink(truth)
    return boards[0] == boards[1]


def take(path, count, rng, total):
    """About `count` lines of the snapshot at path, spread over it."""
    every = max(total // max(count, 1), 1)
    taken = []
    with open(path, "rb") as lines:
        for number, line in enumerate(lines):
            if number % every == 0 and len(taken) < count:
                taken.append(line)
    return taken


def post(port, votes):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/simulator/votes", method="POST",
                                     data=json.dumps({"votes": votes}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=600).read()


if __name__ == "__main__":
    main()
