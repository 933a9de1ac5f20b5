"""What a night costs at size, against the Firestore simulator (Tests/simulator) run as a process
of its own at a per-stream rate like production's:

- full nights at each collection size and each number of streams (wall time, documents read,
  the fetch's peak memory: all its processes);
- incremental nights after 1 % of the votes changed, one after another on the first full night,
  `--kept-nights` of them (default 7): wall time of the fetch, documents read, peak memory and
  the bytes each wrote, three ways: the night record's `bytes_written`, the fetch's write I/O
  (its process tree's write_bytes, from GNU time's file system outputs) and the files of the new
  night folder that no other night holds (an inode counted once); the second of them is a whole
  night (`rankings-night run --environment`: fetch, job, proof against the simulator's COUNTs;
  its publish fails, see below) unless `--no-whole-night`;
  Every night after the first also reads the changes of the nights before it: they are
  minutes apart, all within the incremental query's 48 h margin (production's nights are a day
  apart, so it reads about two nights' changes). The first incremental night is the one of 1 %.
  Each night's changed votes are stamped over the day before it, as a day of votes is, so the
  incremental query meets them in the order a real day's come in;
- the disk the kept nights hold (distinct inodes under the fetched nights' folder) against one
  snapshot;
- the job on the last snapshot.

    bench/night-size.sh [--binary PATH] [--documents 1000000,10000000] [--streams 1,4,8,16]
                        [--skip-one-stream] [--rate 4000] [--kept-nights 7] [--changed 1]
                        [--no-whole-night]

Prints a Markdown table per size. 0.5 has no fetch program and no fetch settings, so a fetch
alone is `rankings_night.fetch.run` in a child process of this script (`night-size.py --fetch`,
a Python process like 0.4's `rankings-fetch-firestore`, its streams forked from it), with the
night's Firestore client as `Firestore.from_settings` makes it for an emulator host, into a state
directory of its own (the fetched nights under STATE/firestore, as the night keeps them). A full
night is a fresh state directory (0.4 forced one with RANKINGS_FIRESTORE_INCREMENTAL=no): with
no night to build on, 0.5 reads everything. 0.5 derives a full read's streams (8, up to 64 by the
last full read's rate: plan.py); `--streams` is honoured by setting plan.STREAMS in that child
process alone, which is what the first night of a fresh state directory reads with. An
incremental night is one query whatever the streams. The child sets no deadline (the night gives
a fetch 55 min a try), so one stream is measured to its end (at 10 M it needs about 42 min at
4,000 a second, within the simulator's readTime life of an hour).

The whole night is the real program on the chain's state directory. Its publish fails: the
simulator answers no batchGet nor commit (it does not model the commit's precondition), so the
night exits non-zero after its fetch, job and proof succeeded; the row's wall time is those three
steps' seconds from the night's history, as 0.4's night without RANKINGS_PUBLISH measured.
"""
import argparse
import json
import os
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
sys.path[:0] = [os.path.join(root, "jobs", "night"), os.path.join(root, "Tests")]
from rankings_night import paths, snapshot  # noqa: E402
from simulator.synthetic import Votes  # noqa: E402

