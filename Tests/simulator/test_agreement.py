"""The simulator against Google's Firestore emulator, the reference for Firestore's behaviour:
both started here, the emulator seeded with exactly the simulator's synthetic votes, the same two
batches of writes made to both, then the same cases asked of both, and their answers required to
be the same but for the times each stamps by its own clock (agreement.normalised): pages read with
cursors and limits by each filter and order, at the server's now and at readTimes before and
between the writes; counts with and without filters; empty results; refusals; the emulator's export read back by `rankings aggregate`; and the night's own reader
over both. Google's emulator does not enforce production's limits, so none is tested here (see
test_limits.py)."""
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path[:0] = [TESTS, os.path.join(TESTS, "firestore-loop")]

import harness  # noqa: E402
from emulator import Emulator  # noqa: E402  (Tests/firestore-loop/emulator.py)
from simulator import agreement as a, times  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
from simulator.rest import Client  # noqa: E402

PROJECT = "agreement"
DOCUMENTS = 300
RANKINGS = os.environ.get("SIMULATOR_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")


class Side:
    """One Firestore under test: its client, and the readTimes of its own clock around the writes."""

    def __init__(self, label, address):
        self.label, self.client = label, Client(address, PROJECT)
        self.at, self.commits = {}, []

    def write(self, writes):
        status, _, answer = self.client.commit(writes)
        assert status == 200, f"{self.label}: commit: {status} {answer}"
        self.commits.append(a.normalised(answer))
        return answer


def setUpModule():
    global SIM, EMULATOR, SIDES
    SIM = FirestoreSimulator(documents=DOCUMENTS, seed=7, project=PROJECT).start()
    EMULATOR = Emulator()
    try:
        EMULATOR.start()
        emulated, simulated = Side("emulator", EMULATOR.address), Side("simulator", SIM.address)
        seed = [(f"rating_events/{d['name'].rsplit('/', 1)[1]}", d["fields"]) for d in SIM.generated()]
        for start in range(0, len(seed), 500):
            status, _, answer = emulated.client.commit(seed[start:start + 500])
            assert status == 200, f"seeding the emulator: {status} {answer}"
        votes = SIM.votes
        for side in (emulated, simulated):
            side.at["seeded"] = side.client.now()
            time.sleep(0.01)
            side.write(a.first_writes(votes, times.format))
            side.at["between"] = side.client.now()
            time.sleep(0.01)
            side.write(a.second_writes(votes, times.format))
            side.at["after"] = side.client.now()
        SIDES = (simulated, emulated)
    except BaseException:
        EMULATOR.stop()
        SIM.stop()
        raise


def tearDownModule():
    EMULATOR.stop()
    SIM.stop()


