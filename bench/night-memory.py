"""The memory a night without a volume needs: `rankings-night run` (fetch, `rankings aggregate`,
the board's proof; no publish) in a memory cgroup of its own with its state folder on a tmpfs
whose pages are charged to that cgroup, as Cloud Run's in-memory disk counts against the task's
--memory. The Firestore side is the simulator (Tests/simulator), a process of its own outside the
cgroup, with bench/night-size.py's votes and rate. Run as root (it makes a cgroup and mounts).

    python3 bench/night-memory.py RANKINGS [--documents 1000000] [--forms plain,gzip]
                                  [--limit 6G] [--proof yes|no] [--streams 8] [--rate 4000]

For each size and form: the cgroup's peak (memory.peak on cgroup v2, memory.max_usage_in_bytes
on v1: processes, tmpfs and page cache), the most it held that it could not give back (anonymous
memory and tmpfs, sampled twice a second: what a limit cannot reclaim), the most the tmpfs held,
the snapshot's bytes, wall seconds. Then, from the plain snapshot when there is one, zlib's levels
1 and 6 on its lines less createTime and updateTime: bytes and CPU seconds.
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
import zlib

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(root, "jobs", "night"))
from rankings_night import snapshot  # noqa: E402

NIGHT = os.path.join(root, "jobs", "night", "rankings-night")
FETCH = os.path.join(root, "jobs", "night", "rankings-fetch-firestore")
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
    env = {"PATH": os.environ["PATH"], "RANKINGS_FIRESTORE_PROJECT": "demo",
           "FIRESTORE_EMULATOR_HOST": f"127.0.0.1:{port}", "RANKINGS_BIN": options.rankings,
           "RANKINGS_OUTPUT": f"{state}/all_time.json", "RANKINGS_FETCH": f"{FETCH} {state}/firestore",
           "RANKINGS_EXPORTS": f"{state}/firestore/current", "RANKINGS_PUBLISH": "",
           "RANKINGS_FLAGS": "--max-drop 1", "RANKINGS_RETRIES": "0",
           "RANKINGS_FIRESTORE_SNAPSHOT": form, "RANKINGS_FIRESTORE_STREAMS": str(options.streams),
           "RANKINGS_FIRESTORE_DEADLINE_SECONDS": "14400", "RANKINGS_FETCH_TIMEOUT_SECONDS": "15000",
           "RANKINGS_BOARD_PROOF": options.proof}
    # The wrapper joins the cgroup, then mounts the tmpfs and runs the night: every page either
    # writes is charged to the cgroup.
    wrapper = (f'echo $$ > {group.path}/cgroup.procs && mount -t tmpfs -o size=64g,mode=0755 rankings-state "$1" '
               f'&& exec {sys.executable} {NIGHT} run --environment')
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
    child = subprocess.Popen(["sh", "-c", wrapper, "sh", state], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    sampler.start()
    err = child.stderr.read()
    status = child.wait()
    seconds = time.monotonic() - started
    done.set()
    sampler.join()
    try:
        figures = {"documents": documents, "form": form, "status": status, "seconds": round(seconds, 1),
                   "peak_mib": round(group.peak() / 2**20), "held_mib": round(held[0] / 2**20),
                   "tmpfs_mib": round(shmem[0] / 2**20), "oom_kills": group.oom_kills()}
        current = os.path.join(state, "firestore", "current")
        if status == 0:
            path = snapshot.snapshot_path(os.path.realpath(current))
            with open(os.path.join(current, ".night.json")) as f:
                record = json.load(f)
            figures.update(snapshot_mib=round(os.path.getsize(path) / 2**20, 1),
                           snapshot_documents=record["snapshot_documents"], streams=record["streams"])
            with open(os.path.join(state, "all_time.json"), "rb") as f:
                board = json.load(f)
            board.pop("computed_at", None)      # each night's own
            figures["board"] = json.dumps(board, sort_keys=True)
            if form == "plain" and options.levels:
                figures["levels"] = levels(path, options.levels)
        else:
            figures["error"] = err.strip()[-3000:]
        proved = [line for line in err.splitlines() if "proven" in line or "proof" in line]
        figures["proof_line"] = proved[-1][-300:] if proved else None
        with open(os.path.join(work, f"night-{documents}-{form}.log"), "w") as log:
            log.write(err)
    finally:
        subprocess.run(["umount", state], check=False)
        group.remove()
        shutil.rmtree(state, ignore_errors=True)
    return figures


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
    parser = argparse.ArgumentParser()
    parser.add_argument("rankings")
    parser.add_argument("--documents", default="1000000")
    parser.add_argument("--forms", default="plain,gzip")
    parser.add_argument("--limit", default="6G")
    parser.add_argument("--proof", default="yes", choices=("yes", "no"))
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--rate", type=float, default=4000)
    parser.add_argument("--levels", type=int, default=1000000, help="lines for the zlib levels (0: none)")
    parser.add_argument("--keep-logs", action="store_true")
    options = parser.parse_args()
    options.rankings = os.path.realpath(options.rankings)
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
                  f"proof {options.proof}; the same board from each form: {'yes' if len(boards) == 1 else 'NO'}\n")
            print("| form | exit | wall s | memory peak MiB | held MiB (anon + tmpfs) | tmpfs MiB | snapshot MiB |")
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            for r in rows:
                print(f"| {r['form']} | {r['status']} | {r['seconds']} | {r['peak_mib']} | {r['held_mib']} | "
                      f"{r['tmpfs_mib']} | {r.get('snapshot_mib', '-')} |")
            for r in rows:
                print(f"\n{r['form']}: oom kills {r['oom_kills']}; proof: {r['proof_line']}")
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