NIGHT = os.path.join(root, "jobs", "night", "rankings-night")
# The generator's votes, fixed so that the benchmark can make them again for the board's check.
SEED, END, GENESIS = 1, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"
VOTES = ["--seed", str(SEED), "--end", END, "--genesis", GENESIS]
SIMULATOR = os.path.join(root, "Tests", "simulator", "firestore_sim.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Ran:
    """A child run to its end: wall seconds, peak memory in MiB, bytes it caused to be written to
    storage, standard error."""

    def __init__(self, seconds, memory, written, err):
        self.seconds, self.memory, self.written, self.err = seconds, memory, written, err
        self.proof = None


def run(argv, env=None, check=True):
    """The child's Ran, its exit status .status (unless check, one not 0 ends the benchmark). The
    fetch's streams are processes of its own, forked (sharing its pages until written): its memory
    is the sum of its processes' proportional set sizes, sampled twice a second, or GNU time's
    maximum resident set when that is more (a run shorter than a sample). Not the child's own
    ru_maxrss: Linux starts it at this process's size, which it was forked from. Its writes: GNU
    time's file system outputs (ru_oublock, write_bytes / 512 of the child and every child it
    reaped), counted when a page is dirtied, so before writeback."""
    started = time.monotonic()
    argv = ["/usr/bin/time", "-f", "maxrss %M outputs %O", *argv]
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
    err, _, last = err.rstrip("\n").rpartition("\n")
    if status != 0 and check:
        sys.exit(f"{' '.join(argv[3:6])}: exit {status}: {err.strip()[-3000:]}")
    words = last.split()
    ran = Ran(seconds, max(peak[0], int(words[1])) / 1024, int(words[3]) * 512, err)
    ran.status = status
    return ran


def fetch(state, address, streams):
    """argv of a fetch alone into STATE's fetched nights: this script as the child that runs it."""
    return [sys.executable, os.path.abspath(__file__), "--fetch", state, address, str(streams)]


def fetch_child(state, address, streams):
    """In the child: rankings_night.fetch.run into STATE/firestore on the simulator at address, a full
    read's streams `streams` (plan.STREAMS set here, in this process only), no deadline; its lines
    as the night logs them; the night's exit status for what it raised."""
    from rankings_night import fetch as fetching, plan
    from rankings_night.firestore import Firestore
    from rankings_night.log import Log
    from rankings_night.statuses import status_of
    log = Log()
    plan.STREAMS = streams

    def say(text, severity="INFO"):
        log(f"fetch: {text}", severity)

    # As Firestore.from_settings makes it for FIRESTORE_EMULATOR_HOST (no token), its deadline None.
    firestore = Firestore("demo", api=f"http://{address}/v1", say=say)
    try:
        fetching.run(paths.fetched(state), firestore, say)
    except Exception as error:  # noqa: BLE001 (the night's status for it, its one line)
        log.error(f"fetch: {error}")
        return status_of(error)
    return 0


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


def record(state):
    """The record of STATE's current fetched night."""
    with open(os.path.join(paths.fetched(state), "current", ".night.json")) as f:
        return json.load(f)


def files_of(folder):
    """{(device, inode): stat} of the regular files under folder (links not followed)."""
    found = {}
    for where, _, names in os.walk(folder):
        for name in names:
            info = os.lstat(os.path.join(where, name))
            if os.path.isfile(os.path.join(where, name)) and not os.path.islink(os.path.join(where, name)):
                found[(info.st_dev, info.st_ino)] = info
    return found


def new_bytes(directory):
    """Bytes of the files of DIR/current that no other night folder under DIR holds (its own)."""
    night = os.path.realpath(os.path.join(directory, "current"))
    others = {}
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path) and os.path.realpath(path) != night:
            others.update(files_of(path))
    return sum(info.st_size for inode, info in files_of(night).items() if inode not in others)


def disk(directory):
    """(bytes, allocated bytes, night folders) of DIR: each inode once."""
    inodes = files_of(directory)
    nights = sum(1 for n in os.listdir(directory) if os.path.isdir(os.path.join(directory, n))
                 and not os.path.islink(os.path.join(directory, n)))
    return sum(i.st_size for i in inodes.values()), sum(i.st_blocks * 512 for i in inodes.values()), nights


