"""A night's data without Firestore: snapshots (merge, digest, order, times), Firestore's
streamed answers judged whole or broken, and the order of its values."""
import hashlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import snapshot as snap  # noqa: E402
from rankings_night.stream import Broken, read_count, read_page, value_key  # noqa: E402

BASE = "projects/p/databases/(default)/documents/rating_events/"


def doc(name, rating=5, stamp="2026-11-20T10:00:00.000001Z", update="2026-11-20T10:00:01Z"):
    return {"name": BASE + name, "fields": {"rating": {"integerValue": str(rating)},
                                            "timestamp": {"timestampValue": stamp}},
            "createTime": update, "updateTime": update}


class Snapshots(harness.Case):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="rankings-night-test.")

    def write(self, label, documents):
        out = snap.Writer(os.path.join(self.folder, label))
        out.write_lines([snap.document_line(d) for d in sorted(documents, key=lambda d: d["name"])])
        closed = out.close()
        return out.path, (closed["lines"], closed["sha256"])

    def merged(self, previous, expected, changed):
        """A compaction's merge of one checked layer and tonight's changes."""
        layer = {"file": os.path.basename(previous), "lines": expected[0], "sha256": expected[1],
                 "bytes": os.path.getsize(previous)}
        snap.verify(self.folder, [layer])
        out = snap.Writer(os.path.join(self.folder, f"merged{len(os.listdir(self.folder))}"))
        for _, line in snap.merged(self.folder, [layer], ((n, changed[n]) for n in sorted(changed))):
            out.write_lines([line])
        closed = out.close()
        return out.path, (closed["lines"], closed["sha256"])

    def test_merge_replaces_inserts_and_keeps_order(self):
        previous, recorded = self.write("prev", [doc("b"), doc("d"), doc("f")])
        changed = {BASE + n: snap.document_line(doc(n, rating=1)) for n in ("a", "d", "e", "g")}
        path, (lines, _) = self.merged(previous, recorded, changed)
        self.expect("lines", lines, 6)
        with open(path) as merged:
            ratings = {json.loads(line)["name"][len(BASE):]: json.loads(line)["fields"]["rating"]["integerValue"]
                       for line in merged}
        self.expect("merged", ratings, {"a": "1", "b": "5", "d": "1", "e": "1", "f": "5", "g": "1"})
        self.expect("order", list(ratings), sorted(ratings))

    def test_the_digest_is_the_files_and_a_merge_of_nothing_copies_it(self):
        previous, (lines, digest) = self.write("prev", [doc("a"), doc("b")])
        with open(previous, "rb") as p:
            data = p.read()
        self.expect("digest", digest, hashlib.sha256(data).hexdigest())
        path, _ = self.merged(previous, (lines, digest), {})
        with open(path, "rb") as merged:
            self.expect("bytes", merged.read(), data)

    def test_a_changed_previous_snapshot_is_not_built_on(self):
        """One rating changed on disk (1 -> 5), or a name moved to another collection: its
        recorded digest no longer matches, and the merge refuses it."""
        previous, recorded = self.write("prev", [doc("a", rating=1), doc("b")])
        with open(previous, "rb") as p:
            data = p.read()
        for changed in (data.replace(b'"integerValue":"1"', b'"integerValue":"5"'),
                        data.replace(b"rating_events/b", b"rating_eventz/b")):
            with open(previous, "wb") as p:
                p.write(changed)
            with self.assertRaises(snap.Damaged) as raised:
                self.merged(previous, recorded, {})
            self.expect_in("reason", "is not the snapshot its record describes", str(raised.exception))
        with open(previous, "wb") as p:
            p.write(data)
        with self.assertRaises(snap.Damaged):
            self.merged(previous, (recorded[0] + 1, recorded[1]), {})

    def test_a_snapshot_out_of_order_or_cut_is_damaged(self):
        cases = [(doc("b"), doc("a"), ":2: .*a is not after"), (doc("a"), doc("a"), "not after")]
        for first, second, said in cases:
            path = os.path.join(self.folder, "bad")
            with open(path, "wb") as out:
                out.write(snap.document_line(first) + snap.document_line(second))
            with self.assertRaisesRegex(snap.Damaged, said):
                list(snap.sorted_lines(path))
        with open(path, "wb") as out:
            out.write(snap.document_line(doc("a")) + snap.document_line(doc("b"))[:-1])
        with self.assertRaisesRegex(snap.Damaged, "cut short"):
            list(snap.sorted_lines(path))

    def test_names_with_escapes_are_decoded(self):
        d = doc('q"uo\\te')
        self.expect("name", snap.line_name(snap.document_line(d)), d["name"])
        self.expect("name not first", snap.line_name(b'{"fields":{},"name":"x"}\n'), "x")
        with self.assertRaises(snap.Damaged):
            snap.line_name(b'{"fields":{}}\n')

    def test_times(self):
        self.expect("epoch", snap.parse_time("1970-01-01T00:00:01Z"), 10**9)
        self.expect("nanoseconds", snap.parse_time("2026-11-20T10:00:00.123456789Z") % 10**9, 123_456_789)
        self.expect("offset", snap.parse_time("2026-11-20T05:00:00-05:00"), snap.parse_time("2026-11-20T10:00:00Z"))
        self.expect("cut, not rounded", snap.format_time(snap.parse_time("2026-11-20T10:00:00.1234569Z")),
                    "2026-11-20T10:00:00.123456Z")
        self.expect("before the epoch", snap.format_time(snap.parse_time("1969-12-31T23:59:59.999999999Z")),
                    "1969-12-31T23:59:59.999999Z")
        self.expect("year 1, four digits", snap.format_time(snap.parse_time("0001-01-01T00:00:00Z")),
                    "0001-01-01T00:00:00.000000Z")
        for bad in ("2026-11-20T10:00:00", "2026-11-20T10:00:00.Z", "2026-11-20T10:00:00.1234567891Z", "yesterday",
                    "\u0662026-11-20T10:00:00Z"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                snap.parse_time(bad)


def item(name, read_time="2026-11-26T05:00:00.000001Z", **more):
    return dict({"document": {"name": BASE + name, "fields": {}}, "readTime": read_time}, **more)


class Streams(harness.Case):
    def broken(self, answer, said):
        with self.assertRaises(Broken) as raised:
            read_page(answer, "runQuery page 2")
        self.expect("status", raised.exception.status, 69)
        self.expect_in("reason", said, str(raised.exception))

    def test_a_whole_page_and_an_empty_one(self):
        documents, read_time = read_page([item("a"), item("b", done=True)], "p")
        self.expect("names", [d["name"] for d in documents], [BASE + "a", BASE + "b"])
        self.expect("empty", read_page([{"readTime": "t", "done": True}], "p"), ([], "t"))

    def test_broken_streams(self):
        for answer, said in [
                ([], "ends without its item marked done (0 items)"),
                ([item("a"), item("b")], "ends without its item marked done (2 items): cut short"),
                ({"error": {"message": "denied"}}, "not a stream (a JSON array)"),
                ([item("a"), 42], "item 2 is not an object but 42"),
                ([item("a"), {"error": {"code": 503, "message": "stopped"}}],
                 "Firestore stopped the stream at item 2 with an error: stopped"),
                ([item("a", done=True), item("b")], "item 2 follows the item marked done"),
                ([{"document": {"fields": {}}, "readTime": "t", "done": True}], "a document without a name"),
                ([{"document": {"name": 7}, "readTime": "t", "done": True}], "a document without a name"),
                ([{"document": {"name": "x"}, "done": True}], "holds no readTime"),
                ([{"readTime": 5, "done": True}], "readTime is not a string")]:
            with self.subTest(said=said):
                self.broken(answer, said)

    def test_counts(self):
        def answer(value, **more):
            return [dict({"result": {"aggregateFields": {"documents": value}}, "readTime": "t", "done": True}, **more)]
        self.expect("count", read_count(answer({"integerValue": "12100"}), "c"), (12100, "t"))
        for bad, said in [([], "ends without its item marked done"),
                          (answer({"integerValue": "1"}, done=False) + answer({"integerValue": "1"}), "2 counts"),
                          (answer({"doubleValue": 1.0}), "no integer count"),
                          ([{"error": {"message": "too old"}}], "an error: too old"), ([3], "not an object")]:
            with self.subTest(said=said), self.assertRaises(Broken) as raised:
                read_count(bad, "runAggregationQuery")
            self.expect_in("reason", said, str(raised.exception))

    def test_values_order_as_firestore_orders_them(self):
        texts = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000000001Z", "2026-01-01T00:00:00.5Z",
                 "2026-01-01T00:00:00.500000001Z", "2026-01-01T00:00:01Z"]
        keys = [value_key({"timestampValue": t}) for t in texts]
        self.expect("times, not text", keys, sorted(keys))
        values = [{"nullValue": None}, {"booleanValue": True}, {"integerValue": "-3"}, {"doubleValue": 2.5},
                  {"integerValue": "10"}, {"timestampValue": "1970-01-01T00:00:00Z"}, {"stringValue": "a"}]
        keys = [value_key(v) for v in values]
        self.expect("types", keys, sorted(keys))
        for value in ({"mapValue": {}}, {"timestampValue": "yesterday"}, {"integerValue": "x"}, {}, 3):
            with self.assertRaises(Broken):
                value_key(value)


if __name__ == "__main__":
    harness.main()
