"""Kept nights that share what did not change (snapshot.py's layers), against the Firestore in
memory: each incremental night writes only its change file over hard links to the night before,
and every kept night, read by the tests' own reader (layered.py), is the collection at its
readTime; a compaction writes a new base; a damaged or missing layer makes the next night a full
read; 0.4.0's night (format 2, one snapshot) is built on; a fetch killed (SIGKILL) at any link, rename, sync or close
leaves every kept night and current whole, and the next fetch succeeds."""
import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import layered  # noqa: E402
from test_fetch import FetchCase, counter_id, seeded  # noqa: E402
from rankings_night import folders, snapshot  # noqa: E402
from rankings_night.snapshot import parse_time  # noqa: E402

CHANGES_1, CHANGES_2 = "rating_events.changes-000001.ndjson", "rating_events.changes-000002.ndjson"
BASE = "rating_events.ndjson"
# The real job, when it is built: every kept night it reads must make the board a full read at
# the night's readTime makes. CI runs this file again with it after the Swift build.
RANKINGS = os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")


class LayerCase(FetchCase):
    def nights(self):
        return sorted(n for n in os.listdir(self.dir) if folders.NIGHT.match(n))

    def folder(self, name="current"):
        return os.path.realpath(os.path.join(self.dir, name))

    def expect_every_night_whole(self, fake):
        """Each kept night: its files as its record says, and its layers, later winning, the
        fake's collection at its readTime."""
        for name in self.nights():
            folder = os.path.join(self.dir, name)
            self.expect(f"{name}: problems", layered.problems(folder), [])
            _, documents = fake.at(parse_time(layered.record(folder)["read_time"]))
            self.expect(f"{name}: the collection at its readTime", layered.documents(folder), documents)
            if os.access(RANKINGS, os.X_OK):
                self.expect(f"{name}: the job's board of the kept night", self.board(folder),
                            self.board(self.full_read(documents)))

    def full_read(self, documents):
        """A file of what a full read at the same readTime would hold."""
        path = os.path.join(tempfile.mkdtemp(dir=self.dir, prefix=".full-"), BASE)
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(d, separators=(",", ":")) + "\n" for d in documents)
        return path

    def board(self, path):
        """`rankings aggregate PATH` (the real job): the board, or its failure."""
        ran = harness.run([RANKINGS, "aggregate", "--quiet", "--computed-at", "2026-11-28T05:00:00Z", path])
        return ran.stdout if ran.returncode == 0 else f"{ran.returncode}: {ran.stderr}"

    def inode(self, folder, name):
        return os.stat(os.path.join(folder, name)).st_ino


