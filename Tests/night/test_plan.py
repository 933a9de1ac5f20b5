"""What tonight's fetch does and why (plan.py), and which records it may build on (record.py):
table-driven, no Firestore, no files but a record's."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import layers, plan, ranges, record, settings  # noqa: E402
from rankings_night.snapshot import Damaged, parse_time  # noqa: E402

NOW = parse_time("2026-11-27T05:00:00Z")
DAY = 86400 * 10**9


def configured(**more):
    return settings.from_environment(dict({"RANKINGS_FIRESTORE_PROJECT": "jokes"}, **more))


def night(**changes):
    base = {"format": 3, "method": "rest", "mode": "incremental", "project": "jokes", "database": "(default)",
            "collection": "rating_events", "read_time": "2026-11-26T05:00:00.000001Z",
            "last_full_read_time": "2026-11-23T05:00:00Z", "documents_read": 12, "snapshot_documents": 5000,
            "drift_documents": 0, "bytes_written": 4000,
            "layers": [{"file": "rating_events.ndjson", "lines": 4990, "bytes": 2000000, "sha256": "a" * 64},
                       {"file": "rating_events.changes-000001.ndjson", "lines": 12, "bytes": 4000, "sha256": "b" * 64}]}
    base.update(changes)
    return base


LAYERS = night()["layers"]


def format2(**changes):
    """A record as the version before layers wrote it: one snapshot and its digest."""
    old = {k: v for k, v in night().items() if k not in ("layers", "bytes_written")}
    return dict(old, format=2, snapshot_sha256="a" * 64) | changes


class Plans(harness.Case):
    def test_each_rule(self):
        WEEKLY = {"RANKINGS_FIRESTORE_FULL_EVERY": "7"}
        rows = [
            # (settings, previous record, why there is none, expected mode, words of the reason)
            ({}, night(), None, "incremental", "building on the night read at 2026-11-26T05:00:00.000001Z"),
            ({}, None, "no previous night", "full", "no previous night"),
            ({}, None, "the previous night's record cannot be used: x", "full", "cannot be used"),
            ({"RANKINGS_FIRESTORE_INCREMENTAL": "no"}, night(), None, "full", "INCREMENTAL=no"),
            ({"RANKINGS_FIRESTORE_FETCH": "export"}, night(), None, "export", "FETCH=export"),
            ({"RANKINGS_FIRESTORE_SINCE": "-30d"}, night(), None, "window", "SINCE is set"),
            ({}, night(project="other"), None, "full", "the previous night's project is 'other'"),
            ({}, night(database="db2"), None, "full", "database"),
            ({}, night(method="export"), None, "full", "method is 'export'"),
            ({}, night(mode="window"), None, "full", "a window, not a snapshot"),
            ({}, night(read_time="2026-11-19T05:00:00Z", last_full_read_time="2026-11-19T05:00:00Z"), None, "full",
             "read over 7 days ago"),
            # Days since the last full read, not runs: seven runs in an afternoon are not a week.
            (WEEKLY, night(last_full_read_time="2026-11-20T05:00:00Z"), None, "full", "the last full read was 7.0 days ago"),
            (WEEKLY, night(last_full_read_time="2026-11-20T17:00:01Z"), None, "incremental", "due 0.5 days from now"),
            (WEEKLY, night(last_full_read_time="2026-11-20T17:00:00Z"), None, "full", "6.5 days ago"),
            # By default a month: every board is proved against Firestore's counts.
            ({}, night(last_full_read_time="2026-11-20T05:00:00Z"), None, "incremental", "due 23.0 days from now"),
            ({"RANKINGS_FIRESTORE_FULL_EVERY": "1"}, night(last_full_read_time="2026-11-26T05:00:00Z"), None, "full",
             "FULL_EVERY=1"),
        ]
        for given, previous, damage, mode, said in rows:
            with self.subTest(given=given, said=said):
                tonight = plan.plan(configured(**given), previous, damage, NOW)
                self.expect("mode", tonight.mode, mode)
                self.expect_in("reason", said, tonight.reason)

    def test_the_watermark_is_the_last_read_less_the_margin(self):
        tonight = plan.plan(configured(RANKINGS_FIRESTORE_MARGIN="2d"), night(), None, NOW)
        self.expect("watermark", tonight.watermark, parse_time("2026-11-24T05:00:00.000001Z"))
        window = plan.plan(configured(RANKINGS_FIRESTORE_SINCE="-30d"), None, "none", NOW)
        self.expect("window", window.since, NOW - 30 * DAY)


class FullReads(harness.Case):
    def test_a_read_that_cannot_finish_within_readtimes_life_is_refused_with_the_fix(self):
        hour, day = 3600, 86400
        rows = [  # (documents, rate per stream, streams, life, deadline, refused?, words)
            (10_000_000, 4000, 8, hour, 1200, False, None),
            (10_000_000, 4000, 1, hour, 1200, True, "RANKINGS_FIRESTORE_STREAMS=3"),
            (10_000_000, 4000, 1, hour, 1200, True, "RANKINGS_FIRESTORE_DEADLINE_SECONDS="),
            (150_000_000, 4000, 8, hour, 7 * day, True, "past Firestore's life of a readTime (60 min)"),
            (150_000_000, 4000, 8, hour, 7 * day, True, "RANKINGS_FIRESTORE_PITR=yes"),
            (3_000_000_000, 4000, 64, hour, 7 * day, True, "or RANKINGS_FIRESTORE_FETCH=export"),
            (150_000_000, 4000, 8, 7 * day, 7 * day, False, None),
            (10_000_000, None, 1, hour, 1200, False, None),     # no full read measured yet
        ]
        for documents, rate, streams, life, deadline, refused, words in rows:
            with self.subTest(documents=documents, streams=streams, words=words):
                said = plan.full_read_fits(documents, rate, streams, life, deadline)
                self.expect("refused", said is not None, refused)
                if words:
                    self.expect_in("the fix", words, said)
        said = plan.full_read_fits(3_000_000_000, 4000, 64, 3600, 7 * 86400)
        self.assertNotIn("STREAMS=", said, "no stream count can do it: not offered")


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
        rows = [  # (low, high, parts, the cuts)
            ("a", "b", None, ["a" + c for c in ranges.ALPHABET]),
            # Across first characters at the first character, not under the low end alone (which
            # left 01 to 07 in one child, [00z, 08), and cut it deeper for ever).
            ("00", "08", None, ["01", "02", "03", "04", "05", "06", "07"]),
            ("00z", "08", None, ["01", "02", "03", "04", "05", "06", "07"]),
            ("z", None, None, ["z" + c for c in ranges.ALPHABET]),
            (None, None, 5, ["B", "O", "a", "n"]),
            # Too few at the first character for the parts asked: the next one's too.
            ("0", "2", 4, ["0V", "1", "1U"]),
        ]
        for low, high, parts, cuts in rows:
            with self.subTest(low=low, high=high, parts=parts):
                children = ranges.split(low, high, parts)
                self.expect("cuts", [lo for lo, _ in children[1:]], cuts)
                self.expect("ends", (children[0][0], children[-1][1]), (low, high))

    def test_balance_cuts_only_where_a_streams_boundary_falls_in_rounds_asked_together(self):
        def counter(i):
            return f"vote-{i:07d}"
        rows = [  # (ids, streams, most rounds, most COUNTs)
            ([f"{i * 7919 % 100003:05d}" for i in range(20000)], 8, 4, 100),
            # A long common prefix costs a round a character (here 11 of them, where the old
            # plan stopped at 8 and read in 4 ranges).
            ([counter(i) for i in range(20000)], 8, 16, 400),
            ([counter(i) for i in range(20000)], 2, 16, 140),
        ]
        for ids, streams, most_rounds, most_counts in rows:
            with self.subTest(first=ids[0], streams=streams):
                ids = sorted(ids)
                rounds = []

                def count_all(asked):
                    rounds.append(len(asked))
                    return [[(lo, hi, sum(1 for i in ids if (lo is None or i >= lo) and (hi is None or i < hi)))]
                            for lo, hi in asked]
                groups = ranges.balance([(None, None, len(ids))], streams, count_all)
                self.expect("streams", len(groups), streams)
                self.expect("covers", (groups[0][0], groups[-1][1]), (None, None))
                for (_, a, _), (b, _, _) in zip(groups, groups[1:]):
                    self.expect("contiguous", a, b)
                self.expect("total", sum(c for _, _, c in groups), len(ids))
                share = len(ids) / streams
                self.assertLessEqual(max(c for _, _, c in groups), share * 1.3, f"balanced: {groups}")
                self.assertLessEqual(len(rounds), most_rounds, f"rounds: {rounds}")
                self.assertLessEqual(sum(rounds), most_counts, f"COUNTs: {rounds}")

    def test_groups_are_contiguous_and_balanced(self):
        cuts = ranges.split(None, None)
        counts = [100] * len(cuts)
        groups = ranges.group(cuts, counts, 8)
        self.expect("streams", len(groups), 8)
        self.expect("covers", (groups[0][0], groups[-1][1]), (None, None))
        self.expect("total", sum(c for _, _, c in groups), sum(counts))
        self.assertLessEqual(max(c for _, _, c in groups), 2 * sum(counts) / 8)
        self.expect("one stream", ranges.group(cuts, counts, 1), [(None, None, sum(counts))])

    def test_quantiles_of_the_previous_snapshot(self):
        names = [f"{i:05d}" for i in range(1000)]
        cuts = ranges.quantiles(names, 1000, 4)
        self.expect("cuts", cuts, [(None, "00250"), ("00250", "00500"), ("00500", "00750"), ("00750", None)])
        self.expect("too few", ranges.quantiles(names[:3], 3, 4), [(None, None)])
        self.expect("from a stream of names", ranges.quantiles(iter(names), 1000, 4), cuts)


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

    def test_a_format_2_record_reads_as_one_layer(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, ".night.json"), "w") as out:
                json.dump(format2(), out)
            read = record.read(folder, NOW)
            self.expect("one layer", layers.of(read), [{"file": "rating_events.ndjson", "lines": 5000, "bytes": None,
                                                        "sha256": "a" * 64}])

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
            (json.dumps(night(drift_documents=-1000)), "not a count"),
            (json.dumps(night()).replace('"documents_read": 12', '"documents_read": 1e400'), "not a count"),
            (json.dumps(night()).replace('"documents_read": 12', '"documents_read": NaN'), "not a count"),
            (json.dumps(night(read_time=12345)), "read_time is 12345, not an RFC 3339 time"),
            (json.dumps(night(read_time="2099-01-01T00:00:00Z")), "is in the future: over a day ahead"),
            (json.dumps(night(read_time="2026-11-28T05:00:01Z")), "is in the future: over a day ahead"),
            (json.dumps(night(last_full_read_time="2026-11-26T06:00:00Z")), "after read_time"),
            (json.dumps(format2(snapshot_sha256="abc")), "snapshot_sha256"),
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
