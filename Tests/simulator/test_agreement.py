"""The simulator against Google's Firestore emulator, the reference for Firestore's behaviour: the
emulator seeded with exactly the simulator's synthetic votes, the same two batches of writes made
to both, then the night's kinds of question asked of both (pages by name and by time with cursors
and limits, name ranges, counts, the board's proof's COUNTs, readTimes before, between and after
the writes and refused ones, the night's own reader) and their answers required to be the same but
for the times each stamps by its own clock: a time in Firestore's form becomes <time>, the readTime
asked <readTime asked>, an updateTime equal to its createTime <createTime>; a time in any other
form stays, so differs. Production's limits, which the emulator lacks, are test_limits.py's."""
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "firestore-loop")]

import harness  # noqa: E402
from emulator import Emulator  # noqa: E402  (Tests/firestore-loop/emulator.py)
from simulator import times  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
from simulator.rest import Client, both, field, name, query, since  # noqa: E402

PROJECT = "agreement"
RANKINGS = os.environ.get("SIMULATOR_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6})?Z")
FIVE = field("rating", "EQUAL", {"integerValue": "5"})


def normalised(item, asked=None):
    if isinstance(item, (list, tuple)):
        return [normalised(v, asked) for v in item]
    if not isinstance(item, dict):
        return item
    out = {k: ("<readTime asked>" if v == asked else "<time>") if isinstance(v, str) and TIME.fullmatch(v)
           and k.endswith("Time") else normalised(v, asked) for k, v in item.items()}
    if "createTime" in item and item.get("updateTime") == item["createTime"]:
        out["updateTime"] = "<createTime>"
    return out


def vote(joke, rating, timestamp):
    return {"joke_id": {"stringValue": joke}, "rating": {"integerValue": str(rating)},
            "device_id": {"stringValue": "d"}, "week_id": {"stringValue": "2026-W01"},
            "timestamp": timestamp if isinstance(timestamp, dict) else {"timestampValue": times.format(timestamp)}}


def batches(votes):
    """A: a re-rate, a delete, a new vote, documents whose timestamp is missing, a string or an
    integer (where Firestore's type ordering shows). B: the new vote re-rated, another delete, the
    odd ones deleted, a vote stamped before the filters' times, a vote written as it is."""
    return ([(f"rating_events/{votes.id(10)}", vote("re-rated-joke", 2, votes.end + 1_500_000)),
             (f"rating_events/{votes.id(20)}", None),
             ("rating_events/00002-new-vote", vote("new-joke", 5, votes.end + 2_000)),
             ("rating_events/00003-no-time", {"joke_id": {"stringValue": "x"}, "rating": {"integerValue": "5"}}),
             ("rating_events/00004-string-time", vote("x", 1, {"stringValue": "yesterday"})),
             ("rating_events/00005-number-time", vote("x", 1, {"integerValue": "12"}))],
            [("rating_events/00002-new-vote", vote("new-joke", 1, votes.end + 9_000_000)),
             (f"rating_events/{votes.id(30)}", None)]
            + [(f"rating_events/0000{i}-{kind}", None) for i, kind in ((3, "no-time"), (4, "string-time"),
                                                                       (5, "number-time"))]
            + [("rating_events/zzzz-late-vote", vote("late-joke", 5, votes.start + 1)),
               (f"rating_events/{votes.id(40)}", votes.fields(40))])


def commit(client, writes):
    status, _, answer = client.call("POST", "/documents:commit", {"writes": [
        {"delete": f"{client.root}/{p}"} if f is None else {"update": {"name": f"{client.root}/{p}", "fields": f}}
        for p, f in writes]})
    assert status == 200, answer


def setUpModule():
    global SIM, EMULATOR, SIDES, AT
    SIM = FirestoreSimulator(documents=300, seed=7, project=PROJECT).start()
    EMULATOR = Emulator()
    try:
        EMULATOR.start()
        SIDES = Client(SIM.address, PROJECT), Client(EMULATOR.address, PROJECT)
        seed = [(f"rating_events/{SIM.votes.id(i)}", SIM.votes.fields(i)) for i in range(SIM.votes.n)]
        for start in range(0, len(seed), 500):
            commit(SIDES[1], seed[start:start + 500])
        AT = ({}, {})
        for side, write, at in zip(SIDES, (SIM.commit, lambda w: commit(SIDES[1], w)), AT):
            for label, writes in zip(("seeded", "between"), batches(SIM.votes)):
                at[label] = side.now()
                time.sleep(0.01)
                write(writes)
            at["after"] = side.now()
    except BaseException:
        EMULATOR.stop()
        SIM.stop()
        raise


def tearDownModule():
    EMULATOR.stop()
    SIM.stop()


