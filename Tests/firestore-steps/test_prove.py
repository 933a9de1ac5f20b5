"""The boards' proof (proof.prove, proof.probe) in this process against Google's Firestore emulator,
with the real job: votes the app writes and ones it should not (a 4.5, a "5" as a string, no
joke_id, a joke_id that is a number, a 3, a 6), fetched by fetch.run into a snapshot, counted by
`rankings aggregate --stats --report`, whose `refused` list names the documents it left out with
the kind Firestore's filters put them in, and proved against the emulator's own COUNTs at the
snapshot's readTime: proven; still proven after the collection changes (the COUNTs are at the
readTime); a snapshot with one vote altered gives a board that disagrees, naming the joke; the
30-day board proven with its window, a vote exactly at the window's start on both sides of it and
one a microsecond before it on neither. The emulator checks no index: the probe finds none
missing, and names each one Firestore refuses for (faults.py's proxy answering as Firestore does)."""
import datetime
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firestore-loop"))
import support  # noqa: E402 (puts Tests/ on sys.path too)
import emulator as emu  # noqa: E402
import faults  # noqa: E402
import harness  # noqa: E402
from rankings_night import proof  # noqa: E402
from rankings_night.snapshot import format_time, parse_time  # noqa: E402

PROJECT = "demo-rankings-prove"
VOTES = 600
INDEX = {"error": {"code": 400, "status": "FAILED_PRECONDITION",
                   "message": "The query requires an index. You can create it here: https://console.firebase.google.com/"}}
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-prove.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def aggregate(source, *flags):
    """The job's --stats file and its --report (a dict) of source (a night's folder or a snapshot file)."""
    folder = tempfile.mkdtemp(dir=work)
    stats, report = os.path.join(folder, "stats.ndjson"), os.path.join(folder, "report.json")
    done = subprocess.run([support.RANKINGS, "aggregate", "--quiet", "--max-invalid", "100%", "--stats", stats,
                           "--report", report, "--output", os.path.join(folder, "board.json"), *flags, source],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise AssertionError(f"aggregate {source}: exit {done.returncode}: {done.stderr.strip()}")
    with open(report, encoding="utf-8") as text:
        return stats, json.load(text)


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
            "odd-6": {"joke_id": "J002", "rating": 6, "timestamp": now},           # out of range: refused
            "odd-no-joke": {"rating": 5, "timestamp": now},                        # refused, in Firestore's total
            "odd-number-joke": {"joke_id": 17, "rating": 1.5, "timestamp": now},   # refused, in Firestore's total
            "odd-old-no-joke": {"rating": 4, "timestamp": now - datetime.timedelta(days=45)},
        }
        # The 30-day board's edge: computed at `at`, its window starts exactly 30 days before.
        cls.at = (now - datetime.timedelta(days=1)).replace(microsecond=123456)
        start = cls.at - datetime.timedelta(days=30)
        odd["edge-at-start"] = {"joke_id": "J003", "rating": 5, "timestamp": start}
        odd["edge-before-start"] = {"joke_id": "J003", "rating": 5, "timestamp": start - datetime.timedelta(microseconds=1)}
        cls.collection.update(odd)
        emu.write(cls.db, "rating_events", cls.collection.items())
        cls.night = os.path.join(work, "night")
        cls.firestore = support.connect(PROJECT, server.address)
        done = support.fetch(cls.night, cls.firestore)
        if done.returncode != 0:
            raise AssertionError(f"the fetch failed: {done.stderr[-2000:]}")
        cls.read_time = done.result["read_time"]
        cls.snapshot = os.path.join(cls.night, "current", "rating_events.ndjson")

    def prove(self, boards, firestore=None):
        """The Verdict of boards [(role, (stats, report), since_ns)] at the night's readTime, and what it said."""
        said = support.Said("prove")
        verdict = proof.prove(firestore or self.firestore, self.read_time,
                              [(role, stats, report, since) for role, (stats, report), since in boards], said)
        return verdict, said.text

    def test_1_the_board_is_proven_with_the_refused_votes_the_jobs_report_names(self):
        stats, report = board = aggregate(self.snapshot)
        verdict, said = self.prove([("all_time", board, None)])
        self.expect("status", (verdict.status, verdict.lines), ("proven", verdict.lines))
        self.expect("the documents the job refused", sorted(e["document"].rsplit("/", 1)[1] for e in report["refused"]),
                    ["odd-6", "odd-no-joke", "odd-number-joke", "odd-old-no-joke", "odd-string"])
        self.expect("those of a kind Firestore counts, added to the job's side",
                    sorted((e["document"].rsplit("/", 1)[1], e["firestore_kind"]) for e in report["refused"]
                           if e["firestore_kind"]),
                    [("odd-no-joke", "hilarious"), ("odd-number-joke", "horrible"), ("odd-old-no-joke", "hilarious")])
        hilarious = sum(1 for v in self.collection.values() if isinstance(v["rating"], (int, float))
                        and 4 <= v["rating"] <= 5)
        with open(stats, encoding="utf-8") as lines:
            jokes = sum(1 for line in lines if line.strip())
        self.expect_in("said once", f"rankings-night: prove: all_time: the board is proven at readTime {self.read_time}: "
                                    f"{jokes} jokes, {hilarious} hilarious", said)
        self.expect("lines said", len(said.splitlines()), 1)
        self.expect("COUNTs: 2 a joke and 1 a kind", verdict.queries, 2 * jokes + 2)

    def test_2_a_change_after_the_read_time_changes_nothing_proven(self):
        board = aggregate(self.snapshot)
        self.db.collection("rating_events").document("odd-3").set({"joke_id": "J002", "rating": 5})
        self.db.collection("rating_events").document("late").set({"joke_id": "J003", "rating": 1})
        try:
            verdict, _ = self.prove([("all_time", board, None)])
        finally:
            self.db.collection("rating_events").document("odd-3").set(self.collection["odd-3"])
            self.db.collection("rating_events").document("late").delete()
        self.expect("status", (verdict.status, verdict.lines), ("proven", verdict.lines))

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
        verdict, said = self.prove([("all_time", aggregate(altered), None)])
        self.expect("status", verdict.status, "mismatch")
        found = []
        for line in verdict.mismatches:
            match = re.fullmatch(r"all_time: (?:joke (\S+)|all jokes): (hilarious|horrible) (\d+)"
                                 r"(?: \+ (\d+) refused by the job)? on the board, (\d+) in Firestore", line)
            self.assertIsNotNone(match, line)
            joke_id, kind, job, refused, theirs = match.groups()
            found.append((joke_id or "", kind, int(job) + int(refused or 0) - int(theirs)))
        self.expect("mismatches (joke, kind, board less Firestore)", sorted(found),
                    sorted([("", "hilarious", 1), ("", "horrible", -1), (joke, "hilarious", 1), (joke, "horrible", -1)]))
        self.expect_in("a warning naming it", f"rankings-night: warning: prove: all_time: the board disagrees with "
                                              f"Firestore at readTime {self.read_time}: ", said)

    def test_4_the_30_day_board_is_proven_with_its_window_a_vote_at_its_start_on_both_sides(self):
        computed_at = self.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        since = parse_time(computed_at) - 30 * 86400 * 10**9
        stats, report = board = aggregate(self.snapshot, "--computed-at", computed_at, "--since", format_time(since),
                                          "--week-document")
        verdict, _ = self.prove([("monthly", board, since)])
        self.expect("status", (verdict.status, verdict.lines), ("proven", verdict.lines))
        self.assertGreater(report["filtered_out"], 0, "the window left nothing out")
        window = datetime.datetime.fromtimestamp(since // 10**9, support.UTC).replace(microsecond=since // 1000 % 10**6)
        self.expect("the window starts at the edge vote", window, self.collection["edge-at-start"]["timestamp"])
        in_window = [v for v in self.collection.values() if "timestamp" in v and v["timestamp"] >= window]
        hilarious = sum(1 for v in in_window if isinstance(v["rating"], (int, float)) and 4 <= v["rating"] <= 5)
        self.expect_in("Hilarious in the window, as Firestore counts them", f" jokes, {hilarious} hilarious, ",
                       verdict.lines[0])
        with open(stats, encoding="utf-8") as lines:
            j003 = next(json.loads(line) for line in lines if json.loads(line)["joke_id"] == "J003")
        before = sum(1 for v in in_window if v.get("joke_id") == "J003" and v["rating"] >= 4)
        self.expect("J003's Hilarious on the board: the vote at the start, not the one a microsecond before",
                    j003["hilarious"], before)

    def test_5_the_probe_finds_every_index_on_the_emulator_and_names_each_that_firestore_refuses_for(self):
        said = support.Said("fetch")
        missing, seconds = proof.probe(self.firestore, True, said)
        self.expect("missing on the emulator", missing, [])
        self.assertIsNotNone(seconds, "no COUNT answered")
        with faults.FaultyProxy(server.address) as proxy:
            proxy.fault(lambda call: faults.counts(call) and call.filters_on("rating"), (400, INDEX), times=None)
            missing, _ = proof.probe(support.connect(PROJECT, proxy.address), True, said)
            asked = len(proxy.chosen(faults.counts))
        self.expect("COUNTs asked: one an index", asked, 3)
        self.expect("the indexes", [command.split("--query-scope=COLLECTION ")[1] for command in missing], [
            "--field-config=field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending",
            "--field-config=field-path=rating,order=ascending --field-config=field-path=timestamp,order=ascending",
            "--field-config=field-path=joke_id,order=ascending --field-config=field-path=rating,order=ascending "
            "--field-config=field-path=timestamp,order=ascending"])
        self.expect_in("each said", "rankings-night: warning: fetch: the 30-day board cannot be proven: no index for the votes by "
                                    "rating in its window", said.text)
        self.expect_in("naming the project", f"--project={PROJECT} ", missing[0])


if __name__ == "__main__":
    harness.main()