class Agreement(harness.Case):
    def agree(self, label, ask, documents=None):
        """ask(side) -> anything JSON-like; the same from both (and holding `documents` documents,
        when given, so that agreeing on nothing cannot pass for agreement)."""
        simulated, emulated = (ask(side) for side in SIDES)
        with self.subTest(label):
            self.expect(label, simulated, emulated)
            if documents is not None:
                self.expect(f"{label}: documents", a.documents_in(simulated), documents)

    def ids(self, *indexes):
        return [f"{SIDES[0].client.root}/rating_events/{SIM.votes.id(i)}" for i in indexes]

    def test_the_writes_answer_alike(self):
        self.agree("both commits' answers", lambda side: side.commits)

    def test_pages_by_name(self):
        for limit, at, documents in ((7, None, 300), (50, "seeded", 300), (11, "between", 303), (1000, "after", 300)):
            self.agree(f"every document by name, {limit} a page, at {at or 'now'}",
                       lambda side: a.chain(side.client, None, ("__name__",), limit, side.at.get(at)), documents)

    def test_pages_by_time(self):
        since = a.since(times.format(SIM.votes.timestamp(150)))
        for limit, at in ((13, None), (9, "seeded"), (13, "between")):
            self.agree(f"timestamp >= vote 150's, by [timestamp, __name__], {limit} a page, at {at or 'now'}",
                       lambda side: a.chain(side.client, since, ("timestamp", "__name__"), limit, side.at.get(at)))
        self.agree("by [timestamp, __name__] with no filter, at between (an integer timestamp first, a string "
                   "last, none left out)",
                   lambda side: a.chain(side.client, None, ("timestamp", "__name__"), 40, side.at["between"]), 302)

    def test_pages_of_name_ranges(self):
        low, high = self.ids(100, 200)
        self.agree("names in [vote 100, vote 200)",
                   lambda side: a.chain(side.client, a.both(a.name("GREATER_THAN_OR_EQUAL", low),
                                                            a.name("LESS_THAN", high)), ("__name__",), 30))
        since = a.since(times.format(SIM.votes.timestamp(150)))
        self.agree("names in (vote 100, vote 200] and timestamp >= vote 150's, at between",
                   lambda side: a.chain(side.client, a.both(a.name("GREATER_THAN", low),
                                                            a.name("LESS_THAN_OR_EQUAL", high), since),
                                        ("timestamp", "__name__"), 17, side.at["between"]))
        self.agree("names from the start up to a new vote's, at between",
                   lambda side: a.chain(side.client, a.name("LESS_THAN_OR_EQUAL",
                                                            f"{side.client.root}/rating_events/00002-new-vote"),
                                        ("__name__",), 5, side.at["between"]))

    def test_a_filter_on_another_field(self):
        five = {"fieldFilter": {"field": {"fieldPath": "rating"}, "op": "EQUAL", "value": {"integerValue": "5"}}}
        self.agree("rating == 5 by name, 20 a page, at between",
                   lambda side: a.chain(side.client, five, ("__name__",), 20, side.at["between"]))
        self.agree("COUNT of rating == 5 at between", lambda side: a.normalised(
            side.client.count(a.query(five), side.at["between"])[2], side.at["between"]))

    def test_implicit_order_and_cursors(self):
        since = a.since(times.format(SIM.votes.timestamp(280)))
        self.agree("timestamp >= vote 280's without orderBy (ordered by timestamp, then name)",
                   lambda side: a.normalised(side.client.query(a.query(since))[2]))
        start, end = self.ids(50, 60)
        cases = {"startAt before (inclusive) and endAt after (inclusive)":
                 {"startAt": {"values": [{"referenceValue": start}], "before": True},
                  "endAt": {"values": [{"referenceValue": end}], "before": False}},
                 "startAt after (the default) and endAt before":
                 {"startAt": {"values": [{"referenceValue": start}]},
                  "endAt": {"values": [{"referenceValue": end}], "before": True}}}
        for label, cursors in cases.items():
            self.agree(label, lambda side: a.normalised(
                side.client.query(a.query(None, ("__name__",), 100, **cursors), side.at["after"])[2],
                side.at["after"]))
        stamp = {"timestampValue": times.format(SIM.votes.timestamp(120))}
        self.agree("a cursor of the timestamp alone, after it",
                   lambda side: a.normalised(side.client.query(a.query(
                       None, ("timestamp", "__name__"), 3, startAt={"values": [stamp], "before": False}))[2]))

    def test_empty_answers(self):
        low = self.ids(5)[0]
        cases = {"a collection with no documents": a.query(collection="nothing", limit=10),
                 "an empty name range": a.query(a.both(a.name("GREATER_THAN_OR_EQUAL", low),
                                                       a.name("LESS_THAN", low)), ("__name__",), 10),
                 "limit 0": a.query(by=("__name__",), limit=0),
                 "timestamp >= a time after every vote": a.query(a.since("2100-01-01T00:00:00Z"))}
        for label, structured in cases.items():
            self.agree(label, lambda side: [a.normalised(side.client.query(structured)[2]),
                                            a.normalised(side.client.count(structured)[2])])

    def test_counts(self):
        low, high = self.ids(100, 200)
        since = a.since(times.format(SIM.votes.timestamp(150)))
        cases = {"everything": a.query(), "timestamp >= vote 150's": a.query(since),
                 "names in [vote 100, vote 200)": a.query(a.both(a.name("GREATER_THAN_OR_EQUAL", low),
                                                                 a.name("LESS_THAN", high))),
                 "names in [vote 100, vote 200) and timestamp >= vote 150's":
                     a.query(a.both(a.name("GREATER_THAN_OR_EQUAL", low), a.name("LESS_THAN", high), since)),
                 "limit 5": a.query(limit=5)}
        for label, structured in cases.items():
            for at in (None, "seeded", "between", "after"):
                self.agree(f"COUNT of {label} at {at or 'now'}", lambda side: a.normalised(
                    side.client.count(structured, side.at.get(at))[2], side.at.get(at)))
        self.agree("COUNT without an alias (Firestore names it)", lambda side: a.normalised(side.client.call(
            "POST", "/documents:runAggregationQuery",
            {"structuredAggregationQuery": {"structuredQuery": a.query(), "aggregations": [{"count": {}}]}})[2]))

    def test_the_board_proofs_counts(self):
        """rankings_night.proof's COUNTs: a joke's Hilarious and Horrible votes, with and without
        the 30-day window, cut by name as a COUNT past its deadline is, and each kind's total; for
        jokes the writes re-rated, deleted or added votes of, one with none, at readTimes before,
        between and after the writes (the simulator answers them from its index of kinds)."""
        from rankings_night.proof import KINDS, kind_filter
        jokes = sorted({SIM.votes.kind(i)[0] for i in (10, 20, 30, 40, 150)}) + [
            "re-rated-joke", "new-joke", "late-joke", "x", "no-such-joke"]
        low, high = self.ids(100, 200)
        windows = {"": None, ", timestamp >= vote 150's": a.since(times.format(SIM.votes.timestamp(150))),
                   ", names in [vote 100, vote 200)": a.both(a.name("GREATER_THAN_OR_EQUAL", low),
                                                             a.name("LESS_THAN", high))}
        for at in (None, "seeded", "between", "after"):
            for window, where in windows.items():
                cases = {f"{kind}{window}": kind_filter(kind, where=where) for kind, _, _ in KINDS}
                cases.update({f"{joke}'s {kind}{window}": kind_filter(kind, joke, where)
                              for joke in jokes for kind, _, _ in KINDS})
                self.agree(f"the proof's COUNTs at {at or 'now'}{window}", lambda side: {
                    label: a.normalised(side.client.count(a.query(where_), side.at.get(at))[2], side.at.get(at))
                    for label, where_ in cases.items()})
        counted = [SIDES[0].client.count(a.query(kind_filter(kind, jokes[0])))[2][0]["result"]["aggregateFields"]
                   for kind, _, _ in KINDS]
        self.expect("a joke of the generator's has votes of some kind (agreeing on none proves nothing)",
                    any(c["documents"]["integerValue"] != "0" for c in counted), True)

    def test_refusals(self):
        def now_plus(seconds):
            return lambda side: times.format(times.parse(side.client.now()) + seconds * times.SECOND)

        for label, when in (("eight days ago", now_plus(-8 * 86400)), ("an hour ahead", now_plus(3600)),
                            ("with nanoseconds", lambda side: "2026-01-01T00:00:00.123456789Z")):
            self.agree(f"a readTime {label}", lambda side: [
                side.client.query(a.query(limit=1), when(side))[::2],
                side.client.count(a.query(), when(side))[::2]])
        since = a.since("2020-01-01T00:00:00Z")
        self.agree("orderBy __name__ alone with a timestamp inequality",
                   lambda side: side.client.query(a.query(since, ("__name__",), 5))[::2])
        self.agree("a cursor on __name__ that is not a reference",
                   lambda side: side.client.query(a.query(None, ("__name__",), 5, startAt={
                       "values": [{"stringValue": "x"}], "before": False}))[::2])
        self.agree("a cursor on __name__ that is not a full name",
                   lambda side: side.client.query(a.query(None, ("__name__",), 5, startAt={
                       "values": [{"referenceValue": "rating_events/x"}], "before": False}))[::2])

    def test_export_reads_as_the_same_board(self):
        """The emulator's export endpoint on both; `rankings aggregate` makes one board of each,
        and of the simulator's own NDJSON of the same votes."""
        with tempfile.TemporaryDirectory() as folder:
            boards = []
            for side in SIDES:
                where = os.path.join(folder, side.label)
                os.mkdir(where)
                status, _, answer = side.client.call("POST", f"/emulator/v1/projects/{PROJECT}:export",
                                                     {"database": side.client.database, "export_directory": where})
                self.expect(f"{side.label}'s export answer", (status, answer), (200, {}))
                exported, = os.listdir(where)
                boards.append(self.aggregate(os.path.join(where, exported)))
            ndjson = os.path.join(folder, "votes.ndjson")
            SIM.write_ndjson(ndjson)
            boards.append(self.aggregate(ndjson))
        self.expect("the board of the simulator's export", boards[0], boards[1])
        self.expect("the board of the simulator's NDJSON", boards[2], boards[1])

    def aggregate(self, source):
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--top", "1000", "--computed-at",
                            "2026-11-27T00:00:00Z", source])
        self.expect_exit(done, 0)
        return json.loads(done.stdout)

    def test_the_nights_reader(self):
        """rankings_night.firestore.Query, a page of 23 at a time, and its COUNT: the same from both."""
        from rankings_night import settings as night_settings
        from rankings_night.firestore import Firestore, Query

        def read(side):
            settings = night_settings.from_environment({"FIRESTORE_EMULATOR_HOST": side.client.address,
                                                        "RANKINGS_FIRESTORE_PROJECT": PROJECT})
            query = Query(Firestore(settings, print), "rating_events", page_size=23)
            documents = [a.normalised(d) for page in query.pages() for d in page]
            return documents, Query(Firestore(settings, print), "rating_events", read_time=query.read_time).count()

        self.agree("every vote and its count, read by the night", read)


if __name__ == "__main__":
    harness.main()
