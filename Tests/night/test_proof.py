"""The board's proof (proof.py) against a small Firestore in memory: its COUNTs answered from
documents held as the app writes them, with Firestore's rules for what a filter matches (a range
on a number matches integers and doubles by value, no other type; an equality on a string only
that string), its refusal of a joke's range COUNT without the composite index, and its
DEADLINE_EXCEEDED for a COUNT that matches too much. Table-driven; every call counted."""
import datetime
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import proof  # noqa: E402
from rankings_night.fetch import since_filter  # noqa: E402
from rankings_night.snapshot import parse_time  # noqa: E402
from rankings_night.statuses import Failure, status_of  # noqa: E402
from rankings_night.transport import Refused  # noqa: E402

READ_TIME = "2026-11-27T05:00:00.123456Z"
DATABASE = "projects/jokes/databases/(default)"
PREFIX = f"{DATABASE}/documents/rating_events/"
UTC = datetime.timezone.utc
OLD, NEW = datetime.datetime(2026, 9, 1, tzinfo=UTC), datetime.datetime(2026, 11, 20, tzinfo=UTC)
WINDOW_START = "2026-10-28T05:00:00.000000Z"
JOKE_INDEX = ("joke_id", "rating")


def votes():
    """{id: fields} in the app's types (Python values), with every edge of the rules: 4.5 and
    4.0 are Hilarious, 2.0 Horrible, 3, 2.5, 3.5 neutral; "5", True, 6, 0, NaN are refused by the
    job and matched by no range; a 5 or a 1 without a string joke_id is refused by the job but
    matched by Firestore's total."""
    return {
        "a01": {"joke_id": "A", "rating": 5, "timestamp": NEW},
        "a02": {"joke_id": "A", "rating": 4.5, "timestamp": OLD},
        "a03": {"joke_id": "A", "rating": 4.0, "timestamp": NEW},
        "a04": {"joke_id": "A", "rating": 1, "timestamp": NEW},
        "a05": {"joke_id": "A", "rating": 3, "timestamp": NEW},
        "a06": {"joke_id": "A", "rating": "5", "timestamp": NEW},
        "a07": {"joke_id": "A", "rating": 6, "timestamp": NEW},
        "a08": {"joke_id": "A", "rating": True, "timestamp": NEW},
        "b01": {"joke_id": "B", "rating": 2.0, "timestamp": NEW},
        "b02": {"joke_id": "B", "rating": 2.5, "timestamp": NEW},
        "b03": {"joke_id": "B", "rating": 4, "timestamp": OLD},
        "b04": {"joke_id": "B", "rating": float("nan"), "timestamp": NEW},
        "b05": {"joke_id": "B", "rating": 0, "timestamp": NEW},
        "c01": {"joke_id": "C", "rating": 3.5, "timestamp": NEW},
        "c02": {"joke_id": "C", "rating": 5},                          # no timestamp
        "x01": {"rating": 5, "timestamp": NEW},                        # no joke_id
        "x02": {"joke_id": 7, "rating": 1, "timestamp": NEW},          # joke_id a number
        "x03": {"joke_id": "", "rating": 4, "timestamp": OLD},         # an empty joke_id
    }


def job_counts(documents, since=None):
    """{joke: [hilarious, horrible, neutral]} and the bad lines, by the rules of
    docs/input-rules.md: what the job's --stats and --report say."""
    jokes, bad = {}, 0
    for fields in documents.values():
        joke, rating, stamp = fields.get("joke_id"), fields.get("rating"), fields.get("timestamp")
        if not isinstance(joke, str) or not joke or isinstance(rating, bool) or \
                not isinstance(rating, (int, float)) or not 1 <= rating <= 5 or (since and stamp is None):
            bad += 1
            continue
        if since and stamp < since:
            continue
        counts = jokes.setdefault(joke, [0, 0, 0])
        counts[0 if rating >= 4 else 1 if rating <= 2 else 2] += 1
    return jokes, bad