class Nights(LayerCase):
    def test_nights_of_changes_then_a_compaction(self):
        fake = seeded(200)
        self.expect_night(self.night(fake), 0)
        full = self.folder()
        self.expect("a full read's layers", [l["file"] for l in self.record()["layers"]], [BASE])
        self.expect("its bytes_written", self.record()["bytes_written"], os.path.getsize(os.path.join(full, BASE)))

        fake.put("zz-new-1", timestamp=fake.now(), rating=4, joke_id="joke-y")    # new
        fake.put(counter_id(3), timestamp=fake.now(), rating=5, joke_id="joke-x")  # re-rated
        done = self.night(fake)
        self.expect_night(done, 0, f"merged into the previous night as {CHANGES_1} (2 written, 1 of them new; "
                                   "later wins by name over 1 linked layer): 201 documents")
        first = self.folder()
        record = self.record()
        self.expect("layers", [(l["file"], l["lines"]) for l in record["layers"]], [(BASE, 200), (CHANGES_1, 2)])
        self.expect("bytes_written: the change file alone", record["bytes_written"],
                    os.path.getsize(os.path.join(first, CHANGES_1)))
        self.expect("the base is the full night's file", self.inode(first, BASE), self.inode(full, BASE))
        self.expect("counts", (record["mode"], record["snapshot_documents"], record["compacted"]),
                    ("incremental", 201, None))

        fake.put(counter_id(3), timestamp=fake.now(), rating=1, joke_id="joke-z")  # changed a second night
        fake.put("zz-new-2", timestamp=fake.now(), rating=2, joke_id="joke-y")
        done = self.night(fake)
        # zz-new-1 is read again (stamped within the 48 h margin before the last readTime) and written
        # again with tonight's changes: a change file holds what the margin reads.
        self.expect_night(done, 0, f"as {CHANGES_2} (3 written, 1 of them new; later wins by name over 2 linked layers)")
        second = self.folder()
        self.expect("layers", [(l["file"], l["lines"]) for l in self.record()["layers"]],
                    [(BASE, 200), (CHANGES_1, 2), (CHANGES_2, 3)])
        self.expect("shared", [self.inode(second, n) for n in (BASE, CHANGES_1)],
                    [self.inode(full, BASE), self.inode(first, CHANGES_1)])
        self.expect("bytes_written", self.record()["bytes_written"], os.path.getsize(os.path.join(second, CHANGES_2)))
        self.expect_every_night_whole(fake)

        # Changes past a quarter of the base's bytes: a new base, no change file.
        for i in range(60):
            fake.put(counter_id(100 + i), timestamp=fake.now(), rating=3, joke_id="joke-c")
        done = self.night(fake)
        self.expect_night(done, 0, f"merged into the previous night as a new {BASE} (compacted: the change files "
                                   "would hold")
        compacted = self.folder()
        record = self.record()
        self.expect("one layer", [(l["file"], l["lines"]) for l in record["layers"]], [(BASE, 202)])
        self.expect_in("why, in the record", "over 25% of the base's", record["compacted"])
        self.assertNotEqual(self.inode(compacted, BASE), self.inode(full, BASE), "a new base")
        self.expect("bytes_written: the new base", record["bytes_written"],
                    os.path.getsize(os.path.join(compacted, BASE)))
        self.expect("no change file", sorted(n for n in os.listdir(compacted) if n.startswith("rating")), [BASE])
        self.expect_every_night_whole(fake)


    def test_the_margin_is_read_each_vote_once(self):
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        base = parse_time(layered.record(self.folder())["read_time"])
        hour = 3600 * 10**9
        # Votes over the whole margin, one on its edge, and one stamped a day ahead.
        stamps = [base - 48 * hour] + [base - 47 * hour + i * hour * 6 for i in range(8)] + [base + 86400 * 10**9]
        for i, stamp in enumerate(stamps):
            fake.put(f"zz-span-{i:02d}", timestamp=stamp, rating=5, joke_id="joke-s")
        done = self.night(fake)
        self.expect_night(done, 0, f"{len(stamps)} documents since")
        record = self.record()
        self.expect("read once each", (record["mode"], record["documents_read"], record["snapshot_documents"]),
                    ("incremental", len(stamps), 100 + len(stamps)))
        self.expect_every_night_whole(fake)

    def test_a_night_of_no_changes_is_its_links_alone(self):
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        full = self.folder()
        self.expect_night(self.night(fake), 0, "0 documents since")
        self.expect_in("said", "merged into the previous night (1 linked layer; none changed since it): 100 documents", self.night(fake).said)
        self.expect("nothing written", (self.record()["bytes_written"], self.record()["layers"][0]["file"]), (0, BASE))
        self.expect("linked", self.inode(self.folder(), BASE), self.inode(full, BASE))
        self.expect_every_night_whole(fake)

    def test_a_name_written_with_an_escape_is_compacted_into_the_base(self):
        fake = seeded(300)
        self.expect_night(self.night(fake), 0)
        fake.put('quo"te', timestamp=fake.now(), rating=4, joke_id="joke-q")
        done = self.night(fake)
        self.expect_night(done, 0, "compacted: the name projects/demo-fake/databases/(default)/documents/"
                                   'rating_events/quo"te is written with a JSON escape')
        self.expect("one layer", [l["file"] for l in self.record()["layers"]], [BASE])
        self.expect_every_night_whole(fake)

    def test_when_a_compaction_is_due(self):
        base = {"file": BASE, "lines": 100, "bytes": 1000, "sha256": "a" * 64}
        change = {"file": CHANGES_1, "lines": 1, "bytes": 100, "sha256": "b" * 64}
        rows = [  # (layers, tonight's bytes, tonight's names, words or None)
            ([base], 250, [], None),
            ([base], 251, [], "the change files would hold 251 bytes, over 25% of the base's 1000"),
            ([base, change], 150, [], None),
            ([base, change], 151, [], "would hold 251 bytes"),
            ([base] + [dict(change, bytes=0)] * 59, 0, [], None),
            ([base] + [dict(change, bytes=0)] * 60, 0, [], "61 change files would be more than 60"),
            ([base], 1, ["a\\b"], "the name a\\b is written with a JSON escape"),
            ([dict(base, bytes=0)], 1, [], "over 25% of the base's 0"),
        ]
        for before, tonight, names, words in rows:
            with self.subTest(files=len(before), tonight=tonight):
                why = snapshot.compaction(before, tonight, names)
                if words is None:
                    self.expect("no compaction", why, None)
                else:
                    self.expect_in("why", words, why or "")
        self.expect("escapes", [snapshot.compaction([base], 0, [n]) is not None
                                for n in ("a/b", "ü", 'a"b', "a\\b", "a\nb", "a\x01")],
                    [False, False, True, True, True, True])

    def test_a_deleted_and_recreated_document_makes_the_counts_differ(self):
        # Counted as new (its createTime is after the last readTime) though the last night has
        # it: the sum is one over Firestore's COUNT, so a full read, never a wrong snapshot.
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        fake.delete(counter_id(5))
        fake.put(counter_id(5), timestamp=fake.now(), rating=2, joke_id="joke-r")
        done = self.night(fake)
        self.expect_night(done, 0, "warning: rest: the incremental night is not proven, so a full read: 1 documents "
                                   "since")
        self.expect_in("the arithmetic", "1 of them created after the previous night's readTime", done.said)
        self.expect_in("the arithmetic", "make 101, but Firestore counts 100", done.said)
        self.expect("a full read", (self.record()["mode"], self.record()["fallback"]), ("full", True))
        self.expect_every_night_whole(fake)

    def test_a_document_without_a_create_time_is_not_proven(self):
        fake = seeded(50)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new", timestamp=fake.now(), rating=1, joke_id="joke-n")
        at = fake.at

        def without(read_time):
            ids, documents = at(read_time)
            return ids, [{k: v for k, v in d.items() if k != "createTime"} for d in documents]
        fake.at = without
        done = self.night(fake)
        self.expect_night(done, 0, "zz-new came without a createTime (None)")
        self.expect("a full read", self.record()["mode"], "full")


