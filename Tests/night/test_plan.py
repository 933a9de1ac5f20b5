"""What tonight's fetch does and why (plan.py), and which records it may build on (record.py):
table-driven, no Firestore, no files but a record's."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import plan, ranges, record  # noqa: E402
from rankings_night.snapshot import Damaged, parse_time  # noqa: E402

NOW = parse_time("2026-11-27T05:00:00Z")
DAY = 86400 * 10**9


def night(**changes):
    base = {"format": 3, "method": "rest", "mode": "incremental", "project": "jokes", "database": "(default)",
            "collection": "rating_events", "read_time": "2026-11-26T05:00:00.000001Z",
            "last_full_read_time": "2026-11-23T05:00:00Z", "documents_read": 12, "snapshot_documents": 5000,
            "drift_documents": 0, "bytes_written": 4000,    # drift_documents: 0.4 wrote it, 0.5 reads past it
            "layers": [{"file": "rating_events.ndjson", "lines": 4990, "bytes": 2000000, "sha256": "a" * 64},
                       {"file": "rating_events.changes-000001.ndjson", "lines": 12, "bytes": 4000, "sha256": "b" * 64}]}
    base.update(changes)
    return base


LAYERS = night()["layers"]


def format2(**changes):
    """A record as 0.4.0 wrote it: one snapshot and its digest, no layers."""
    old = {k: v for k, v in night().items() if k not in ("layers", "bytes_written")}
    return dict(old, format=2, snapshot_sha256="a" * 64) | changes


class Plans(harness.Case):
    def test_each_rule(self):
        rows = [  # (previous record, why there is none, full_because, expected mode, words of the reason)
            (night(), None, None, "incremental", "building on the night read at 2026-11-26T05:00:00.000001Z"),
            (None, "no previous night", None, "full", "no previous night"),
            (None, "the previous night's record cannot be used: x", None, "full", "cannot be used"),
            (night(), None, "the boards disagree", "full", "the boards disagree"),
            (None, "no previous night", "the boards disagree", "full", "no previous night"),
            (night(read_time="2026-11-19T05:00:00Z", last_full_read_time="2026-11-19T05:00:00Z"), None, None, "full",
             "read over 7 days ago"),
            # Days since the last full read, not runs: seven runs in an afternoon are not a week.
            # A month by default, half a day early counting.
            (night(read_time="2026-11-26T05:00:00Z", last_full_read_time="2026-10-28T05:00:00Z"), None, None, "full",
             "the last full read was 30.0 days ago (one every 30 days)"),
            (night(last_full_read_time="2026-10-28T17:00:01Z"), None, None, "incremental", "due 0.5 days from now"),
            (night(last_full_read_time="2026-10-28T17:00:00Z"), None, None, "full", "29.5 days ago"),
            (night(last_full_read_time="2026-11-20T05:00:00Z"), None, None, "incremental", "due 23.0 days from now"),
        ]
        for previous, damage, because, mode, said in rows:
            with self.subTest(said=said):
                tonight = plan.plan(previous, damage, NOW, because)
                self.expect("mode", tonight.mode, mode)
                self.expect_in("reason", said, tonight.reason)

    def test_the_watermark_is_the_last_read_less_48_hours(self):
        self.expect("watermark", plan.plan(night(), None, NOW).watermark, parse_time("2026-11-24T05:00:00.000001Z"))

    def test_which_nights_may_be_built_on(self):
        path = "projects/jokes/databases/(default)"
        rows = [  # (record, the base there, tonight's database, why not)
            (night(), True, path, None),
            (night(), True, None, None),
            (night(project="other"), True, path, "the previous night is of projects/other/databases/(default)/"
                                                 "rating_events, not projects/jokes/databases/(default)/rating_events"),
            (night(database="db2"), True, path, "databases/db2/rating_events, not"),
            (night(collection="votes"), True, path, "/votes, not"),
            (night(method="export"), False, path, "made by the export method, mode 'incremental': never built on"),
            (night(mode="window"), True, path, "made by the rest method, mode 'window': never built on"),
            (night(snapshot_form="gzip", layers=[dict(LAYERS[0], file="rating_events.ndjson.gz", lines=5000)]), False,
             path, "the previous night's snapshot is compressed: never built on"),
            (night(), False, path, "the previous night has no rating_events.ndjson"),
            (night(read_time="2026-11-29T05:00:00Z"), True, path, "the previous night's record cannot be used: "),
        ]
        for given, base, database, why in rows:
            with self.subTest(why=why), tempfile.TemporaryDirectory() as folder:
                record.write(folder, given)
                if base:
                    open(os.path.join(folder, "rating_events.ndjson"), "w").close()
                previous, damage = plan.previous_night(folder, NOW, database)
                if why is None:
                    self.expect("built on", (previous["read_time"], damage), (given["read_time"], None))
                else:
                    self.expect("not built on", previous, None)
                    self.expect_in("why", why, damage)
        self.expect("no folder", plan.previous_night(None, NOW), (None, "no previous night"))

    def test_the_streams_a_full_read_takes(self):
        rows = [  # (snapshot documents, the last full rate, streams, words)
            (10_000_000, 4000, 8, None),
            (10_000_000, None, 8, None),        # no full read measured yet
            (100_000_000, 4000, 8, None),
            (200_000_000, 4000, 16, None),
            (800_000_000, 4000, 62, None),
            (900_000_000, 4000, 64, "over 64 streams takes about 59 min, over 90 % of Firestore's life of a readTime (60 min)"),
            (1000, 0.001, 64, "a full read of 1000 documents at 0 documents a second per stream"),
            (1000, "fast", 8, None),
            (None, 4000, 8, None),
            (1000, 0.0, 8, None),           # a rate rounded to nothing
        ]
        for documents, rate, streams, words in rows:
            with self.subTest(documents=documents, rate=rate):
                got, late = plan.streams(night(snapshot_documents=documents, full_rate=rate))
                self.expect("streams", got, streams)
                self.expect("warned", late is not None, words is not None)
                if words:
                    self.expect_in("the warning", words, late)
        self.expect("no previous night", plan.streams(None), (8, None))

    def test_what_rankings_night_plan_says(self):
        with tempfile.TemporaryDirectory() as directory:
            self.expect("nothing yet", plan.describe(directory, NOW), [
                "tonight's fetch: full", "why: no previous night",
                "asks for: every document, 8 streams at once, proven by the collection's COUNT"])
            folder = os.path.join(directory, "20261126T050000.000001Z")
            os.mkdir(folder)
            record.write(folder, night(full_rate=100.0))
            open(os.path.join(folder, "rating_events.ndjson"), "w").close()
            os.symlink(os.path.basename(folder), os.path.join(directory, "current"))
            self.expect("a night to build on", plan.describe(directory, NOW), [
                "tonight's fetch: incremental",
                "why: building on the night read at 2026-11-26T05:00:00.000001Z; a full read is due 26.0 days from now",
                "asks for: the votes stamped at or after 2026-11-24T05:00:00.000001Z (48 h before the last night's "
                "readTime), then proves the merge by COUNT",
                f"previous night: {folder}: incremental, read at 2026-11-26T05:00:00.000001Z, 5000 documents, "
                "last full read 2026-11-23T05:00:00Z"])


class Ranges(harness.Case):
    def test_children_cover_their_range_exactly(self):
        ids = ["", "-", "-a", "0", "09", "0zz", "A", "Zz", "_", "a", "a-", "az", "azzzz", "b", "z", "zz", "~", "\u00e9t\u00e9"]
        for low, high in [(None, None), ("a", "b"), ("z", None), ("0", "1"), ("az", "b")]:
            children = ranges.split(low, high)
            self.assertTrue(children, f"{low}..{high} splits")
            self.expect("ends", (children[0][0], children[-1][1]), (low, high))
            for (_, a), (b, _) in zip(children, children[1:]):
                self.expect("contiguous", a, b)
            for id_ in ids:
                inside = (low is None or id_ >= low) and (high is None or id_ < high)
                held = sum(1 for lo, hi in children if (lo is None or id_ >= lo) and (hi is None or id_ < hi))
                self.expect(f"ranges of {low}..{high} holding {id_!r}", held, 1 if inside else 0)
        self.expect("below the alphabet", ranges.split(None, "-"), [])
        self.expect("too deep", ranges.split("a" * ranges.DEEPEST, "a" * ranges.DEEPEST + "0"), [])

    def test_a_range_is_cut_at_its_shallowest_ids(self):
        rows = [  # (low, high, the cuts)
            ("a", "b", ["a" + c for c in ranges.ALPHABET]),
            # Across first characters at the first character, not under the low end alone (which
            # left 01 to 07 in one child, [00z, 08), and cut it deeper for ever).
            ("00", "08", ["01", "02", "03", "04", "05", "06", "07"]),
            ("00z", "08", ["01", "02", "03", "04", "05", "06", "07"]),
            ("z", None, ["z" + c for c in ranges.ALPHABET]),
        ]
        for low, high, cuts in rows:
            with self.subTest(low=low, high=high):
                children = ranges.split(low, high)
                self.expect("cuts", [lo for lo, _ in children[1:]], cuts)
                self.expect("ends", (children[0][0], children[-1][1]), (low, high))

    def test_the_id_alphabet_cut_evenly(self):
        for streams in (1, 5, 8, 16, 21, 64):
            with self.subTest(streams=streams):
                parts = ranges.even(streams)
                self.expect("streams", len(parts), streams)
                self.expect("ends", (parts[0][0], parts[-1][1]), (None, None))
                # Auto-ids: 20 characters of the 62 letters and digits, uniform.
                share = [sum(1 for c in ranges.ALPHABET if c.isalnum() and (lo is None or c >= lo)
                             and (hi is None or c < hi)) for lo, hi in parts]
                self.assertLessEqual(max(share) - min(share), 2, f"{streams}: {share}")
        self.expect("between", ranges.between(["b", "a"]), [(None, "a"), ("a", "b"), ("b", None)])
        self.expect("between no cut", ranges.between([]), [(None, None)])


class Records(harness.Case):
    def damaged(self, text):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, record.RECORD), "w") as out:
                out.write(text)
            with self.assertRaises(Damaged) as raised:
                record.read(folder, NOW)
            return str(raised.exception)

    def test_a_good_record_reads(self):
        with tempfile.TemporaryDirectory() as folder:
            record.write(folder, night())
            self.expect("mode", record.read(folder, NOW)["mode"], "incremental")

    def test_a_0_4_0_record_reads_as_one_layer(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, ".night.json"), "w") as out:
                json.dump(format2(), out)
            with open(os.path.join(folder, "rating_events.ndjson"), "wb") as out:
                out.write(b"x" * 1234)
            self.expect("one layer", record.read(folder, NOW)["layers"], [
                {"file": "rating_events.ndjson", "lines": 5000, "bytes": 1234, "sha256": "a" * 64}])
            os.unlink(os.path.join(folder, "rating_events.ndjson"))
            with self.assertRaises(Damaged) as raised:
                record.read(folder, NOW)
            self.expect_in("without its snapshot", "No such file", str(raised.exception))

    def test_firestores_times_minutes_ahead_of_this_clock_are_not_damage(self):
        # A machine's clock 5 or 10 minutes behind Firestore's made every record "in the future".
        with tempfile.TemporaryDirectory() as folder:
            record.write(folder, night(read_time="2026-11-27T05:10:00Z"))
            self.expect("read_time", record.read(folder, NOW)["read_time"], "2026-11-27T05:10:00Z")

    def test_damaged_or_out_of_range_records_are_never_used(self):
        format1 = {"format": 1, "method": "rest", "mode": "incremental", "incrementals_since_full": 1}
        rows = [
            (json.dumps(dict(format1, incrementals_since_full="abc")), "format 1"),
            (json.dumps(dict(format1, incrementals_since_full=-1000)), "format 1"),
            (json.dumps(night(documents_read="abc")), "documents_read is \"abc\", not a count"),
            (json.dumps(night(snapshot_documents=None)), "snapshot_documents is null"),
            (json.dumps(night(snapshot_documents=[1])), "not a count"),
            (json.dumps(night(snapshot_documents=True)), "not a count"),
            (json.dumps(night()).replace('"documents_read": 12', '"documents_read": 1e400'), "not a count"),
            (json.dumps(night()).replace('"documents_read": 12', '"documents_read": NaN'), "not a count"),
            (json.dumps(night(read_time=12345)), "read_time is 12345, not an RFC 3339 time"),
            (json.dumps(night(read_time="2099-01-01T00:00:00Z")), "is in the future: over a day ahead"),
            (json.dumps(night(read_time="2026-11-28T05:00:01Z")), "is in the future: over a day ahead"),
            (json.dumps(night(last_full_read_time="2026-11-26T06:00:00Z")), "after read_time"),
            (json.dumps({k: v for k, v in format2().items() if k != "snapshot_sha256"}), "format 2, not 3 (a night of"),
            (json.dumps(format2(format=1)), "format 1, not 3 (a night of an earlier version)"),
            (json.dumps(night(layers=None)), "layers is not a list of files"),
            (json.dumps(night(layers=[])), "layers is not a list of files"),
            (json.dumps(night(layers=LAYERS[1:])), "layer 0 is not rating_events.ndjson"),
            (json.dumps(night(layers=LAYERS[:1] + LAYERS[:1])), "layer 1 is not rating_events.changes-000001.ndjson"),
            (json.dumps(night(layers=[dict(LAYERS[0], file="../x")])), "layer 0 is not rating_events.ndjson"),
            (json.dumps(night(layers=[LAYERS[0], dict(LAYERS[1], file="rating_events.changes-000002.ndjson")])),
             "layer 1 is not rating_events.changes-000001.ndjson"),
            (json.dumps(night(layers=[dict(LAYERS[0], lines=-1)])), "lines is -1, not a count"),
            (json.dumps(night(layers=[dict(LAYERS[0], bytes="12")])), 'bytes is "12", not a count'),
            (json.dumps(night(layers=[dict(LAYERS[0], sha256="A" * 64)])), "sha256 is not a SHA-256"),
            (json.dumps(night(layers=[dict(LAYERS[0], lines=10)])), "fewer lines than its 5000 documents"),
            (json.dumps(night(bytes_written=None)), "bytes_written is null, not a count"),
            (json.dumps(night(mode="partial")), "mode 'partial'"),
            ("[1]", "not a JSON object"),
            ("{", "Expecting"),
            ("", "Expecting value"),
            ("[" * 100000, "recursion"),
        ]
        for text, said in rows:
            with self.subTest(said=said):
                self.expect_in("the reason", said, self.damaged(text))

    def test_a_missing_record(self):
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaises(Damaged) as raised:
                record.read(folder, NOW)
            self.expect_in("reason", "No such file", str(raised.exception))


if __name__ == "__main__":
    harness.main()
