"""The first full read fits a readTime's life (issue 49): 20,000 votes behind a proxy at which a
readTime lives 8 s (a read at an older one is answered 400 FAILED_PRECONDITION "The requested
snapshot version is too old.", as Firestore answers past its hour) and a stream reads about 1,000
documents a second. The night must start every stream's first page at once, without a round of
COUNTs to plan its ranges first, and so reads all 20,000 (about 2.5 s a stream over 8) and
publishes them; no COUNT but the collection's comes between the readTime and the streams.

The proxy stands in for two things Google's emulator is not: Firestore's partitionQuery (which the
emulator answers 501), answered at the proxy with cursors at the quantiles of the documents this test
wrote; and Firestore's speed: the time the emulator and the proxy take beyond a page's 1,000 documents
a second (seconds a page on CI's two loaded cores) is not counted against the readTime of that
stream, so the 8 s measure the night's own time. The proof's COUNTs (which come long after 8 s) are
not held to it."""
import json
import random
import threading
import time

import common
import harness

VOTES, LIFE, RATE = 20_000, 8.0, 1000.0     # documents, seconds a readTime lives, documents a second a stream
TOO_OLD = common.refusal(400, "FAILED_PRECONDITION", "The requested snapshot version is too old.")


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


class Life:
    """The proxy's rules: a readTime's life, a stream's speed, and partitionQuery."""

    def __init__(self, proxy, prefix, names):
        self.prefix, self.names = prefix, sorted(names)
        self.debt, self.lock, self.here = {}, threading.Lock(), threading.local()
        self.refused = []
        proxy.fault(self.too_old, TOO_OLD, times=None)
        proxy.fault(self.page, self.throttle, times=None)
        cuts = [self.names[len(self.names) * k // 8] for k in range(1, 8)]     # 7 cuts: a first night's 8 streams
        proxy.fault(lambda call: call.path.endswith(":partitionQuery"), (200, {"partitions": [
            {"values": [{"referenceValue": prefix + name}]} for name in cuts]}), times=None)
        handler, written = proxy.server.RequestHandlerClass, proxy.server.RequestHandlerClass.answer

        def answer(request, *args, **kwargs):   # the proxy's time writing a page's answer: the stream's debt too
            written(request, *args, **kwargs)
            call = getattr(self.here, "call", None)
            if call is not None and getattr(call, "throttled", None) is not None:
                with self.lock:
                    self.debt[self.stream(call)] = self.debt.get(self.stream(call), 0.0) \
                        + time.monotonic() - call.throttled
        handler.answer = answer

    @staticmethod
    def stream(call):
        return json.dumps(call.query.get("where"), sort_keys=True)     # a stream's range, whatever its cursor

    def too_old(self, call):
        call.arrived = time.monotonic()
        self.here.call = call
        read_time = call.body.get("readTime") if isinstance(call.body, dict) else None
        if read_time is None or (call.kind == "count" and "rating" in common.filter_values(call)):
            return False
        with self.lock:
            debt = self.debt.get(self.stream(call), 0.0) if call.kind == "runQuery" else 0.0
        age = time.time() - common.timestamp(read_time) / 1e9 - debt
        if age > LIFE:
            self.refused.append(f"{call.kind} {age:.1f} s after its readTime ({debt:.1f} s of its stream's debt)")
        return age > LIFE

    @staticmethod
    def page(call):
        return call.kind == "runQuery" and isinstance(call.body, dict) and "readTime" in call.body

    def throttle(self, items):
        """A page's answer no sooner than its documents at RATE; the emulator's time past that is its
        stream's debt, not the night's."""
        call = self.here.call
        upstream, due = time.monotonic() - call.arrived, sum("document" in i for i in items) / RATE
        if upstream < due:
            time.sleep(due - upstream)
        else:
            with self.lock:
                self.debt[self.stream(call)] = self.debt.get(self.stream(call), 0.0) + upstream - due
        call.throttled = time.monotonic()
        return items


class ReadTime(harness.Case):
    def test_twenty_thousand_votes_within_a_readtime_of_8_seconds(self):
        p = common.Project("readtime")
        collection = common.votes(random.Random(51), VOTES, 60, jokes=5)
        common.write(p.db, collection.items())
        with common.proxy() as proxy:
            life = Life(proxy, f"projects/{p.project}/databases/(default)/documents/rating_events/", collection)
            done = p.run(proxy)
            nights = p.history(proxy)
        self.expect("reads refused as too old", life.refused, [])
        self.expect_exit(done, 0)
        record = p.record()
        self.expect("tonight's read", (record["mode"], record["documents_read"], record["snapshot_documents"]),
                    ("full", VOTES, VOTES))
        self.expect("documents at the proxy", sum(c.documents or 0 for c in proxy.chosen(common.faults.pages)), VOTES)
        self.assertGreaterEqual(record["streams"], 8)
        # Every stream's first page asked with at most the collection's COUNT before it: no round of
        # COUNTs between Firestore's readTime and the reads.
        calls = list(proxy.calls)
        clock = next(i for i, c in enumerate(calls) if c.kind == "runQuery" and not common.faults.pages(c))
        firsts = [i for i, c in enumerate(calls) if common.faults.pages(c) and "startAt" not in c.query]
        self.expect("the streams' first pages", len(firsts), record["streams"])
        between = [c.kind for c in calls[clock + 1:max(firsts)] if c.kind not in ("runQuery", "post", "partitionQuery")]
        self.expect(f"what was asked between the readTime and the last first page ({between}): the collection's "
                    "COUNT, asked beside the streams, at most", between in ([], ["count"]), True)
        fields = p.document()["fields"]
        self.expect("weekly_rankings/all_time's totals",
                    [int(fields[k]["integerValue"]) for k in ("total_hilarious_ratings", "total_horrible_ratings")],
                    [sum(v["rating"] >= 4 for v in collection.values()),
                     sum(v["rating"] <= 2 for v in collection.values())])
        self.expect("the night's proof", nights[-1]["proof"]["status"], "proven")


if __name__ == "__main__":
    harness.main()