def change(port, votes, documents, number, share):
    """`share` % of the votes changed, stamped over the day before now as a day of the app's
    votes is (so the incremental night's spans of time share them as they would a real day's):
    half new votes, half re-ratings of the generator's votes (others each night). Returns how
    many."""
    changed = max(round(documents * share / 100), 2)
    now = time.time()

    def stamp(i):
        moment = now - 86400 * i / changed
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1e6):06d}Z"

    new = [{"id": f"zz-new-{number:02d}-{i:09d}", "joke_id": f"joke-{(i * 7919 + number) % 500}",
            "rating": 1 + (i + number) % 5, "timestamp": stamp(2 * i)} for i in range(changed // 2)]
    every = max(documents // (changed - len(new)), 1)
    rerated = [{"id": votes.id(i), "joke_id": "joke-re-rated", "rating": 1 + number % 5, "timestamp": stamp(2 * n + 1)}
               for n, i in enumerate(range(number % every, documents, every))][:changed - len(new)]
    for batch in (new, rerated):
        for start in range(0, len(batch), 5000):
            post(port, batch[start:start + 5000])
    return len(new) + len(rerated)


def main():
    if sys.argv[1:2] == ["--fetch"]:     # the child of fetch(): STATE ADDRESS STREAMS
        sys.exit(fetch_child(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--documents", default="1000000,10000000")
    parser.add_argument("--streams", default="1,4,8,16",
                        help="a full read's streams (0.5 derives them: plan.STREAMS set in the fetch's process)")
    parser.add_argument("--skip-one-stream", action="store_true", help="leave out the 1-stream full night")
    parser.add_argument("--rate", type=float, default=4000)
    parser.add_argument("--kept-nights", type=int, default=7, help="incremental nights after the full one")
    parser.add_argument("--changed", type=float, default=1.0, help="percent of the votes changed before each")
    parser.add_argument("--no-whole-night", action="store_true",
                        help="every incremental night a fetch alone (else the second is `rankings-night run`)")
    options = parser.parse_args()
    # The night finds its job on PATH by the name rankings (paths.rankings(), as from a checkout).
    options.rankings = os.path.abspath(options.rankings)
    if os.path.basename(options.rankings) != "rankings":
        sys.exit(f"night-size: {options.rankings}: the night runs its job by the name rankings")
    streams_list = [int(s) for s in options.streams.split(",") if not (options.skip_one_stream and s.strip() == "1")]
    if not streams_list:
        sys.exit("night-size: no stream count left to measure a full night with")
    work = tempfile.mkdtemp(prefix="rankings-night-size.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        for documents in (int(n) for n in options.documents.split(",")):
            measure(options, documents, streams_list, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(options, documents, streams_list, work):
    port = free_port()
    sim = subprocess.Popen([sys.executable, SIMULATOR, "--port", str(port), "--documents", str(documents),
                            *VOTES, "--stream-rate", str(options.rate)], stdout=subprocess.PIPE, text=True)
    address = sim.stdout.readline().strip()
    votes = Votes(documents, SEED)
    rows, nights, notes = [], [], []
    digests, chain, same = set(), None, None
    try:
        for streams in streams_list:
            state = os.path.join(work, f"full-{documents}-{streams}")     # fresh: a full read
            ran = run(fetch(state, address, streams))
            night = record(state)
            digests.add(night.get("snapshot_sha256") or json.dumps(night.get("layers")))
            rows.append((f"full, {streams} stream{'s' if streams > 1 else ''} ({night.get('streams', '?')} ranges)",
                         night["documents_read"], ran.seconds, ran.memory))
            say(f"{documents}: {rows[-1]}")
            if chain:
                shutil.rmtree(state)
            else:
                chain = state
                snapshot_bytes = os.path.getsize(os.path.join(paths.fetched(state), "current", snapshot.SNAPSHOT))
                same = board_is_the_generators(options.rankings, state, documents, work)
                say(f"{documents}: the board is the one of the generator's own votes: {same}")
        streams = streams_list[0]
        for number in range(1, options.kept_nights + 1):
            changed = change(port, votes, documents, number, options.changed)
            whole = number == 2 and not options.no_whole_night
            if whole:
                ran = whole_night(options, address, chain)
                notes.append(f"night {number} is `rankings-night run` (fetch, job, proof; then exit {ran.status} at "
                             f"its publish, which the simulator cannot answer: {ran.publish}): {ran.proof}")
            else:
                ran = run(fetch(chain, address, streams))
            night = record(chain)
            if night["mode"] != "incremental":
                sys.exit(f"night-size: night {number} was {night['mode']} ({night.get('full_reason')}), "
                         "not incremental")
            written = night.get("bytes_written")
            nights.append((f"{number}{' (whole night)' if whole else ''}: {changed:,} changed",
                           night["documents_read"], ran.seconds, ran.memory,
                           "n/a" if written is None else f"{written:,}", ran.written, new_bytes(paths.fetched(chain)),
                           len(night.get("layers") or [None])))
            say(f"{documents}: incremental {nights[-1]}")
        ran = run([options.rankings, "aggregate", "--quiet", "--threads", "2", "--output",
                   os.path.join(work, "all_time.json"), os.path.join(paths.fetched(chain), "current")])
        rows.append(("the job on the last snapshot (`rankings aggregate`, 2 threads)", 0, ran.seconds, ran.memory))
        kept = disk(paths.fetched(chain))
    finally:
        sim.terminate()
        sim.wait()
    print(f"\n### {documents:,} votes ({snapshot_bytes / 2**30:.2f} GiB snapshot), {options.rate:g} documents/s "
          "per stream\n")
    print(f"Every full night's snapshot the same bytes: {'yes' if len(digests) == 1 else 'NO'}; the board the "
          f"one `rankings aggregate` makes of the generator's own votes: {'yes' if same else 'NO'}.\n")
    print("| night | documents read | wall s | peak memory MiB (all processes) |")
    print("| --- | ---: | ---: | ---: |")
    for label, read, seconds, memory in rows:
        print(f"| {label} | {read:,} | {seconds:.1f} | {memory:.0f} |")
    if nights:
        print(f"\nIncremental nights on the first full night, {options.changed:g} % of the votes changed before "
              f"each (one query each):\n")
        print("| incremental night | documents read | wall s | peak memory MiB | bytes_written (record) | "
              "write I/O bytes (process tree) | new files' bytes (inodes no other night holds) | layers |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label, read, seconds, memory, recorded, io, files, layers in nights:
            print(f"| {label} | {read:,} | {seconds:.1f} | {memory:.0f} | {recorded} | {io:,} | {files:,} | {layers} |")
        size, allocated, folders = kept
        print(f"\nThe fetched nights' folder after {len(nights)} incremental nights holds {folders} night folders: "
              f"{size:,} bytes in distinct inodes ({allocated:,} allocated), {size / snapshot_bytes:.2f}x one "
              f"snapshot ({snapshot_bytes:,} bytes, the full night's).")
        for note in notes:
            print(f"\n{note}")
    sys.stdout.flush()
    shutil.rmtree(chain)


def whole_night(options, address, chain):
    """`rankings-night run --environment` on the chain's state directory with 0.5's settings: its fetch
    (incremental), the job, the board's proof against the simulator, and a publish that fails there (no
    batchGet, no commit). Its Ran, .seconds the fetch's, job's and proof's from the night's history,
    .proof the proof's verdict as the history keeps it."""
    env = {"PATH": os.path.dirname(options.rankings) + os.pathsep + os.environ["PATH"],
           "RANKINGS_STATE_DIRECTORY": chain, "RANKINGS_FIRESTORE_PROJECT": "demo",
           "FIRESTORE_EMULATOR_HOST": address, "RANKINGS_RETRIES": "0"}
    ran = run([NIGHT, "run", "--environment"], env, check=False)
    with open(paths.history(chain)) as f:
        entry = json.load(f)[-1]
    steps = entry["steps"]
    done = [name for name in ("fetch", "aggregate", "prove") if steps.get(name, {}).get("status") == 0]
    if len(done) < 3 or ran.status == 0:
        sys.exit(f"night-size: the whole night did not end at its publish: exit {ran.status}, steps "
                 f"{json.dumps(steps)}: {ran.err.strip()[-3000:]}")
    ran.seconds = sum(steps[name]["seconds"] for name in done)
    ran.publish = (steps.get("publish", {}).get("why") or "no publish step")[:200]
    proof = entry.get("proof") or {}
    ran.proof = f"{proof.get('status')}, {proof.get('queries')} COUNTs: {(proof.get('lines') or ['no line'])[-1]}"
    return ran


def say(text):
    print(f"# {text}", file=sys.stderr, flush=True)


def board_is_the_generators(rankings, state, documents, work):
    truth = os.path.join(work, "truth.ndjson")
    subprocess.run([sys.executable, SIMULATOR, "--documents", str(documents), *VOTES, "--write-ndjson", truth],
                   check=True, stderr=subprocess.DEVNULL)
    boards = []
    for source in (os.path.join(paths.fetched(state), "current"), truth):
        boards.append(subprocess.run([rankings, "aggregate", "--quiet", "--computed-at", "2026-11-27T05:00:00Z",
                                      source], check=True, stdout=subprocess.PIPE).stdout)
    os.unlink(truth)
    return boards[0] == boards[1]


def post(port, votes):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/simulator/votes", method="POST",
                                     data=json.dumps({"votes": votes}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=600).read()


if __name__ == "__main__":
    main()
