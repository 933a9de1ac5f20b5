"""A night kept compressed (fetch.run(..., compressed=True): a container whose state is in its
memory) against a Firestore in memory: its snapshot compressed by each stream, less createTime
and updateTime, exact in count and digest; the job's board the same as a plain night's; and a
compressed night never built on. The job is the real one when TEST_RANKINGS names it (or
.build/debug/rankings is built); without it that test is skipped."""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from fake_firestore import FakeFirestore  # noqa: E402
from rankings_night import fetch, snapshot  # noqa: E402
from rankings_night.snapshot import parse_time  # noqa: E402

OLD = parse_time("2026-01-01T00:00:00Z")
RANKINGS = os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")


def seeded(n):
    """n votes, and a few the job refuses (a rating as a string, no joke_id)."""
    fake = FakeFirestore()
    for i in range(n):
        fake.put(f"v{i * 7919 % 100003:06d}", timestamp=OLD + i * 10**9, rating=1 + i % 5, joke_id=f"joke-{i % 7}")
    fake.put("v000007x", timestamp=OLD, rating="5", joke_id="joke-1")
    fake.put("v000013x", timestamp=OLD, rating=4)
    return fake


class Compact(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-test-compact.")
        self.addCleanup(shutil.rmtree, self.work, True)

    def fetch(self, fake, name, compressed=False):
        directory, said = os.path.join(self.work, name), []
        try:
            fetch.run(directory, fake, lambda message, severity="INFO": said.append(message), compressed=compressed)
        except Exception as error:  # noqa: BLE001 (the test says what it was)
            self.fail(f"the fetch failed: {type(error).__name__}: {error}\n" + "\n".join(said)[-3000:])
        folder = os.path.realpath(os.path.join(directory, "current"))
        with open(os.path.join(folder, ".night.json")) as text:
            return folder, json.load(text), "\n".join(said)

    def both(self, n=3000):
        fake = seeded(n)
        plain = self.fetch(fake, "plain")
        compact = self.fetch(fake, "compact", compressed=True)
        return fake, plain, compact

    def test_the_snapshot_is_the_plain_ones_lines_less_two_times_compressed_by_each_stream(self):
        _, (plain, plain_record, _), (compact, record, _) = self.both()
        self.expect("files", sorted(os.listdir(compact)), [".night.json", "rating_events.ndjson.gz"])
        with open(os.path.join(plain, "rating_events.ndjson"), "rb") as f:
            wanted = []
            for line in f:
                document = json.loads(line)
                del document["createTime"], document["updateTime"]
                wanted.append(document)
        path = os.path.join(compact, "rating_events.ndjson.gz")
        with gzip.open(path, "rb") as f:
            got = [json.loads(line) for line in f]
        self.expect("the documents, name first, in order", got, wanted)
        self.expect("name first", {next(iter(d)) for d in got}, {"name"})
        with open(path, "rb") as f:
            data = f.read()
        self.expect("one gzip member a stream", data.count(b"\x1f\x8b\x08"), record["streams"])
        self.expect("streams", record["streams"], 8)
        self.expect("documents", (record["snapshot_documents"], plain_record["snapshot_documents"]), (3002, 3002))
        self.expect("its one layer: lines, and the digest of the bytes kept", record["layers"],
                    [{"file": "rating_events.ndjson.gz", "lines": 3002, "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()}])
        self.expect("the form", (record.get("snapshot_form"), plain_record.get("snapshot_form")), ("gzip", None))
        self.expect("what is left besides", [n for n in os.listdir(os.path.dirname(compact)) if n.startswith(".range")], [])

    @unittest.skipUnless(os.access(RANKINGS, os.X_OK), f"no job at {RANKINGS} (TEST_RANKINGS)")
    def test_the_job_makes_the_same_board_of_either_form(self):
        _, (plain, _, _), (compact, _, _) = self.both()
        boards = []
        for folder in (plain, compact):
            done = subprocess.run([RANKINGS, "aggregate", "--quiet", "--max-invalid", "2", "--computed-at",
                                   "2026-11-27T05:00:00Z", folder], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.expect_exit(done, 0)
            boards.append(json.loads(done.stdout))
        self.expect("the board", boards[1], boards[0])
        self.expect("jokes on the board", len(boards[0]["hilarious"]), 7)

    def test_the_next_night_reads_everything_whatever_it_keeps(self):
        fake = seeded(400)
        self.fetch(fake, "state", compressed=True)
        fake.put("v999999", timestamp=OLD, rating=5, joke_id="joke-1")
        for compressed, reason in ((True, fetch.COMPRESSED),
                                   (False, "the previous night's snapshot is compressed: never built on")):
            with self.subTest(compressed=compressed):
                folder, record, said = self.fetch(fake, "state", compressed)
                self.expect("how", (record["mode"], record["full_reason"], record["documents_read"],
                                    record["snapshot_documents"]), ("full", reason, 403, 403))
                self.expect("the files", sorted(n for n in os.listdir(folder) if n.startswith("rating")),
                            ["rating_events.ndjson.gz" if compressed else "rating_events.ndjson"])
        # A plain night after it is built on again; a compressed one after a plain night reads everything.
        folder, record, _ = self.fetch(fake, "state")
        self.expect("a plain night's next", (record["mode"], record["full_reason"]), ("incremental", None))
        folder, record, said = self.fetch(fake, "state", compressed=True)
        self.expect("a compressed night after a plain one", (record["mode"], record["snapshot_documents"]), ("full", 403))


class Parts(harness.Case):
    def test_a_copied_part_is_whole_and_removed(self):
        work = tempfile.mkdtemp(prefix="rankings-test-parts.")
        self.addCleanup(shutil.rmtree, work, True)
        lines = [b'{"name":"n%07d"}\n' % i for i in range(200000)]     # over a MiB compressed or not
        parts = []
        for number in range(2):
            out = snapshot.Writer(os.path.join(work, f".part-{number}"), compressed=True)
            out.write_lines(lines[number::2])
            parts.append((out.path, out.close()["lines"]))
        whole = snapshot.Writer(os.path.join(work, "whole.gz"))
        for path, count in parts:
            whole.copy(path, count)
        closed = whole.close()
        count, digest = closed["lines"], closed["sha256"]
        with gzip.open(whole.path, "rb") as f:
            self.expect("the members' lines, in order", f.read(), b"".join(lines[0::2] + lines[1::2]))
        self.expect("lines", count, 200000)
        with open(whole.path, "rb") as f:
            self.expect("digest", digest, hashlib.sha256(f.read()).hexdigest())
        self.expect("parts removed", sorted(os.listdir(work)), ["whole.gz"])


if __name__ == "__main__":
    harness.main()
