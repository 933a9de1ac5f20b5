"""The board's proof (proof.py) against Google's Firestore emulator: votes the app writes and the
ones it should not (a 4.5, a "5" as a string, no joke_id, a 3, a 6), fetched by
rankings-fetch-firestore into a snapshot, counted by the real `rankings aggregate --stats
--report`, and proved against the emulator's own COUNTs at the snapshot's readTime: proven; still
proven after the collection changes (the COUNTs are at the readTime); and a snapshot with one
vote altered gives a board that disagrees, naming the joke. The 30-day board's proof with its
window too. (The emulator checks no index: the refusal for want of one is Tests/night's.)"""
import datetime
import json
import os
import random
import shutil
import subprocess
import tempfile

import support
import emulator as emu
import harness
from rankings_night import proof, settings
from rankings_night.fetch import since_filter
from rankings_night.firestore import Firestore
from rankings_night.snapshot import parse_time, format_time

PROJECT = "demo-rankings-proof"
VOTES = 600
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-proof.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def aggregate(source, folder, *flags):
    """The job's --stats and --report of source (a night's folder or a snapshot file)."""
    stats, report = os.path.join(folder, "stats.ndjson"), os.path.join(folder, "report.json")
    done = subprocess.run([support.RANKINGS, "aggregate", "--quiet", "--max-invalid", "100", "--computed-at",
                           support.stamp(), "--stats", stats, "--report", report, "--output", os.devnull, *flags,
                           source], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise AssertionError(f"aggregate {source}: exit {done.returncode}: {done.stderr.strip()}")
    return stats, report


class Proof(harness.Case):
    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        now = datetime.datetime.now(support.UTC)
        cls.collection = support.votes(random.Random(41), VOTES, 60, newest_days=0)
        odd = {
            "odd-4.5": {"joke_id": "J001", "rating": 4.5, "timestamp": now},       # Hilarious for both
            "odd-string": {"joke_id": "J001", "rating": "5", "timestamp": now},    # counted by neither
            "odd-3": {"joke_id": "J002", "rating": 3, "timestamp": now},           # neutral
            "odd-6": {"joke_id": "J002", "rating": 6, "timestamp": now},           # out of range: bad
            "odd-no-joke": {"rating": 5, "timestamp": now},                        # bad, in Firestore's total
            "odd-number-joke": {"joke_id": 17, "rating": 1.5, "timestamp": now},   # bad, in Firestore's total
            "odd-old-no-joke": {"rating": 4, "timestamp": now - datetime.timedelta(days=45)},
        }
        cls.collection.update(odd)
        emu.write(cls.db, "rating_events", cls.collection.items())
        cls.night = os.path.join(work, "night")
        done = support.hook(support.FETCH, cls.night, RANKINGS_FIRESTORE_PROJECT=PROJECT,
                            FIRESTORE_EMULATOR_HOST=server.address, RANKINGS_FIRESTORE_STREAMS="4")
        if done.returncode != 0:
            raise AssertionError(f"the fetch failed: {done.stderr[-2000:]}")
        cls.read_time = support.record(cls.night)["read_time"]
        cls.snapshot = os.path.join(cls.night, "current", "rating_events.ndjson")
        cls.firestore = Firestore(settings.from_environment({"RANKINGS_FIRESTORE_PROJECT": PROJECT,
                                                             "FIRESTORE_EMULATOR_HOST": server.address}), print)

    def prove(self, snapshot, where=None, timestamps=False, flags=()):
        folder = tempfile.mkdtemp(dir=work)
        stats, report = aggregate(snapshot, folder, *flags)
        said = []
        result = proof.prove_board(self.firestore, "rating_events", self.read_time, stats,
                                   proof.refused(snapshot, where, timestamps), 4, said.append, where=where,
                                   report=report)
        with open(report, encoding="utf-8") as text:
            return result, json.load(text), said

    def test_1_the_board_is_proven_with_the_refused_votes_named(self):
        result, report, said = self.prove(self.snapshot)
        self.expect("status", (result.status, result.describe()), ("proven", result.describe()))
        self.expect("bad lines the job refused", report["bad_lines"], 5)
        self.expect("refused votes accounted for", sorted(v.name for v in proof.refused(self.snapshot).votes),
                    ["odd-no-joke", "odd-number-joke", "odd-old-no-joke"])
        hilarious = sum(1 for v in self.collection.values() if isinstance(v["rating"], (int, float))
                        and 4 <= v["rating"] <= 5)
        self.expect("Hilarious, as Firestore counts them", result.totals["hilarious"][2], hilarious)
        self.expect("the board's Hilarious: the job's", result.totals["hilarious"][0], report["hilarious"])
        self.expect("queries: 2 a joke and 1 a kind", result.queries, 2 * result.jokes + 2)
        self.expect_in("said", "proof: the board is proven at readTime", said[-1])

    def test_2_a_change_after_the_read_time_changes_nothing_proven(self):
        self.db.collection("rating_events").document("odd-3").set({"joke_id": "J002", "rating": 5})
        self.db.collection("rating_events").document("late").set({"joke_id": "J003", "rating": 1})
        try:
            result, _, _ = self.prove(self.snapshot)
        finally:
            self.db.collection("rating_events").document("odd-3").set(self.collection["odd-3"])
            self.db.collection("rating_events").document("late").delete()
        self.expect("status", (result.status, result.describe()), ("proven", result.describe()))

    def test_3_one_vote_altered_in_the_snapshot_is_a_mismatch_naming_its_joke(self):
        altered = os.path.join(work, "altered.ndjson")
        name = next(n for n, v in sorted(self.collection.items()) if v.get("rating") == 1)
        joke = self.collection[name]["joke_id"]
        with open(self.snapshot, encoding="utf-8") as lines, open(altered, "w", encoding="utf-8") as out:
            for line in lines:
                document = json.loads(line)
                if document["name"].endswith("/" + name):
                    document["fields"]["rating"] = {"integerValue": "5"}
                out.write(json.dumps(document) + "\n")
        result, _, _ = self.prove(altered)
        self.expect("status", result.status, "mismatch")
        found = sorted((m.joke_id or "", m.kind, m.job + m.accounted - m.firestore) for m in result.mismatches)
        self.expect("mismatches (joke, kind, board less Firestore)", found,
                    sorted([("", "hilarious", 1), ("", "horrible", -1),
                            (joke, "hilarious", 1), (joke, "horrible", -1)]))
        self.expect_in("what it says", f"joke {joke}: ", result.describe())

    def test_4_the_30_day_board_is_proven_with_its_window(self):
        computed_at = datetime.datetime.now(support.UTC).replace(microsecond=0)
        since = parse_time(computed_at.strftime("%Y-%m-%dT%H:%M:%SZ")) - 30 * 86400 * 10**9
        where = since_filter(since)
        result, report, _ = self.prove(self.snapshot, where, True,
                                       ("--computed-at", computed_at.strftime("%Y-%m-%dT%H:%M:%SZ"), "--since", "-30d"))
        self.expect("status", (result.status, result.describe()), ("proven", result.describe()))
        self.assertGreater(report["filtered_out"], 0, "the window left nothing out")
        window = datetime.datetime.fromtimestamp(since / 1e9, support.UTC)
        hilarious = sum(1 for v in self.collection.values() if isinstance(v["rating"], (int, float))
                        and 4 <= v["rating"] <= 5 and v["timestamp"] >= window)
        self.expect("Hilarious in the window, as Firestore counts them", result.totals["hilarious"][2], hilarious)
        self.expect("the window's bound", format_time(since)[:19], (computed_at - datetime.timedelta(days=30))
                    .strftime("%Y-%m-%dT%H:%M:%S"))


if __name__ == "__main__":
    harness.main()
