"""The memory a night without a volume needs: `rankings-night run --environment` (fetch,
`rankings aggregate`, the board's proof; its publish fails, see below) in a memory cgroup of its
own with its state directory on a tmpfs whose pages are charged to that cgroup, as Cloud Run's
in-memory disk counts against the task's --memory. The Firestore side is the simulator
(Tests/simulator), a process of its own outside the cgroup, with bench/night-size.py's votes and
rate. Run as root (it makes a cgroup and mounts).

    python3 bench/night-memory.py RANKINGS [--documents 1000000] [--forms plain,gzip]
                                  [--limit 6G] [--streams 8] [--rate 4000]

For each size and form: the cgroup's peak (memory.peak on cgroup v2, memory.max_usage_in_bytes
on v1: processes, tmpfs and page cache), the most it held that it could not give back (anonymous
memory and tmpfs, sampled twice a second: what a limit cannot reclaim), the most the tmpfs held,
the snapshot's bytes, wall seconds. Then, from the plain snapshot when there is one, zlib's levels
1 and 6 on its lines less createTime and updateTime: bytes and CPU seconds.

0.5 has no RANKINGS_FIRESTORE_SNAPSHOT: it keeps the snapshot compressed by itself on a container
platform (CLOUD_RUN_JOB, KUBERNETES_SERVICE_HOST) whose state directory no volume holds (night.py:
on_a_platform and in_memory). The night here is 0.5's own code run by this script in the cgroup
(`night-memory.py --night FORM STREAMS`: rankings_night.cli.main(["run", "--environment"])), with
CLOUD_RUN_JOB set, and night.in_memory answering for the form, since a tmpfs is a mount point and
would read as a volume: gzip is the state in memory (Cloud Run's root, which has no mount point),
plain the state on a volume. Setting CLOUD_RUN_JOB also gives the platform's defaults (no retries,
JSON logs); RANKINGS_LOG_FORMAT=plain keeps the log as before. 0.5 derives a full read's streams
(8 for a first night, as here); `--streams` other than 8 is honoured by setting plan.STREAMS in
that process. 0.5 always proves the board (0.4's RANKINGS_BOARD_PROOF=no, `--proof no`, is gone),
so every night here includes the proof's COUNTs against the simulator; the proof reads the
snapshot once more as a stream. The job's --max-drop 1 is RANKINGS_MAX_DROP's default.

Its publish fails: the simulator answers no batchGet nor commit (it does not model the commit's
precondition), so the night exits non-zero after its fetch, job and proof; those three steps'
status and seconds, from the night's history, are the row's, as 0.4's night without
RANKINGS_PUBLISH was. The peak includes the failed publish's `rankings check` of the board (a few
MiB, as the proof's and job's processes are).
"""
import argparse
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(root, "jobs", "night"))
from rankings_night import paths, snapshot  # noqa: E402

SIMULATOR = os.path.join(root, "Tests", "simulator", "firestore_sim.py")
VOTES = ["--seed", "1", "--end", "2026-11-01T00:00:00Z", "--genesis", "2026-11-02T00:00:00Z"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cgroup:
    """A memory cgroup below this process's own (v2 when its memory controller is there, else v1)."""

    def __init__(self, name, limit):
        v2 = "/sys/fs/cgroup/cgroup.controllers"
        if os.path.exists(v2) and "memory" in open(v2).read().split():
            own = open("/proc/self/cgroup").read().split("::", 1)[1].strip()
            self.path, self.v2 = os.path.join("/sys/fs/cgroup" + own, name), True
        else:
            own = next(line.split(":", 2)[2].strip() for line in open("/proc/self/cgroup")
                       if line.split(":")[1] == "memory")
            self.path, self.v2 = os.path.join("/sys/fs/cgroup/memory" + own, name), False
        os.mkdir(self.path)
        self.write("memory.max" if self.v2 else "memory.limit_in_bytes", str(limit))

    def write(self, name, text):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(text)

    def read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def stat(self):
        return {k: int(v) for k, v in (line.split() for line in self.read("memory.stat").splitlines())}

    def held(self):
        """Bytes it cannot give back: anonymous memory and tmpfs (shmem)."""
        s = self.stat()
        return s["anon"] + s["shmem"] if self.v2 else s["total_rss"] + s["total_shmem"]

    def peak(self):
        return int(self.read("memory.peak" if self.v2 else "memory.max_usage_in_bytes"))

    def oom_kills(self):
        text = self.read("memory.events" if self.v2 else "memory.oom_control")
        return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("oom_kill ")), 0)

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


