"""A malformed vote never stops the night (issue 49), on a night with the 30-day board: a vote
without joke_id, one without timestamp (left out of the 30-day board only), one whose joke_id is
1,500 bytes (Firestore cannot query it by equality). Each is left out, named by its Firestore
document at WARNING, counted in rankings_night_refused_votes and `status`, and both boards are still
proven against Firestore's COUNTs and published. Past RANKINGS_MAX_REFUSED (1 % of the votes): 65,
nothing published, the refused votes still named and counted."""
import datetime
import random
import zlib

import common
import harness


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


def malformed(kind, days_ago=3, **fields):
    """(id, fields) of a vote of the app's shape with `fields` changed (None: left out)."""
    when = datetime.datetime.now(common.UTC) - datetime.timedelta(days=days_ago)
    device = common.device_id(zlib.crc32(kind.encode()) % 10**6 + 2 * 10**6)
    made = {"joke_id": "J001", "rating": 5, "device_id": device, "week_id": common.week_id(when), "timestamp": when}
    made.update(fields)
    return f"{device}_{kind}_{common.week_id(when)}", {k: v for k, v in made.items() if v is not None}


class Votes(harness.Case):
    def left_out(self, done, name, role):
        said = [line for line in common.warnings(done) if f"{role}: left out rating_events/{name}" in line]
        self.expect(f"WARNINGs naming rating_events/{name} for {role}", len(said), 1)

    def test_malformed_votes_are_left_out_named_counted_and_proven(self):
        p = common.Project("malformed")
        collection = common.votes(random.Random(21), 300, 60)
        bad = dict([malformed("NOJOKE", joke_id=None), malformed("NOTIME", timestamp=None),
                    malformed("LONG", joke_id="J" * 1500, rating=1)])
        common.write(p.db, list(collection.items()) + list(bad.items()))
        names = {kind: next(n for n in bad if f"_{kind}_" in n) for kind in ("NOJOKE", "NOTIME", "LONG")}
        with common.proxy() as proxy:
            done = p.run(proxy, RANKINGS_MONTHLY="yes")
            nights, status = p.history(proxy, RANKINGS_MONTHLY="yes"), p.status(proxy, RANKINGS_MONTHLY="yes")
        self.expect_exit(done, 0)
        for kind in ("NOJOKE", "LONG"):
            self.left_out(done, names[kind], "all_time")
            self.left_out(done, names[kind], "monthly")
        self.left_out(done, names["NOTIME"], "monthly")
        self.expect("the all-time board's WARNINGs naming the vote without timestamp",
                    [line for line in common.warnings(done) if names["NOTIME"] in line and "all_time:" in line], [])
        metrics = common.samples(p.metrics)
        self.expect("the metrics", {k: metrics.get(k) for k in (
            'rankings_night_refused_votes{board="all_time"}', 'rankings_night_refused_votes{board="monthly"}',
            "rankings_night_boards_proven", "rankings_night_last_run_exit_status")},
            {'rankings_night_refused_votes{board="all_time"}': "2",
             'rankings_night_refused_votes{board="monthly"}': "3",
             "rankings_night_boards_proven": "1", "rankings_night_last_run_exit_status": "0"})
        self.expect("the night's proof and refused votes", (nights[-1]["proof"]["status"], nights[-1]["refused"]),
                    ("proven", {"all_time": 2, "monthly": 3}))
        self.expect_in("rankings-night status", "malformed", status)
        # The all-time board counts the vote without timestamp; neither board the other two.
        rated = list(collection.values()) + [bad[names["NOTIME"]]]
        fields = p.document()["fields"]
        self.expect("weekly_rankings/all_time's totals",
                    [int(fields[k]["integerValue"]) for k in ("total_hilarious_ratings", "total_horrible_ratings")],
                    [sum(v["rating"] >= 4 for v in rated), sum(v["rating"] <= 2 for v in rated)])
        week = p.board("monthly")["week_id"]
        self.assertIsNotNone(p.document(week), f"weekly_rankings/{week} was not written")

    def test_more_than_one_percent_malformed_is_65_and_nothing_published(self):
        p = common.Project("corrupt")
        collection = common.votes(random.Random(22), 100, 60)
        bad = dict(malformed(f"NOJOKE{n}", joke_id=None) for n in range(3))     # 3 of 103: 2.9 %
        common.write(p.db, list(collection.items()) + list(bad.items()))
        p.db.collection("weekly_rankings").document("all_time").set({"week_id": "all_time", "hilarious": [],
                                                                     "horrible": [], "total_hilarious_ratings": 1,
                                                                     "total_horrible_ratings": 1})
        before = p.document()
        with common.proxy() as proxy:
            # A try more allowed, which a 65 must not take (it would wait 300 s first).
            done = p.run(proxy, RANKINGS_RETRIES="1")
            nights = p.history(proxy)
        self.expect_exit(done, 65)
        self.expect("weekly_rankings/all_time", p.document(), before)
        self.expect("the night", (nights[-1]["status"], nights[-1]["steps"]["aggregate"]["status"],
                                  "publish" in nights[-1]["steps"], nights[-1].get("published")), (65, 65, False, []))
        self.expect("the aggregate step's tries", nights[-1]["steps"]["aggregate"]["tries"], 1)
        for name in bad:
            self.left_out(done, name, "all_time")
        self.expect("rankings_night_refused_votes", common.samples(p.metrics).get(
            'rankings_night_refused_votes{board="all_time"}'), "3")


if __name__ == "__main__":
    harness.main()