class Damage(LayerCase):
    def layered_night(self):
        fake = seeded(200)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new-1", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.expect_night(self.night(fake), 0, f"as {CHANGES_1}")
        fake.put("zz-new-2", timestamp=fake.now(), rating=4, joke_id="joke-y")
        return fake

    def test_a_damaged_or_missing_layer_makes_the_next_night_a_full_read(self):
        def flip(path):
            with open(path, "r+b") as data:
                data.seek(20)
                byte = data.read(1)
                data.seek(20)
                data.write(bytes([byte[0] ^ 1]))

        def cut(path):
            os.truncate(path, os.path.getsize(path) - 3)

        rows = [  # (what, file, damage, words)
            ("a byte flipped in the change file", CHANGES_1, flip, f"{CHANGES_1} is not the snapshot its record describes"),
            ("the change file cut short", CHANGES_1, cut, f"{CHANGES_1} is not the snapshot its record describes ("),
            ("the change file missing", CHANGES_1, os.unlink, f"{CHANGES_1}: No such file or directory"),
            ("a byte flipped in the base", BASE, flip, f"{BASE} is not the snapshot its record describes"),
            ("the base missing", BASE, os.unlink, "the previous night has no rating_events.ndjson"),
        ]
        for what, name, damage, words in rows:
            with self.subTest(what):
                self.setUp()
                fake = self.layered_night()
                damage(os.path.join(self.folder(), name))
                done = self.night(fake)
                self.expect_night(done, 0, words)
                self.expect_in("said as a fallback", "warning: rest: ", done.said)
                self.expect("a full read", (self.record()["mode"], self.record()["fallback"]), ("full", True))
                self.expect("its layers", [l["file"] for l in self.record()["layers"]], [BASE])
                self.expect("current whole", layered.problems(self.folder()), [])
                _, documents = fake.at(parse_time(self.record()["read_time"]))
                self.expect("current", layered.documents(self.folder()), documents)
                if name == CHANGES_1 and damage is flip:
                    self.expect_in("the words", "warning: rest: the incremental night is not proven, so a full read: "
                                               "the previous snapshot cannot be built on: ", done.said)

    def test_a_base_out_of_order_that_its_digest_cannot_show_makes_a_compaction_a_full_read(self):
        # Two lines swapped, and the record made to describe the swapped file: the digest passes,
        # and the compaction's merge finds the order broken; a full read, never a failure each night.
        fake = seeded(200)
        self.expect_night(self.night(fake), 0)
        base, where = os.path.join(self.folder(), BASE), os.path.join(self.folder(), ".night.json")
        with open(base, "rb") as data:
            lines = data.readlines()
        lines[3], lines[4] = lines[4], lines[3]
        with open(base, "wb") as data:
            data.writelines(lines)
        with open(where) as text:
            record = json.load(text)
        record["layers"][0].update(sha256=hashlib.sha256(b"".join(lines)).hexdigest())
        with open(where, "w") as text:
            json.dump(record, text)
        for i in range(60):
            fake.put(counter_id(100 + i), timestamp=fake.now(), rating=3, joke_id="joke-c")
        done = self.night(fake)
        self.expect_night(done, 0, "the incremental night is not proven, so a full read: the previous snapshot cannot "
                                   f"be built on: {base}:5: ")
        self.expect("a full read", (self.record()["mode"], self.record()["fallback"]), ("full", True))
        self.expect("current whole", layered.problems(self.folder()), [])
        _, documents = fake.at(parse_time(self.record()["read_time"]))
        self.expect("current", layered.documents(self.folder()), documents)

    def test_a_0_4_0_night_is_built_on(self):
        # 0.4.0's record (format 2): one snapshot and its digest, no layers.
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        old = self.folder()
        path = os.path.join(old, ".night.json")
        record = layered.record(old)
        base = record.pop("layers")[0]
        del record["bytes_written"], record["compacted"]
        record.update(format=2, snapshot_sha256=base["sha256"], drift_documents=0)
        os.unlink(path)
        with open(path, "w") as out:
            json.dump(record, out)
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.expect_night(self.night(fake), 0, f"as {CHANGES_1} (1 written, 1 of them new; later wins by name over 1 linked layer)")
        self.expect("layers", self.record()["layers"][0], base)
        self.expect("the base linked", self.inode(self.folder(), BASE), self.inode(old, BASE))
        self.expect_whole(fake)
        # Its snapshot changed on disk: its digest says so, and the night reads everything.
        with open(os.path.join(old, BASE), "r+b") as data:
            data.seek(30)
            data.write(b"#")
        os.unlink(os.path.join(self.dir, "current"))
        os.symlink(os.path.basename(old), os.path.join(self.dir, "current"))
        done = self.night(fake)
        self.expect_night(done, 0, f"{BASE} is not the snapshot its record describes")
        self.expect("a full read", (self.record()["mode"], self.record()["fallback"]), ("full", True))

    def test_a_layer_that_cannot_be_linked_is_copied_and_said(self):
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        real = os.link

        def refuse(*_args, **_kwargs):
            raise OSError(18, "Invalid cross-device link")
        os.link = refuse
        try:
            done = self.night(fake)
        finally:
            os.link = real
        self.expect_night(done, 0, "could not be linked into tonight's night (another file system): copied,")
        base = os.path.getsize(os.path.join(self.folder(), BASE))
        self.expect("bytes_written: the copy and the change file", self.record()["bytes_written"],
                    base + os.path.getsize(os.path.join(self.folder(), CHANGES_1)))
        self.expect_every_night_whole(fake)