def night(options, port, documents, form, work):
    """One `rankings-night run` in a cgroup of its own: its figures."""
    state = os.path.join(work, f"state-{documents}-{form}")
    os.makedirs(state)
    group = Cgroup(f"rankings-night-memory-{os.getpid()}-{form}", parse_size(options.limit))
    # The wrapper joins the cgroup, then mounts the tmpfs and runs the night: every page either
    # writes is charged to the cgroup.
    wrapper = (f'echo $$ > {group.path}/cgroup.procs && mount -t tmpfs -o size=64g,mode=0755 rankings-state "$1" '
               f'&& exec {shlex.join(night_argv(form, options.streams))}')
    held, shmem, done = [0], [0], threading.Event()

    def sample():
        while not done.wait(0.5):
            try:
                held[0] = max(held[0], group.held())
                shmem[0] = max(shmem[0], group.stat()["shmem" if group.v2 else "total_shmem"])
            except (OSError, KeyError):
                pass

    sampler = threading.Thread(target=sample, daemon=True)
    started = time.monotonic()
    child = subprocess.Popen(["sh", "-c", wrapper, "sh", state], env=environment(options, port, state),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler.start()
    err = child.stderr.read()
    status = child.wait()
    seconds = time.monotonic() - started
    done.set()
    sampler.join()
    try:
        figures = {"documents": documents, "form": form, "status": status, "wall": round(seconds, 1),
                   "seconds": round(seconds, 1), "peak_mib": round(group.peak() / 2**20),
                   "held_mib": round(held[0] / 2**20), "tmpfs_mib": round(shmem[0] / 2**20),
                   "oom_kills": group.oom_kills()}
        figures.update(before_publish(state))
        current = os.path.join(paths.fetched(state), "current")
        if figures["before_publish"] == 0:
            with open(os.path.join(current, ".night.json")) as f:
                record = json.load(f)
            # A full night's one layer: the snapshot, compressed or not as the fetch chose.
            path = os.path.join(os.path.realpath(current), record["layers"][0]["file"])
            figures.update(snapshot_mib=round(os.path.getsize(path) / 2**20, 1),
                           snapshot_documents=record["snapshot_documents"], streams=record["streams"],
                           kept=record.get("snapshot_form", "plain"))     # the form the fetch chose
            with open(paths.board(state, "all_time"), "rb") as f:
                board = json.load(f)
            board.pop("computed_at", None)      # each night's own
            figures["board"] = json.dumps(board, sort_keys=True)
            if form == "plain" and options.levels:
                figures["levels"] = levels(path, options.levels)
        else:
            figures["error"] = err.strip()[-3000:]
        with open(os.path.join(work, f"night-{documents}-{form}.log"), "w") as log:
            log.write(err)
    finally:
        subprocess.run(["umount", state], check=False)
        group.remove()
        shutil.rmtree(state, ignore_errors=True)
    return figures


def environment(options, port, state):
    """The night's environment: 0.5's settings (exactly those it is given), a platform's CLOUD_RUN_JOB,
    the job first on PATH (the night runs it by the name rankings)."""
    return {"PATH": os.path.dirname(options.rankings) + os.pathsep + os.environ["PATH"],
            "CLOUD_RUN_JOB": "rankings-night-memory", "RANKINGS_STATE_DIRECTORY": state,
            "RANKINGS_FIRESTORE_PROJECT": "demo", "FIRESTORE_EMULATOR_HOST": f"127.0.0.1:{port}",
            "RANKINGS_RETRIES": "0", "RANKINGS_LOG_FORMAT": "plain"}


def night_argv(form, streams):
    """argv of the night in the cgroup: this script as night_child()."""
    return [sys.executable, "-I", os.path.abspath(__file__), "--night", form, str(streams)]


def night_child(form, streams):
    """In the cgroup: `rankings-night run --environment`, its state in memory when the form is gzip (a
    tmpfs is a mount point, which night.in_memory would take for a volume), a full read's streams set."""
    from rankings_night import cli, night as nights, plan
    nights.in_memory = lambda state: form == "gzip"
    plan.STREAMS = streams
    return cli.main(["run", "--environment"])


def before_publish(state):
    """From the night's history: before_publish, 0 when its fetch, job and proof all succeeded (else the
    first failed one's status); seconds, theirs; proof_line, the proof's verdict; publish, why it failed."""
    try:
        with open(paths.history(state)) as f:
            entry = json.load(f)[-1]
    except (OSError, ValueError, IndexError) as error:
        return {"before_publish": None, "proof_line": f"no history: {error}"}
    steps, out = entry["steps"], {}
    ran = [steps.get(name) for name in ("fetch", "aggregate", "prove")]
    failed = [step["status"] for step in ran if step and step["status"] != 0]
    out["before_publish"] = failed[0] if failed else 0 if all(ran) else None
    if all(ran):
        out["seconds"] = round(sum(step["seconds"] for step in ran), 1)
    proof = entry.get("proof") or {}
    out["proof_line"] = f"{proof.get('status')}, {proof.get('queries')} COUNTs: " \
        f"{(proof.get('lines') or ['no line'])[-1][-300:]}" if proof else None
    out["publish"] = ((steps.get("publish") or {}).get("why") or "no publish step")[:200]
    return out


def levels(path, most):
    """zlib's levels on the snapshot's first `most` lines, less createTime and updateTime, as a
    stream compresses them (a page of 1,000 at a time): {level: (bytes in, bytes out, CPU s)}."""
    with open(path, "rb") as f:
        lines = []
        for number, line in enumerate(f):
            if number == most:
                break
            lines.append(snapshot.document_line(json.loads(line), slim=True))
    pages = [b"".join(lines[i:i + 1000]) for i in range(0, len(lines), 1000)]
    out = {}
    for level in (1, 6):
        begun = time.process_time()
        deflate = zlib.compressobj(level, zlib.DEFLATED, 31)
        size = sum(len(deflate.compress(page)) for page in pages) + len(deflate.flush())
        out[level] = (sum(map(len, pages)), size, round(time.process_time() - begun, 2))
    return out


def parse_size(text):
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def main():
    if sys.argv[1:2] == ["--night"]:     # the child of night_argv(), in the cgroup: FORM STREAMS
        sys.exit(night_child(sys.argv[2], int(sys.argv[3])))
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--documents", default="1000000")
    parser.add_argument("--forms", default="plain,gzip")
    parser.add_argument("--limit", default="6G")
    parser.add_argument("--streams", type=int, default=8,
                        help="a full read's streams (0.5 derives 8 on a first night: else plan.STREAMS set)")
    parser.add_argument("--rate", type=float, default=4000)
    parser.add_argument("--levels", type=int, default=1000000, help="lines for the zlib levels (0: none)")
    parser.add_argument("--keep-logs", action="store_true")
    options = parser.parse_args()
    options.rankings = os.path.abspath(options.rankings)
    if os.path.basename(options.rankings) != "rankings":
        sys.exit(f"night-memory: {options.rankings}: the night runs its job by the name rankings")
    work = tempfile.mkdtemp(prefix="rankings-night-memory.", dir="/var/tmp")
    print(f"# the nights' logs: {work}/night-*.log (removed at the end unless --keep-logs)", file=sys.stderr)
    try:
        for documents in (int(n) for n in options.documents.split(",")):
            port = free_port()
            sim = subprocess.Popen([sys.executable, SIMULATOR, "--port", str(port), "--documents", str(documents),
                                    *VOTES, "--stream-rate", str(options.rate)], stdout=subprocess.PIPE, text=True)
            sim.stdout.readline()
            try:
                rows = [night(options, port, documents, form, work) for form in options.forms.split(",")]
            finally:
                sim.terminate()
                sim.wait()
            boards = {r["board"] for r in rows if "board" in r}
            print(f"\n### {documents:,} votes, {options.streams} streams, limit {options.limit}, "
                  f"proof always; the same board from each form: {'yes' if len(boards) == 1 else 'NO'}\n")
            print("| form | exit (fetch, job, proof) | wall s (fetch, job, proof) | memory peak MiB | "
                  "held MiB (anon + tmpfs) | tmpfs MiB | snapshot MiB |")
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            for r in rows:
                print(f"| {r['form']} | {r['before_publish']} | {r['seconds']} | {r['peak_mib']} | {r['held_mib']} | "
                      f"{r['tmpfs_mib']} | {r.get('snapshot_mib', '-')} |")
            for r in rows:
                print(f"\n{r['form']}: snapshot kept {r.get('kept', '-')}, {r.get('streams', '-')} streams; oom kills "
                      f"{r['oom_kills']}; the night's exit {r['status']} after {r['wall']} s (its publish: "
                      f"{r.get('publish')}); proof: {r['proof_line']}")
                if "error" in r:
                    print(f"{r['form']}: {r['error']}")
                for level, (raw, packed, cpu) in r.get("levels", {}).items():
                    print(f"zlib level {level}: {raw:,} bytes to {packed:,} ({packed / raw:.3f}), {cpu} CPU s")
            sys.stdout.flush()
    finally:
        if not options.keep_logs:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
