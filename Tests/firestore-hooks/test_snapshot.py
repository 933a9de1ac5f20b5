"""rankings_snapshot: the merge an incremental night makes, the drift a full night reports, the
order a snapshot promises, and the times both read. No emulator: plain files."""
import io
import json
import os
import sys
import tempfile
import unittest

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "jobs", "firestore"))
import rankings_snapshot as snap  # noqa: E402

BASE = "projects/p/databases/(default)/documents/rating_events/"


def doc(name, rating=5, stamp="2026-11-20T10:00:00.000001Z", update="2026-11-20T10:00:01Z"):
    return {"name": BASE + name,
            "fields": {"rating": {"integerValue": str(rating)}, "timestamp": {"timestampValue": stamp}},
            "createTime": update, "updateTime": update}


def snapshot(folder, label, documents):
    path = os.path.join(folder, label)
    with open(path, "wb") as out:
        for d in sorted(documents, key=lambda d: d["name"]):
            out.write(snap.document_line(d))
    return path


class Snapshot(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="rankings-snapshot-test.")

    def names(self, data):
        return [json.loads(line)["name"][len(BASE):] for line in data.splitlines()]

    def test_merge_replaces_inserts_and_keeps_order(self):
        previous = snapshot(self.folder, "prev", [doc("b"), doc("d"), doc("f")])
        changed = {BASE + n: snap.document_line(doc(n, rating=1)) for n in ("a", "d", "e", "g")}
        out = io.BytesIO()
        self.assertEqual(snap.merge(previous, changed, out), 6)
        data = out.getvalue().decode()
        self.assertEqual(self.names(data), ["a", "b", "d", "e", "f", "g"])
        ratings = {json.loads(l)["name"][len(BASE):]: json.loads(l)["fields"]["rating"]["integerValue"]
                   for l in data.splitlines()}
        self.assertEqual(ratings, {"a": "1", "b": "5", "d": "1", "e": "1", "f": "5", "g": "1"})

    def test_merge_of_nothing_is_the_previous_snapshot(self):
        previous = snapshot(self.folder, "prev", [doc("a"), doc("b")])
        out = io.BytesIO()
        snap.merge(previous, {}, out)
        with open(previous, "rb") as p:
            self.assertEqual(out.getvalue(), p.read())

    def test_a_snapshot_out_of_order_or_cut_is_damaged(self):
        path = os.path.join(self.folder, "bad")
        with open(path, "wb") as out:
            out.write(snap.document_line(doc("b")) + snap.document_line(doc("a")))
        with self.assertRaisesRegex(snap.Damaged, ":2: .*a is not after"):
            snap.merge(path, {}, io.BytesIO())
        with open(path, "wb") as out:
            out.write(snap.document_line(doc("a")) + snap.document_line(doc("b"))[:-1])
        with self.assertRaisesRegex(snap.Damaged, "cut short"):
            snap.merge(path, {}, io.BytesIO())
        with open(path, "wb") as out:
            out.write(snap.document_line(doc("a")) * 2)
        with self.assertRaisesRegex(snap.Damaged, "not after"):
            snap.merge(path, {}, io.BytesIO())

    def test_names_with_escapes_are_decoded(self):
        d = doc('q"uo\\te')
        line = snap.document_line(d)
        self.assertEqual(snap.line_name(line), d["name"])
        self.assertEqual(snap.line_name(b'{"fields":{},"name":"x"}\n'), "x")
        with self.assertRaises(snap.Damaged):
            snap.line_name(b'{"fields":{}}\n')

    def test_drift_counts_only_what_an_incremental_night_cannot_see(self):
        watermark = snap.parse_time("2026-11-20T00:00:00Z")
        held = snapshot(self.folder, "held", [doc("a"), doc("b"), doc("c"), doc("old")])
        full = snapshot(self.folder, "full", [
            doc("a"),                                                  # unchanged
            doc("b", rating=1, update="2026-11-21T00:00:00Z"),         # changed inside the margin
            doc("c", rating=1, stamp="2026-11-19T23:59:59.999999Z",
                update="2026-11-21T00:00:00Z"),                        # changed, stamped before it
            doc("new", stamp="2026-11-01T00:00:00Z"),                  # new, stamped before it
            doc("newer"),                                              # new, inside
        ])                                                             # "old" deleted
        self.assertEqual(snap.drift(held, full, watermark), 3)
        self.assertEqual(snap.drift(full, full, watermark), 0)

    def test_times(self):
        self.assertEqual(snap.parse_time("1970-01-01T00:00:01Z"), 1_000_000_000)
        self.assertEqual(snap.parse_time("2026-11-20T10:00:00.123456789Z") % 1_000_000_000, 123_456_789)
        self.assertEqual(snap.parse_time("2026-11-20T05:00:00-05:00"), snap.parse_time("2026-11-20T10:00:00Z"))
        self.assertEqual(snap.parse_time("2026-11-20T05:00:00.5-05:00"), snap.parse_time("2026-11-20T10:00:00.5Z"))
        self.assertEqual(snap.format_time(snap.parse_time("2026-11-20T10:00:00.5Z")), "2026-11-20T10:00:00.500000Z")
        # Cut to the microsecond, never rounded up past a vote it must take in.
        self.assertEqual(snap.format_time(snap.parse_time("2026-11-20T10:00:00.1234569Z")),
                         "2026-11-20T10:00:00.123456Z")
        self.assertEqual(snap.format_time(snap.parse_time("1969-12-31T23:59:59.999999999Z")),
                         "1969-12-31T23:59:59.999999Z")
        for bad in ("2026-11-20T10:00:00", "2026-11-20T10:00:00.Z", "2026-11-20T10:00:00.1234567891Z", "yesterday"):
            with self.assertRaises(ValueError, msg=bad):
                snap.parse_time(bad)

    def test_record_round_trip_and_damage(self):
        snap.write_record(self.folder, {"mode": "full", "read_time": "2026-11-20T10:00:00Z"})
        self.assertEqual(snap.read_record(self.folder)["mode"], "full")
        with open(os.path.join(self.folder, snap.RECORD), "w") as out:
            out.write("{")
        with self.assertRaises(snap.Damaged):
            snap.read_record(self.folder)
        os.remove(os.path.join(self.folder, snap.RECORD))
        with self.assertRaises(snap.Damaged):
            snap.read_record(self.folder)


if __name__ == "__main__":
    unittest.main()
