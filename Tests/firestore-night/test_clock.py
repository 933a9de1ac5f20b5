"""Firestore is the clock (issue 49): the machine's clock two days behind, then two days ahead, in the
night's process only (skewed.py), on a night with the 30-day board. The boards' computed_at is the
snapshot's readTime, the 30-day board counts the votes of the 30 days before it (votes a day either
side of the window's edge tell), its document is the readTime's ISO week in New York (the wrong
clock's week, where it differs, is not written), and a WARNING names the skew."""
import datetime
import os
import random
import re
import zoneinfo

import common
import harness

SKEWED = os.path.join(common.HERE, "skewed.py")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


def week_of(nanoseconds):
    return common.week_id(datetime.datetime.fromtimestamp(nanoseconds / 1e9, NEW_YORK))


class Clock(harness.Case):
    def night(self, name, days):
        p = common.Project(name)
        collection = common.votes(random.Random(11), 150, 60)
        now = datetime.datetime.now(common.UTC)
        for number, days_ago in enumerate((28.5, 29.5, 30.5, 31.5)):   # either side of the window's edge
            for rating in (5, 1):
                when = now - datetime.timedelta(days=days_ago)
                device = common.device_id(900000 + 10 * number + rating)
                collection[f"{device}_J000_{common.week_id(when)}"] = {
                    "joke_id": "J000", "rating": rating, "device_id": device, "week_id": common.week_id(when),
                    "timestamp": when}
        common.write(p.db, collection.items())
        with common.proxy() as proxy:
            done = p.night("run", "--environment", settings=p.settings(proxy, RANKINGS_MONTHLY="yes"),
                           program=["/usr/bin/python3", "-I", SKEWED, str(days * common.DAY), common.NIGHT])
        self.expect_exit(done, 0)
        read_time = common.timestamp(p.read_time())
        week = week_of(read_time)
        for name in ("all_time", week):
            document = p.document(name)
            self.assertIsNotNone(document, f"weekly_rankings/{name} was not written")
            self.expect(f"weekly_rankings/{name}'s computed_at (ms)",
                        common.timestamp(document["fields"]["computed_at"]["timestampValue"]) // 10**6,
                        read_time // 10**6)
        wrong = week_of(read_time + days * common.DAY * 10**9)
        if wrong != week:
            self.expect(f"weekly_rankings/{wrong} (the wrong clock's week)", p.document(wrong), None)
        since = datetime.datetime.fromtimestamp(read_time / 1e9 - 30 * common.DAY, common.UTC)
        window = [v for v in collection.values() if v["timestamp"] >= since]
        fields = p.document(week)["fields"]
        self.expect("the 30-day board's totals: the votes of the 30 days before the readTime",
                    [int(fields[k]["integerValue"]) for k in ("total_hilarious_ratings", "total_horrible_ratings")],
                    [sum(v["rating"] >= 4 for v in window), sum(v["rating"] <= 2 for v in window)])
        word = "behind" if days < 0 else "ahead"
        said = [line for line in common.warnings(done) if "clock" in line and word in line]
        self.expect(f"WARNINGs on the clock {word} (stderr:\n{done.stderr})", len(said), 1)
        seconds = [int(w) for w in re.findall(r"\b([0-9]{5,}) s\b", said[0])]
        self.assertTrue(seconds and abs(seconds[0] - 2 * common.DAY) < 120, f"the skew is not named: {said[0]}")

    def test_a_clock_two_days_behind_names_nothing(self):
        self.night("behind", -2)

    def test_a_clock_two_days_ahead_names_nothing(self):
        self.night("ahead", 2)


if __name__ == "__main__":
    harness.main()
