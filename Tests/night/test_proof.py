"""The boards' proof (proof.py) against a small Firestore in memory: its COUNTs answered from
documents held as the app writes them, with Firestore's rules for what a filter matches (a range
on a number matches integers and doubles by value, no other type; an equality on a string only
that string), its refusal of a COUNT without its composite index, of an equality on a string of
1,500 bytes or more, and its DEADLINE_EXCEEDED for a COUNT that matches too much. The refused
documents come from the job's --report, as the job writes them. Table-driven; every call counted."""
import datetime
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import proof  # noqa: E402
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


LONG = "J" * 1500      # a joke_id Firestore cannot query by equality (its indexed-value limit)


def votes():
    """{id: fields} in the app's types (Python values), with every edge of the rules: 4.5 and
    4.0 are Hilarious, 2.0 Horrible, 3, 2.5, 3.5 neutral; "5", True, 6, 0, NaN are refused by the
    job and matched by no range; a 5 or a 1 without a string joke_id, and a 5 whose joke_id is
    1,500 bytes, are refused by the job but matched by Firestore's total."""
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
        "x04": {"joke_id": LONG, "rating": 5, "timestamp": NEW},       # a joke_id of 1,500 bytes
    }


def number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def job(documents, since=None):
    """{joke: [hilarious, horrible, neutral]} and the refused documents, as the job's --stats and
    --report give them (docs/input-rules.md): firestore_kind the kind Firestore's filters put it in."""
    jokes, refused = {}, []
    for name, fields in sorted(documents.items()):
        joke, rating, stamp = fields.get("joke_id"), fields.get("rating"), fields.get("timestamp")
        if not isinstance(joke, str) or not joke or len(joke.encode()) >= 1500 or not number(rating) \
                or not 1 <= rating <= 5 or (since and stamp is None):
            kind = None if not number(rating) or (since and (stamp is None or stamp < since)) else \
                "hilarious" if 4 <= rating <= 5 else "horrible" if 1 <= rating <= 2 else None
            refused.append({"input": "rating_events.ndjson", "line": len(refused) + 1, "document": PREFIX + name,
                            "reason": "a reason of the job's", "joke_id": joke if isinstance(joke, str) else None,
                            "firestore_kind": kind})
            continue
        if since and stamp < since:
            continue
        counts = jokes.setdefault(joke, [0, 0, 0])
        counts[0 if rating >= 4 else 1 if rating <= 2 else 2] += 1
    return jokes, refused


def write_stats(jokes):
    folder = tempfile.mkdtemp(prefix="rankings-proof.")
    path = os.path.join(folder, "stats.ndjson")
    with open(path, "w", encoding="utf-8") as out:
        for joke in sorted(jokes, key=lambda j: j.encode()):
            h, o, n = jokes[joke]
            out.write(json.dumps({"joke_id": joke, "hilarious": h, "horrible": o, "neutral": n,
                                  "ratings": h + o + n, "mean_rating": 3.0}) + "\n")
    return path


def board(documents, stats_changes=None, since_ns=None, role="all_time"):
    """A board (role, stats_path, report, since_ns) as the night hands it to prove()."""
    since = None if since_ns is None else datetime.datetime.fromtimestamp(since_ns / 1e9, UTC)
    jokes, refused = job(documents, since)
    for joke, counts in (stats_changes or {}).items():
        if counts is None:
            jokes.pop(joke)
        else:
            jokes[joke] = counts
    return role, write_stats(jokes), {"bad_lines": len(refused), "refused": refused}, since_ns


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
    """firestore.call for :runAggregationQuery over `documents` at READ_TIME (or now). `indexes`:
    the composite indexes that exist (tuples of fields); `deadline`: the most documents a COUNT may
    match before Firestore gives up on it (DEADLINE_EXCEEDED)."""
    database_path = DATABASE

    def __init__(self, documents, indexes=(JOKE_INDEX,), deadline=None):
        self.documents, self.indexes, self.deadline = documents, set(indexes), deadline
        self.calls = []

    def call(self, method, suffix, body=None, final=()):
        assert (method, suffix) == ("POST", "/documents:runAggregationQuery"), (method, suffix)
        assert body.get("readTime", READ_TIME) == READ_TIME, body.get("readTime")
        self.calls.append(body)
        query = body["structuredAggregationQuery"]["structuredQuery"]
        assert query["from"] == [{"collectionId": "rating_events"}]
        filters = self.flat(query.get("where"))
        equal = sorted(f["field"]["fieldPath"] for f in filters if f["op"] == "EQUAL")
        ranged = sorted({f["field"]["fieldPath"] for f in filters if f["op"] != "EQUAL"} - {"__name__"})
        if len(equal) + len(ranged) > 1 and tuple(equal + ranged) not in self.indexes:
            raise Refused("POST …:runAggregationQuery: HTTP 400: The query requires an index. You can create it "
                          "here: https://console.firebase.google.com/…", 400, "FAILED_PRECONDITION")
        if any(len(f["value"].get("stringValue", "").encode()) >= 1500 for f in filters if f["op"] == "EQUAL"):
            raise Refused("POST …: HTTP 400: value is too long", 400, "INVALID_ARGUMENT")
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