def chain(client, where, by, limit, read_time=None):
    """A whole read a page at a time, as the night reads: each page after the last document of
    the one before, at the first page's readTime. [(status, normalised answer)] per page."""
    pages, cursor = [], None
    while True:
        status, _, answer = client.query(query(where, by, limit, **cursor or {}), read_time)
        pages.append((status, normalised(answer, read_time)))
        documents = [item["document"] for item in answer if "document" in item] if status == 200 else []
        if len(documents) < limit:
            return pages
        read_time = read_time or answer[0]["readTime"]
        cursor = {"startAt": {"values": [{"referenceValue": documents[-1]["name"]} if p == "__name__"
                                         else documents[-1]["fields"][p] for p in by]}}


def documents_in(answer):
    if isinstance(answer, dict):
        return ("document" in answer) + documents_in(list(answer.values()))
    return sum(map(documents_in, answer)) if isinstance(answer, (list, tuple)) else 0


class Agreement(harness.Case):
    def agree(self, label, ask, documents=None):
        """ask(client, its readTimes) -> anything JSON-like; the same from both (and holding
        `documents` documents, when given, so that agreeing on nothing cannot pass)."""
        simulated, emulated = (ask(side, at) for side, at in zip(SIDES, AT))
        self.expect(label, simulated, emulated)
        if documents is not None:
            self.expect(f"{label}: documents", documents_in(simulated), documents)

    def ids(self, *indexes):
        return [f"{SIDES[0].root}/rating_events/{SIM.votes.id(i)}" for i in indexes]

    def test_pages(self):
        for limit, at, documents in ((7, None, 300), (50, "seeded", 300), (11, "between", 303), (1000, "after", 300)):
            self.agree(f"every document by name, {limit} a page, at {at or 'now'}",
                       lambda side, t: chain(side, None, ("__name__",), limit, t.get(at)), documents)
        after = since(times.format(SIM.votes.timestamp(150)))
        for limit, at in ((13, None), (9, "seeded"), (13, "between")):
            self.agree(f"timestamp >= vote 150's, by [timestamp, __name__], {limit} a page, at {at or 'now'}",
                       lambda side, t: chain(side, after, ("timestamp", "__name__"), limit, t.get(at)))
        self.agree("by [timestamp, __name__] with no filter, at between (an integer timestamp first, a string "
                   "last, none left out)", lambda side, t: chain(side, None, ("timestamp", "__name__"), 40,
                                                                 t["between"]), 302)
        low, high = self.ids(100, 200)
        self.agree("names in [vote 100, vote 200)", lambda side, t: chain(side, both(
            name("GREATER_THAN_OR_EQUAL", low), name("LESS_THAN", high)), ("__name__",), 30))
        self.agree("names in (vote 100, vote 200] and timestamp >= vote 150's, at between", lambda side, t: chain(
            side, both(name("GREATER_THAN", low), name("LESS_THAN_OR_EQUAL", high), after),
            ("timestamp", "__name__"), 17, t["between"]))
        self.agree("names up to a new vote's, at between", lambda side, t: chain(side, name(
            "LESS_THAN_OR_EQUAL", f"{side.root}/rating_events/00002-new-vote"), ("__name__",), 5, t["between"]))
        self.agree("rating == 5 by name, 20 a page, at between",
                   lambda side, t: chain(side, FIVE, ("__name__",), 20, t["between"]))

    def test_implicit_order_cursors_and_empty_answers(self):
        self.agree("timestamp >= vote 280's without orderBy (ordered by timestamp, then name)",
                   lambda side, t: normalised(side.query(query(since(times.format(SIM.votes.timestamp(280)))))[2]))
        start = {"values": [{"referenceValue": self.ids(50)[0]}]}
        for before in (True, False):
            self.agree(f"startAt before: {before}", lambda side, t: normalised(side.query(query(
                None, ("__name__",), 10, startAt=dict(start, before=before)), t["after"])[2], t["after"]), 10)
        stamp = {"timestampValue": times.format(SIM.votes.timestamp(120))}
        self.agree("a cursor of the timestamp alone, after it", lambda side, t: normalised(side.query(query(
            None, ("timestamp", "__name__"), 3, startAt={"values": [stamp], "before": False}))[2]), 3)
        low = self.ids(5)[0]
        for label, structured in {"a collection with no documents": query(collection="nothing", limit=10),
                                  "an empty name range": query(both(name("GREATER_THAN_OR_EQUAL", low),
                                                                    name("LESS_THAN", low)), ("__name__",), 10),
                                  "limit 0": query(by=("__name__",), limit=0),
                                  "timestamp >= a time after every vote": query(since("2100-01-01T00:00:00Z"))}.items():
            self.agree(label, lambda side, t: [normalised(side.query(structured)[2]),
                                               normalised(side.count(structured)[2])])

    def test_counts(self):
        low, high = self.ids(100, 200)
        after = since(times.format(SIM.votes.timestamp(150)))
        cases = {"everything": query(), "timestamp >= vote 150's": query(after), "rating == 5": query(FIVE),
                 "names in [vote 100, vote 200)": query(both(name("GREATER_THAN_OR_EQUAL", low),
                                                             name("LESS_THAN", high))),
                 "names in [vote 100, vote 200) and timestamp >= vote 150's":
                     query(both(name("GREATER_THAN_OR_EQUAL", low), name("LESS_THAN", high), after)),
                 "limit 5": query(limit=5)}
        self.agree("COUNTs at now, seeded, between and after", lambda side, t: {
            f"{label} at {at}": normalised(side.count(structured, t.get(at))[2], t.get(at))
            for label, structured in cases.items() for at in (None, "seeded", "between", "after")})
        self.agree("COUNT without an alias (Firestore names it)", lambda side, t: normalised(side.call(
            "POST", "/documents:runAggregationQuery",
            {"structuredAggregationQuery": {"structuredQuery": query(), "aggregations": [{"count": {}}]}})[2]))

    def test_the_board_proofs_counts(self):
        """rankings_night.proof's COUNTs (a joke's Hilarious and Horrible votes, in the 30-day window
        or a name range as a COUNT past its deadline is cut, and each kind's total) for jokes the
        writes re-rated, deleted or added votes of, and one with none; the simulator answers them
        from its index of kinds."""
        from rankings_night.proof import KINDS, kind_filter
        jokes = sorted({SIM.votes.kind(i)[0] for i in (10, 20, 30, 40, 150)}) + [
            "re-rated-joke", "new-joke", "late-joke", "x", "no-such-joke"]
        low, high = self.ids(100, 200)
        windows = {"": None, ", timestamp >= vote 150's": since(times.format(SIM.votes.timestamp(150))),
                   ", names in [vote 100, vote 200)": both(name("GREATER_THAN_OR_EQUAL", low), name("LESS_THAN", high))}
        for at in (None, "seeded", "between", "after"):
            for window, where in windows.items():
                self.agree(f"the proof's COUNTs at {at or 'now'}{window}", lambda side, t: {
                    f"{joke}'s {kind}": normalised(side.count(query(kind_filter(kind, joke, where)), t.get(at))[2],
                                                   t.get(at)) for joke in [None] + jokes for kind, _, _ in KINDS})
        self.expect("a joke of the generator's has votes (agreeing on none proves nothing)",
                    any(SIDES[0].counted(query(kind_filter(kind, jokes[0]))) for kind, _, _ in KINDS), True)

    def test_refusals(self):
        def now_plus(seconds):
            return lambda side: times.format(times.parse(side.now()) + seconds * times.SECOND)

        for label, when in (("eight days ago", now_plus(-8 * 86400)), ("an hour ahead", now_plus(3600)),
                            ("with nanoseconds", lambda side: "2026-01-01T00:00:00.123456789Z")):
            self.agree(f"a readTime {label}", lambda side, t: [side.query(query(limit=1), when(side))[::2],
                                                               side.count(query(), when(side))[::2]])
        self.agree("orderBy __name__ alone with a timestamp inequality", lambda side, t: side.query(
            query(since("2020-01-01T00:00:00Z"), ("__name__",), 5))[::2])

    def test_the_nights_reader_and_the_emulators_export(self):
        """rankings_night.firestore.Query, a page of 23 at a time, and its COUNT: the same from both;
        `rankings aggregate` makes the same board of the emulator's export as of the simulator's
        NDJSON of the same votes."""
        from rankings_night import settings as night_settings
        from rankings_night.firestore import Firestore, Query

        def read(side, t):
            settings = night_settings.from_environment({"FIRESTORE_EMULATOR_HOST": side.address,
                                                        "RANKINGS_FIRESTORE_PROJECT": PROJECT})
            firestore = Firestore.from_settings(settings, print)
            reader = Query(firestore, "rating_events", page_size=23)
            documents = [normalised(d) for page in reader.pages() for d in page]
            return documents, Query(firestore, "rating_events", read_time=reader.read_time).count()

        self.agree("every vote and its count, read by the night", read)
        with tempfile.TemporaryDirectory() as folder:
            status, _, answer = SIDES[1].call("POST", f"/emulator/v1/projects/{PROJECT}:export",
                                              {"database": SIDES[1].database, "export_directory": folder})
            self.expect("the emulator's export", status, 200)
            exported, = os.listdir(folder)
            SIM.write_ndjson(os.path.join(folder, "votes.ndjson"))
            boards = [self.aggregate(os.path.join(folder, source)) for source in (exported, "votes.ndjson")]
        self.expect("the board of the simulator's NDJSON", boards[1], boards[0])

    def aggregate(self, source):
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--top", "1000", "--computed-at",
                            "2026-11-27T00:00:00Z", source])
        self.expect_exit(done, 0)
        return json.loads(done.stdout)


if __name__ == "__main__":
    harness.main()