CHILD = r"""
import os, pickle, signal, sys
sys.path[:0] = [sys.argv[4], sys.argv[5]]
from fake_firestore import FakeFirestore
from rankings_night import fetch, snapshot
k, calls = int(sys.argv[1]), [0]
def wrap(owner, name):
    real = getattr(owner, name)
    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(owner, name, wrapped)
for name in ("link", "rename", "replace", "fsync"):
    wrap(os, name)
wrap(snapshot.Writer, "close")
fake = FakeFirestore()
with open(sys.argv[3], "rb") as state:
    fake.versions = pickle.load(state)
fake.last = max(v[0] for history in fake.versions.values() for v in history)
fetch.run(sys.argv[2], fake, lambda message, severity="INFO": None)
print("completed", calls[0])
"""


class Killed(LayerCase):
    """SIGKILL at the k-th link, rename, replace, fsync or Writer.close of a fetch, for every k
    until one completes: after each, every kept night and current are whole, and the next
    fetch succeeds with every night whole."""

    def each_kill(self, fake, mode):
        saved = os.path.join(self.work, "saved")
        subprocess.run(["cp", "-a", self.dir, saved], check=True)    # -a keeps the hard links
        state = os.path.join(self.work, "fake.pickle")
        with open(state, "wb") as out:
            pickle.dump(fake.versions, out)
        k = 0
        while True:
            k += 1
            shutil.rmtree(self.dir)
            subprocess.run(["cp", "-a", saved, self.dir], check=True)
            child = subprocess.run([sys.executable, "-B", "-c", CHILD, str(k), self.dir, state, HERE,
                                    harness.NIGHT], capture_output=True, text=True, timeout=120)
            if child.returncode == 0:
                self.expect_in(f"k={k}: the fetch that was not killed", f"{mode}", self.record()["mode"]
                               + (" compacted" if self.record().get("compacted") else ""))
                self.assertGreater(k, 4, "a fetch has more points than that")
                break
            self.expect(f"k={k}: killed", (child.returncode, child.stdout), (-signal.SIGKILL, ""))
            self.expect_every_night_whole(fake)
            self.expect(f"k={k}: current names a night", os.path.basename(self.folder()) in self.nights(), True)
            done = self.night(fake)
            self.expect_night(done, 0)
            self.expect_every_night_whole(fake)
            self.assertFalse([n for n in os.listdir(self.dir) if n.startswith(".partial-")], "a partial left")

    def test_an_incremental_night_killed_at_each_point(self):
        fake = seeded(150)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new-1", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.expect_night(self.night(fake), 0, f"as {CHANGES_1}")
        fake.put("zz-new-2", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.each_kill(fake, "incremental")

    def test_a_compaction_killed_at_each_point(self):
        fake = seeded(150)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new-1", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.expect_night(self.night(fake), 0, f"as {CHANGES_1}")
        for i in range(60):
            fake.put(counter_id(i), timestamp=fake.now(), rating=2, joke_id="joke-k")
        self.each_kill(fake, "incremental compacted")


class Reading(LayerCase):
    """What else reads a night reads its layers merged, later winning; and the disk kept nights hold."""

    def test_the_lines_of_a_night_are_its_layers_merged_later_winning(self):
        fake = seeded(40)
        fake.put("bad-then-good", timestamp=fake.now(), rating=3)          # no joke_id
        fake.put("good-then-bad", timestamp=fake.now(), rating=2, joke_id="joke-1")
        self.expect_night(self.night(fake), 0)
        fake.put("bad-then-good", timestamp=fake.now(), rating=3, joke_id="joke-1")
        fake.put("good-then-bad", timestamp=fake.now(), rating=2)
        self.expect_night(self.night(fake), 0, f"as {CHANGES_1}")
        folder = self.folder()
        merged = [json.loads(line) for _, line in snapshot.merged(folder, layered.record(folder)["layers"])]
        self.expect("the layers merged", merged, layered.documents(folder))
        self.expect("the later version's", [d["name"].rsplit("/", 1)[1] for d in merged
                                             if "joke_id" not in d["fields"]], ["good-then-bad"])

    def test_the_disk_kept_nights_hold_counts_a_shared_file_once(self):
        fake = seeded(100)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        self.expect_night(self.night(fake), 0)
        sizes = {}
        for name in self.nights():
            for entry in os.scandir(os.path.join(self.dir, name)):
                sizes[entry.inode()] = entry.stat().st_size
        self.expect("distinct inodes", folders.held(self.dir), (2, sum(sizes.values())))

    def test_seven_nights_are_kept(self):
        fake = seeded(50)
        for i in range(9):
            fake.put(f"zz-{i}", timestamp=fake.now(), rating=4, joke_id="joke-y")
            self.expect_night(self.night(fake), 0)
        self.expect("nights", len(self.nights()), folders.KEEP)
        self.expect("current the newest", os.path.basename(self.folder()), self.nights()[-1])
        self.expect_every_night_whole(fake)


if __name__ == "__main__":
    harness.main()