def rest(value):
    if isinstance(value, bool):
        return {"booleanValue": value}
    if isinstance(value, int):
        return {"integerValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if value == value else "NaN"}
    if isinstance(value, datetime.datetime):
        return {"timestampValue": value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}
    return {"stringValue": value}


class FakeFirestore:
    """firestore.call for :runAggregationQuery over `documents` at READ_TIME. `indexes`: the
    composite indexes that exist (tuples of fields); `deadline`: the most documents a COUNT may
    match before Firestore gives up on it (DEADLINE_EXCEEDED)."""
    database_path = DATABASE

    def __init__(self, documents, indexes=(JOKE_INDEX,), deadline=None):
        self.documents, self.indexes, self.deadline = documents, set(indexes), deadline
        self.calls = []

    def run_aggregation_query(self, body, final=()):
        return self.call("POST", "/documents:runAggregationQuery", body, final)

    def call(self, method, suffix, body=None, final=()):
        assert (method, suffix) == ("POST", "/documents:runAggregationQuery"), (method, suffix)
        assert body["readTime"] == READ_TIME, body.get("readTime")
        self.calls.append(body)
        query = body["structuredAggregationQuery"]["structuredQuery"]
        assert query["from"] == [{"collectionId": "rating_events"}]
        filters = self.flat(query.get("where"))
        equal = sorted(f["field"]["fieldPath"] for f in filters if f["op"] == "EQUAL")
        ranged = sorted({f["field"]["fieldPath"] for f in filters if f["op"] != "EQUAL"} - {"__name__"})
        if len(equal) + len(ranged) > 1 and tuple(equal + ranged) not in self.indexes:
            raise Refused("POST …:runAggregationQuery: HTTP 400: The query requires an index. You can create it "
                          "here: https://console.firebase.google.com/…", 400, "FAILED_PRECONDITION")
        matched = [name for name, fields in self.documents.items() if all(self.match(name, fields, f) for f in filters)]
        if self.deadline is not None and len(matched) > self.deadline:
            assert "DEADLINE_EXCEEDED" in final
            raise Refused("POST …: HTTP 504: Aggregation query timed out", 504, "DEADLINE_EXCEEDED")
        return [{"result": {"aggregateFields": {"documents": {"integerValue": str(len(matched))}}},
                 "readTime": READ_TIME, "done": True}]

    def flat(self, where):
        if where is None:
            return []
        if "compositeFilter" in where:
            assert where["compositeFilter"]["op"] == "AND"
            return [f for inner in where["compositeFilter"]["filters"] for f in self.flat(inner)]
        return [where["fieldFilter"]]

    @staticmethod
    def match(name, fields, f):
        path, op, bound = f["field"]["fieldPath"], f["op"], f["value"]
        if path == "__name__":
            have, want = PREFIX + name, bound["referenceValue"]
        elif path not in fields:
            return False
        else:
            have, (kind, want) = fields[path], next(iter(bound.items()))
            if kind in ("integerValue", "doubleValue"):
                if isinstance(have, bool) or not isinstance(have, (int, float)):
                    return False
                want = float(want) if kind == "doubleValue" else int(want)
            elif kind == "timestampValue":
                if not isinstance(have, datetime.datetime):
                    return False
                want = datetime.datetime.fromtimestamp(parse_time(want) / 1e9, UTC)
            elif kind == "stringValue":
                if not isinstance(have, str):
                    return False
            else:
                raise AssertionError(f"a filter on {kind}")
        return {"EQUAL": have == want, "LESS_THAN": have < want, "LESS_THAN_OR_EQUAL": have <= want,
                "GREATER_THAN": have > want, "GREATER_THAN_OR_EQUAL": have >= want}[op]


class Board:
    """A board's files (snapshot, --stats, --report) as the job writes them from `documents`."""

    def __init__(self, documents, stats_changes=None, since=None):
        self.folder = tempfile.mkdtemp(prefix="rankings-proof.")
        self.snapshot = os.path.join(self.folder, "rating_events.ndjson")
        with open(self.snapshot, "w", encoding="utf-8") as out:
            for name in sorted(documents):
                out.write(json.dumps({"name": PREFIX + name, "fields": {k: rest(v) for k, v in
                                                                       documents[name].items()}}) + "\n")
        jokes, self.bad_lines = job_counts(documents, since)
        for joke, counts in (stats_changes or {}).items():
            if counts is None:
                jokes.pop(joke)
            else:
                jokes[joke] = counts
        self.stats = os.path.join(self.folder, "stats.ndjson")
        with open(self.stats, "w", encoding="utf-8") as out:
            for joke in sorted(jokes, key=lambda j: j.encode()):
                h, o, n = jokes[joke]
                out.write(json.dumps({"joke_id": joke, "hilarious": h, "horrible": o, "neutral": n,
                                      "ratings": h + o + n, "mean_rating": 3.0}) + "\n")
        self.report = {"bad_lines": self.bad_lines, "duplicates_removed": 0}

    def prove(self, firestore, where=None, timestamps=False, workers=3, report=None):
        said = []
        bad = proof.refused(self.snapshot, where, timestamps)
        result = proof.prove_board(firestore, "rating_events", READ_TIME, self.stats, bad, workers, said.append,
                                   where=where, report=report or self.report)
        return result, said


def mismatches(result):
    return sorted(((m.joke_id or "", m.kind, m.job, m.accounted, m.firestore) for m in result.mismatches))


class Proofs(harness.Case):
    def test_each_case(self):
        rows = [
            # (what, documents changed, stats changed, Firestore's indexes, deadline,
            #  status, mismatches (joke, kind, job, accounted, firestore), words said)
            ("agreement", {}, {}, {JOKE_INDEX}, None, "proven", [],
             "3 jokes, 7 hilarious, 3 horrible votes as Firestore counts them, 3 of them refused by the job"),
            ("one joke off by one", {}, {"B": [2, 1, 1]}, {JOKE_INDEX}, None, "mismatch",
             [("", "hilarious", 6, 2, 7), ("B", "hilarious", 2, 0, 1)],
             "joke B: hilarious 2 on the board, 1 in Firestore"),
            ("a vote Firestore has that the snapshot lost", {"b06": {"joke_id": "B", "rating": 1}}, {},
             {JOKE_INDEX}, None, "mismatch", [("", "horrible", 2, 1, 4), ("B", "horrible", 1, 0, 2)],
             "joke B: horrible 1 on the board, 2 in Firestore"),
            ("a joke missing from the board", {}, {"C": None}, {JOKE_INDEX}, None, "mismatch",
             [("", "hilarious", 4, 2, 7)],
             "all jokes: hilarious 4 + 2 refused by the job on the board, 7 in Firestore"),
            ("no composite index: the totals proven, the jokes not", {}, {}, set(), None, "unproven", [],
             "--field-config=field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending"),
            ("COUNTs past the deadline cut by name", {}, {}, {JOKE_INDEX}, 2, "proven", [], "7 hilarious"),
        ]
        for what, changed, stats_changes, indexes, deadline, status, expected, words in rows:
            with self.subTest(what):
                documents = votes()
                board = Board(documents, stats_changes)
                documents.update(changed)   # Firestore's, after the snapshot was taken
                firestore = FakeFirestore(documents, indexes, deadline)
                result, said = board.prove(firestore)
                self.expect("status", result.status, status)
                self.expect("mismatches", mismatches(result), expected)
                self.expect_in("what it says", words, "\n".join(said))
                self.expect("queries counted", result.queries, len(firestore.calls))
                if deadline is None:
                    # At most 2 a joke and 1 a kind; without the index, the one refused joke's.
                    bound = 2 * result.jokes + 2 if indexes else 2 + 1
                    self.expect("queries", result.queries, bound)
                else:
                    split = [c for c in firestore.calls if "__name__" in json.dumps(c)]
                    self.assertTrue(split, "no COUNT was cut by name")
                    self.expect("every name range's COUNT within the deadline, then none refused",
                                result.totals, {"hilarious": (5, 2, 7), "horrible": (2, 1, 3)})

    def test_the_refused_votes_are_named_and_without_them_the_totals_disagree(self):
        board = Board(votes())
        bad = proof.refused(board.snapshot)
        self.expect("bad lines, as the job's --report counts them", bad.lines, board.bad_lines)
        self.expect("the votes a COUNT matches", sorted((v.name, v.joke_id, v.kind) for v in bad.votes),
                    [("x01", None, "hilarious"), ("x02", None, "horrible"), ("x03", "", "hilarious")])
        result = proof.prove_board(FakeFirestore(votes()), "rating_events", READ_TIME, board.stats,
                                   proof.Refusals(lines=bad.lines), 2, lambda m: None)
        self.expect("mismatches without them", mismatches(result),
                    [("", "hilarious", 5, 0, 7), ("", "horrible", 2, 0, 3)])

    def test_the_window_counts_only_since_t_and_names_its_indexes(self):
        where = since_filter(parse_time(WINDOW_START))
        since = datetime.datetime.fromtimestamp(parse_time(WINDOW_START) / 1e9, UTC)
        rows = [
            # (Firestore's indexes, status, totals, words)
            ({JOKE_INDEX + ("timestamp",), ("rating", "timestamp")}, "proven",
             {"hilarious": (2, 1, 3), "horrible": (2, 1, 3)}, "3 jokes, 3 hilarious, 3 horrible"),
            ({JOKE_INDEX + ("timestamp",)}, "unproven", {},
             "--field-config=field-path=rating,order=ascending --field-config=field-path=timestamp,order=ascending"),
            ({("rating", "timestamp")}, "unproven", {"hilarious": (2, 1, 3), "horrible": (2, 1, 3)},
             "field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending "
             "--field-config=field-path=timestamp,order=ascending"),
        ]
        for indexes, status, totals, words in rows:
            with self.subTest(indexes=indexes):
                documents = votes()
                board = Board(documents, since=since)
                result, said = board.prove(FakeFirestore(documents, indexes), where=where, timestamps=True)
                self.expect("status", (result.status, mismatches(result)), (status, []))
                self.expect("totals", result.totals, totals)
                self.expect_in("what it says", words, "\n".join(said))

    def test_a_report_the_refusals_do_not_match_leaves_the_board_unproven_without_a_query(self):
        rows = [
            ({"bad_lines": 11, "duplicates_removed": 0},
             "the job refused 11 lines of the snapshot, but its rules read here refuse 8"),
            ({"bad_lines": 8, "duplicates_removed": 4}, "the job removed 4 duplicate votes (--dedupe)"),
        ]
        for report, words in rows:
            with self.subTest(report=report):
                firestore = FakeFirestore(votes())
                result, said = Board(votes()).prove(firestore, report=report)
                self.expect("status", result.status, "unproven")
                self.expect_in("why", words, result.describe())
                self.expect("queries", firestore.calls, [])

    def test_a_stats_file_that_is_not_one_names_its_line(self):
        rows = [
            (b'{"joke_id": "A", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\nnot json\n',
             ":2: not a --stats line: Expecting value: line 1 column 1 (char 0)"),
            (b'{"joke_id": "B", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\n'
             b'{"joke_id": "A", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\n',
             ":2: joke 'A' is not after the line before it"),
            (b'{"joke_id": "A", "hilarious": 1.5, "horrible": 0, "neutral": 0, "ratings": 1}\n',
             ":1: not a --stats line: hilarious is not a whole number"),
        ]
        for text, words in rows:
            with self.subTest(words):
                with tempfile.NamedTemporaryFile(suffix=".ndjson") as stats:
                    stats.write(text)
                    stats.flush()
                    with self.assertRaises(Failure) as raised:
                        proof.read_stats(stats.name)
                    self.expect("status", raised.exception.status, 65)
                    self.expect("message", str(raised.exception), stats.name + words)

    def test_a_failure_other_than_an_index_is_raised(self):
        class Down(FakeFirestore):
            def run_aggregation_query(self, *args, **kwargs):
                raise Refused("POST …: HTTP 403: Missing or insufficient permissions.", 403, "PERMISSION_DENIED")
        with self.assertRaises(Refused) as raised:
            Board(votes()).prove(Down(votes()))
        self.expect("status", status_of(raised.exception), 69)


if __name__ == "__main__":
    harness.main()