def prove(firestore, *boards):
    said = []
    verdict = proof.prove(firestore, READ_TIME, boards, lambda text, severity="INFO": said.append((severity, text)))
    return verdict, said


def mismatches(result):
    return sorted(result.mismatches)


def described(*rows):
    """The mismatches of rows (joke ("": all jokes), kind, the job's count, refused votes added, Firestore's)."""
    return sorted(f"{f'joke {joke}' if joke else 'all jokes'}: {kind} {job}"
                  f"{f' + {accounted} refused by the job' if accounted else ''} on the board, {theirs} in Firestore"
                  for joke, kind, job, accounted, theirs in rows)


class Proofs(harness.Case):
    def test_each_case(self):
        rows = [
            # (what, documents changed, stats changed, Firestore's indexes, deadline,
            #  status, mismatches (joke, kind, job, accounted, firestore), words said)
            ("agreement", {}, {}, {JOKE_INDEX}, None, "proven", [],
             "3 jokes, 8 hilarious, 3 horrible votes as Firestore counts them, 4 of them refused by the job"),
            ("one joke off by one", {}, {"B": [2, 1, 1]}, {JOKE_INDEX}, None, "mismatch",
             [("", "hilarious", 6, 3, 8), ("B", "hilarious", 2, 0, 1)],
             "joke B: hilarious 2 on the board, 1 in Firestore"),
            ("a vote Firestore has that the snapshot lost", {"b06": {"joke_id": "B", "rating": 1}}, {},
             {JOKE_INDEX}, None, "mismatch", [("", "horrible", 2, 1, 4), ("B", "horrible", 1, 0, 2)],
             "joke B: horrible 1 on the board, 2 in Firestore"),
            ("a joke missing from the board", {}, {"C": None}, {JOKE_INDEX}, None, "mismatch",
             [("", "hilarious", 4, 3, 8)],
             "all jokes: hilarious 4 + 3 refused by the job on the board, 8 in Firestore"),
            ("no composite index: the totals proven, the jokes not", {}, {}, set(), None, "unproven", [],
             "--field-config=field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending"),
            ("COUNTs past the deadline cut by name", {}, {}, {JOKE_INDEX}, 2, "proven", [], "8 hilarious"),
        ]
        for what, changed, stats_changes, indexes, deadline, status, expected, words in rows:
            with self.subTest(what):
                documents = votes()
                role, stats, report, since = board(documents, stats_changes)
                documents.update(changed)   # Firestore's, after the snapshot was taken
                firestore = FakeFirestore(documents, indexes, deadline)
                result = proof.prove_board(firestore, READ_TIME, stats, report)
                self.expect("status", result.status, status)
                self.expect("mismatches", mismatches(result), described(*expected))
                self.expect_in("what it says", words, result.lines[0])
                self.expect("queries counted", result.queries, len(firestore.calls))
                self.assertFalse([c for c in firestore.calls if LONG in json.dumps(c)], "a COUNT of the long joke_id")
                if deadline is None:
                    # At most 2 a joke and 1 a kind; without the index, the one refused joke's.
                    self.expect("queries", result.queries, proof.counts(stats) if indexes else 2 + 1)
                else:
                    split = [c for c in firestore.calls if "__name__" in json.dumps(c)]
                    self.assertTrue(split, "no COUNT was cut by name")
                    self.expect_in("every name range's COUNT within the deadline, then none refused",
                                   "8 hilarious, 3 horrible votes as Firestore counts them", result.lines[0])

    def test_the_refused_documents_are_the_reports_and_only_those_with_a_kind_are_added(self):
        documents = votes()
        role, stats, report, _ = board(documents)
        kinds = {e["document"].rsplit("/", 1)[1]: e["firestore_kind"] for e in report["refused"]}
        self.expect("the job's refused documents and their kinds", kinds,
                    {"a06": None, "a07": None, "a08": None, "b04": None, "b05": None,
                     "x01": "hilarious", "x02": "horrible", "x03": "hilarious", "x04": "hilarious"})
        rows = [
            # (what, the report's refused entries changed, status, mismatches)
            ("as the job says", lambda r: r, "proven", []),
            ("none added: the totals disagree by the 5 without a joke_id, the 1 of joke 7, the empty and the long",
             lambda r: [dict(e, firestore_kind=None) for e in r], "mismatch",
             [("", "hilarious", 5, 0, 8), ("", "horrible", 2, 0, 3)]),
            ("a kind given to one Firestore counts in no kind (the \"5\"): taken at its word",
             lambda r: [dict(e, firestore_kind="hilarious") if e["document"].endswith("/a06") else e for e in r],
             "mismatch", [("", "hilarious", 5, 4, 8), ("A", "hilarious", 3, 1, 3)]),
        ]
        for what, change, status, expected in rows:
            with self.subTest(what):
                changed = dict(report, refused=change(report["refused"]))
                verdict, said = prove(FakeFirestore(documents), (role, stats, changed, None))
                self.expect("status", verdict.status, status)
                self.expect("mismatches", mismatches(proof.prove_board(FakeFirestore(documents), READ_TIME, stats,
                                                                       changed)), described(*expected))

    def test_a_refused_vote_of_a_joke_on_the_board_is_added_to_the_jokes_count(self):
        documents = dict(votes(), a09={"joke_id": "A", "rating": 5, "timestamp": NEW})
        role, stats, report, _ = board(votes())     # the job's board without a09: it refused it
        report = {"bad_lines": report["bad_lines"] + 1, "refused": report["refused"] + [
            {"input": "rating_events.ndjson", "line": 99, "document": PREFIX + "a09", "reason": "a reason of the job's",
             "joke_id": "A", "firestore_kind": "hilarious"}]}
        result = proof.prove_board(FakeFirestore(documents), READ_TIME, stats, report)
        self.expect("status", (result.status, result.lines), ("proven", result.lines))
        self.expect_in("accounted", "5 of them refused by the job", result.lines[0])

    def test_a_report_that_does_not_name_every_refused_line_leaves_the_board_unproven_without_a_query(self):
        role, stats, report, _ = board(votes())
        rows = [
            (dict(report, bad_lines=11),
             "the job refused 11 lines but its --report names 9 documents: the refused votes cannot be accounted for"),
            ({"bad_lines": 9}, "the job's --report names no refused documents (a job older than the night)"),
            (dict(report, refused=report["refused"][:-1] + [{"firestore_kind": "funny"}]),
             "refused document 9 of the job's --report is not one: {\"firestore_kind\": \"funny\"}"),
        ]
        for changed, words in rows:
            with self.subTest(words):
                firestore = FakeFirestore(votes())
                verdict, said = prove(firestore, (role, stats, changed, None))
                self.expect("status", verdict.status, "unproven")
                self.expect_in("why", words, verdict.lines[0])
                self.expect("said", said, [("WARNING", verdict.lines[0])])
                self.expect("queries", firestore.calls, [])

    def test_the_window_counts_only_since_t_and_names_its_indexes(self):
        since_ns = parse_time(WINDOW_START)
        rows = [
            # (Firestore's indexes, status, the totals that agree (2 + 2 refused hilarious, 2 + 1 horrible), words)
            ({JOKE_INDEX + ("timestamp",), ("rating", "timestamp")}, "proven",
             "4 hilarious, 3 horrible", "3 jokes, 4 hilarious, 3 horrible"),
            ({JOKE_INDEX + ("timestamp",)}, "unproven", None,
             "--field-config=field-path=rating,order=ascending --field-config=field-path=timestamp,order=ascending"),
            ({("rating", "timestamp")}, "unproven", "4 hilarious, 3 horrible",
             "field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending "
             "--field-config=field-path=timestamp,order=ascending"),
        ]
        for indexes, status, totals, words in rows:
            with self.subTest(indexes=indexes):
                documents = votes()
                result = proof.prove_board(FakeFirestore(documents, indexes), READ_TIME,
                                           *board(documents, since_ns=since_ns)[1:])
                self.expect("status", (result.status, mismatches(result)), (status, []))
                self.expect("totals", totals in result.lines[0] if totals else "votes agree" not in result.lines[0],
                            True)
                self.expect_in("what it says", words, result.lines[0])

    def test_each_boards_line_is_said_once_with_its_severity(self):
        documents = votes()
        monthly = board(documents, since_ns=parse_time(WINDOW_START), role="monthly")
        verdict, said = prove(FakeFirestore(documents, {JOKE_INDEX}), board(documents), monthly)
        self.expect("status", verdict.status, "unproven")
        self.expect("said", [(severity, text.split(":")[0]) for severity, text in said],
                    [("INFO", "all_time"), ("WARNING", "monthly")])
        self.expect("the verdict's lines are what was said", verdict.lines, [text for _, text in said])
        self.assertFalse([t for _, t in said if "warning:" in t.lower() or "error:" in t.lower()], said)
        self.expect("index commands, each once", len(verdict.index_commands), 2)
        self.expect("history", verdict.entry()["status"], "unproven")

    def test_a_stats_file_that_is_not_one_names_its_line(self):
        rows = [
            (b'{"joke_id": "A", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\nnot json\n',
             ":2: not a --stats line: JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
            (b'{"joke_id": "A", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\n'
             b'{"joke_id": "A", "hilarious": 1, "horrible": 0, "neutral": 0, "ratings": 1}\n',
             ":2: joke 'A' is on an earlier line too"),
            (b'{"joke_id": "A", "hilarious": 1.5, "horrible": 0, "neutral": 0, "ratings": 1}\n',
             ":1: not a --stats line: a count is not a whole number"),
            (b'{"joke_id": "A", "hilarious": 1, "neutral": 0, "ratings": 1}\n',
             ":1: not a --stats line: KeyError: 'horrible'"),
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
            def call(self, *args, **kwargs):
                raise Refused("POST …: HTTP 403: Missing or insufficient permissions.", 403, "PERMISSION_DENIED")
        with self.assertRaises(Refused) as raised:
            prove(Down(votes()), board(votes()))
        self.expect("status", status_of(raised.exception), 69)
        with self.assertRaises(Refused):
            proof.probe(Down(votes()), True, print)


class Before(harness.Case):
    """What the night asks before the fetch: the indexes the proof needs, and how long it may take."""

    def test_the_probe_names_each_missing_index(self):
        joke = ("joke_id", "rating", "timestamp")
        command = ("gcloud firestore indexes composite create --project=jokes --database='(default)' "
                   "--collection-group=rating_events --query-scope=COLLECTION ")
        fields = {JOKE_INDEX: "--field-config=field-path=joke_id,order=ascending "
                              "--field-config=field-path=rating,order=ascending",
                  ("rating", "timestamp"): "--field-config=field-path=rating,order=ascending "
                                           "--field-config=field-path=timestamp,order=ascending",
                  joke: "--field-config=field-path=joke_id,order=ascending "
                        "--field-config=field-path=rating,order=ascending "
                        "--field-config=field-path=timestamp,order=ascending"}
        rows = [
            # (the 30-day board, Firestore's indexes, the indexes missing, COUNTs asked)
            (False, {JOKE_INDEX}, [], 1),
            (False, set(), [JOKE_INDEX], 1),
            (True, {JOKE_INDEX, ("rating", "timestamp"), joke}, [], 3),
            (True, set(), [JOKE_INDEX, ("rating", "timestamp"), joke], 3),
            (True, {JOKE_INDEX, joke}, [("rating", "timestamp")], 3),
        ]
        for monthly, indexes, missing, asked in rows:
            with self.subTest(monthly=monthly, indexes=indexes):
                said, firestore = [], FakeFirestore(votes(), indexes)
                commands, seconds = proof.probe(firestore, monthly, lambda text, severity="INFO":
                                                said.append((severity, text)))
                self.expect("commands", commands, [command + fields[m] for m in missing])
                self.expect("said: a WARNING a missing index, with its command",
                            [(severity, text.rsplit("make it with: ", 1)[-1]) for severity, text in said],
                            [("WARNING", c) for c in commands])
                self.expect("COUNTs", len(firestore.calls), asked)
                self.expect("asked at Firestore's now (no readTime)", [c for c in firestore.calls if c.get("readTime")], [])
                self.expect("seconds", isinstance(seconds, float) if len(missing) < asked else seconds is None, True)

    def test_the_limit_grows_with_the_counts(self):
        documents = votes()
        _, stats, _, _ = board(documents)
        self.expect("COUNTs of a board of 3 jokes", proof.counts(stats), 8)
        big = write_stats({f"J{i:06d}": [1, 1, 0] for i in range(28_000)})
        self.expect("COUNTs of a board of 28,000 jokes", proof.counts(big), 56_002)
        small, large = proof.limit(proof.counts(stats)), proof.limit(proof.counts(big))
        self.assertGreaterEqual(small, 300.0)
        self.assertGreater(large, 300.0 + 56_002 * 0.005, "28,000 jokes' COUNTs at 5 ms each do not fit")
        self.assertGreater(proof.limit(4 * 56_002), large)


if __name__ == "__main__":
    harness.main()
