"""Tonight's snapshot of rating_events in a new night under DIR, then DIR/current switched to it. Firestore's
readTime, taken first, is the clock by which plan.py says whether to read everything or what changed since."""
import os
import time

from . import parallel, plan as plans, ranges, record as records
from .firestore import Query, count, now
from .folders import Run, current
from .snapshot import COLLECTION, SNAPSHOT, SNAPSHOT_GZ, Damaged, Writer, change_name, compaction, document_line, \
    format_time, link_or_copy, merged, parse_time, verify
from .statuses import DATA, UNAVAILABLE, Failure
from .stop import STOP
from .stream import Broken, field_filter
from .transport import Refused

COUNT_WORKERS = 32      # COUNTs asked at once where Firestore cannot finish one (firestore.count cuts it)
COMPRESSED = "the snapshot is kept compressed (a container's state in its memory): a full read every night"


def run(directory, firestore, say, full_because=None, compressed=False):
    """The record of the night made current in DIR (made when missing), with the clean-up's prune_errors.
    What it raises (Failure, FirestoreError, Stopped) leaves current as it was, the try's figures on it."""
    fetch = Fetch(firestore, say, compressed)
    try:
        with Run(directory, say) as night:
            read_time = now(firestore, COLLECTION)
            now_ns, fetch.folder, fetch.previous_folder = parse_time(read_time), night.folder, current(directory)
            fetch.previous, damage = plans.previous_night(fetch.previous_folder, now_ns, firestore.database_path)
            tonight = plans.Plan("full", COMPRESSED) if compressed else \
                plans.plan(fetch.previous, damage, now_ns, full_because)
            say(f"rest: fetching {firestore.database_path}/{COLLECTION} at readTime {read_time}: {tonight.mode}")
            if fetch.previous_folder is not None and tonight.reason == damage:
                say(f"rest: the previous night cannot be built on, so a full read: {damage}", "WARNING")
                fetch.record["fallback"] = True
            fetch.run(tonight, read_time)
            fetch.record["seconds"] = fetch.seconds()
            records.write(night.folder, fetch.record)
            STOP.check()
            name = night.commit(parse_time(fetch.record["read_time"]))
            say(f"rest: {directory}/current is now {name} ({fetch.seconds():.1f}s)")
        return dict(fetch.record, prune_errors=night.prune_errors)
    except Exception as error:
        error.record = dict(fetch.record, seconds=fetch.seconds())
        raise


class NotProven(Exception):
    """An incremental night that cannot be proven whole: the fetch reads everything instead."""


class Fetch:
    """One night's read into `folder`, over `previous` (a record) in previous_folder."""

    def __init__(self, firestore, say, compressed):
        self.firestore, self.say, self.compressed = firestore, say, compressed
        _, project, _, database = firestore.database_path.split("/")
        self.record = {"method": "rest", "project": project, "collection": COLLECTION, "database": database,
                       "mode": None, "read_time": None, "documents_read": 0, "watermark": None,
                       "full_reason": None, "fallback": False, "streams": 0}
        self.started = time.monotonic()

    def seconds(self):
        return round(time.monotonic() - self.started, 3)

    def counted(self, read_time):
        return sum(c for _, _, c in count(self.firestore, COLLECTION, read_time, None, None, COUNT_WORKERS, self.say))

    def run(self, plan, read_time):
        if plan.mode == "full":
            return self.full(plan.reason, read_time)
        try:
            return self.incremental(plan.watermark, read_time)
        except NotProven as why:
            self.say(f"rest: the incremental night is not proven, so a full read: {why}", "WARNING")
            self.record["fallback"] = True
            for name in os.listdir(self.folder):    # tonight's own layers and links: nothing shared is written
                os.unlink(os.path.join(self.folder, name))
            # A new readTime: the incremental night may have used much of the last one's life.
            return self.full(str(why), now(self.firestore, COLLECTION))

    def cut(self, read_time, streams):
        """(ranges, how): where Firestore's partitionQuery cuts (a collection group's query: a cursor in a subcollection
        of that name is dropped), else evenly at the id alphabet, as auto-ids fall (an app's own ids may not)."""
        prefix, cuts = f"{self.firestore.database_path}/documents/{COLLECTION}/", set()
        body = {"structuredQuery": {"from": [{"collectionId": COLLECTION, "allDescendants": True}],
                                    "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]},
                "partitionCount": str(streams - 1), "readTime": read_time}
        try:
            while True:
                answer = self.firestore.call("POST", "/documents:partitionQuery", body)
                for cursor in answer.get("partitions", []):
                    name = cursor.get("values", [{}])[0].get("referenceValue", "")
                    if name.startswith(prefix) and "/" not in name[len(prefix):]:
                        cuts.add(name[len(prefix):])
                if not answer.get("nextPageToken"):
                    break
                body["pageToken"] = answer["nextPageToken"]
            if cuts:
                return ranges.between(cuts), "where Firestore's partitionQuery cuts"
        except Refused as refused:
            self.say(f"rest: no partitionQuery ({refused})")
        return ranges.even(streams), "evenly at the id alphabet"

    def read_range(self, read_time, number, part):
        """One stream, in a process of its own: (its file, documents read), or its failure with them."""
        out = Writer(os.path.join(self.folder, f".range-{number:04d}"), self.compressed)
        try:
            for page in Query(self.firestore, COLLECTION, read_time=read_time, low=part[0], high=part[1]).pages():
                out.write_lines([document_line(document, self.compressed) for document in page])
        except Exception as error:
            error.documents_read = out.lines
            raise
        return out.path, out.close()["lines"]

    def full(self, reason, read_time):
        """Every document at read_time, on streams started at once, as many as the COUNT asked beside them."""
        if not self.record["fallback"]:     # else said as the fall back's warning
            self.say(f"rest: a full read: {reason}")
        self.record.update(mode="full", full_reason=reason, read_time=read_time,
                           **({"snapshot_form": "gzip"} if self.compressed else {}))
        streams, late = plans.streams(self.previous)
        if late:
            self.say(f"rest: {late}; reading anyway: the rate is the last full read's, and this one measures it "
                     "again", "WARNING")
        elif streams > plans.STREAMS:
            self.say(f"rest: {streams} streams: at the last full read's rate, {plans.STREAMS} would not read "
                     f"{self.previous['snapshot_documents']} documents within 90 % of a readTime's life")
        parts, how = self.cut(read_time, streams)
        self.record["streams"] = len(parts)
        self.say(f"rest: read in {len(parts)} {'range' if len(parts) == 1 else 'ranges'} cut {how}: "
                 + ", ".join(ranges.describe(*part) for part in parts[:8]) + (" …" if len(parts) > 8 else ""))
        begun = time.monotonic()
        try:
            *files, counted = parallel.apart(lambda numbered: self.read_range(read_time, *numbered), enumerate(parts),
                                             beside=lambda: self.counted(read_time))
        except Exception as error:
            self.record["documents_read"] += getattr(error, "documents_read", 0)
            read, seconds = self.record["documents_read"], time.monotonic() - self.started
            if not (isinstance(error, Refused) and error.reason == "FAILED_PRECONDITION" and "too old" in str(error)):
                raise
            if not read:
                raise Failure(UNAVAILABLE, f"rest: Firestore no longer serves readTime {read_time}, {seconds:.0f} s "
                                           "after the fetch began and before any document was read; another try "
                                           "takes a new readTime") from None
            raise Failure(UNAVAILABLE, f"rest: the read outlived its readTime {read_time} after {read} documents in "
                                       f"{seconds:.0f} s over {len(parts)} streams: Firestore keeps a readTime an "
                                       "hour", final=True) from None     # final: the same streams would outlive it too
        seconds = max(time.monotonic() - begun, 0.001)
        self.record["documents_read"] += sum(read for _, read in files)
        out = Writer(os.path.join(self.folder, SNAPSHOT_GZ if self.compressed else SNAPSHOT))
        for path, read in files:
            out.copy(path, read)
        base = out.close()
        if base["lines"] != counted:
            raise Failure(UNAVAILABLE, f"rest: the night is not whole: {base['lines']} documents fetched, but "
                                       f"Firestore counts {counted} in {COLLECTION} at readTime {read_time}")
        if not counted:
            raise Failure(DATA, f"{COLLECTION} in {self.firestore.database_path} holds no documents at readTime "
                                f"{read_time}: is RANKINGS_FIRESTORE_PROJECT or _DATABASE wrong? current unchanged")
        self.say(f"rest: {counted} documents at readTime {read_time}, as many as Firestore counts in {COLLECTION}")
        self.record.update(snapshot_documents=counted, bytes_written=base["bytes"], compacted=None, layers=[base],
                           last_full_read_time=read_time, full_rate=round(counted / seconds / len(parts), 1))

    def incremental(self, watermark, read_time):
        """Votes stamped at or after the watermark, as the next change file over the previous night's layers (linked)
        or merged with them into a new base (compacted); NotProven unless its four proofs hold at one readTime."""
        since, before = format_time(watermark), self.previous["layers"]
        self.record.update(mode="incremental", read_time=read_time, streams=1)
        query = Query(self.firestore, COLLECTION, read_time=read_time, order_by=("timestamp", "__name__"),
                      where=field_filter("timestamp", "GREATER_THAN_OR_EQUAL", {"timestampValue": since}))
        changed, new = {}, 0
        try:
            for page in query.pages():
                self.record["documents_read"] += len(page)
                changed.update((d["name"], document_line(d)) for d in page)
                new += sum(self.created_since(d) for d in page)
            # The layers built on are checked while Firestore counts (hashing lets go of the GIL).
            answered, whole, _ = parallel.each(lambda ask: ask(), [
                query.count, lambda: self.counted(read_time), lambda: verify(self.previous_folder, before)], 3)
        except Damaged as damage:
            raise NotProven(f"the previous snapshot cannot be built on: {damage}") from None
        except (Refused, Broken) as error:     # a 400 (an index exempted), a DEADLINE_EXCEEDED, a broken answer
            raise NotProven(f"Firestore's answer at readTime {read_time} cannot be used: {error}") from None
        if answered != len(changed):
            raise NotProven(f"{len(changed)} documents since {since} returned, but Firestore counts "
                            f"{answered} for the same query at readTime {read_time}")
        # The previous night's documents plus each changed one created after its readTime (one created before
        # replaces one) make the collection's COUNT, proven without reading the previous snapshot; what this
        # cannot see: docs/firestore.md, "How a night is proven whole".
        documents = self.previous["snapshot_documents"] + new
        if documents != whole:
            raise NotProven(f"{len(changed)} documents since {since}, {new} of them created after the previous "
                            f"night's readTime {self.previous['read_time']}, make {documents}, but Firestore counts "
                            f"{whole} at readTime {read_time}")
        names = sorted(changed)
        why = compaction(before, sum(len(changed[n]) for n in names), names)
        if why is None:
            layers, linked = list(before), f"{len(before)} linked {'layer' if len(before) == 1 else 'layers'}"
            written = sum(link_or_copy(os.path.join(self.previous_folder, one["file"]),
                                       os.path.join(self.folder, one["file"]), self.say) for one in before)
            how = f"({linked}; none changed since it)"
            if names:   # a night of no changes is its links alone
                out = Writer(os.path.join(self.folder, change_name(len(before))))
                out.write_lines([changed[n] for n in names])
                layers.append(out.close())
                written += layers[-1]["bytes"]
                how = f"as {layers[-1]['file']} ({len(names)} written, {new} of them new; later wins by name over " \
                    f"{linked})"
        else:   # a rare night: it reads and writes every document, and counts what it wrote
            out = Writer(os.path.join(self.folder, SNAPSHOT))
            try:
                for _, line in merged(self.previous_folder, before, ((n, changed[n]) for n in names)):
                    out.write_lines([line])
            except Damaged as damage:   # lines out of order, which their digest cannot show
                raise NotProven(f"the previous snapshot cannot be built on: {damage}") from None
            layers, how = [out.close()], f"as a new {SNAPSHOT} (compacted: {why})"
            written = layers[0]["bytes"]
            if layers[0]["lines"] != whole:
                raise NotProven(f"{len(changed)} documents since {since} merged into {layers[0]['lines']}, but "
                                f"Firestore counts {whole} at readTime {read_time}")
        self.say(f"rest: {len(changed)} documents since {since} merged into the previous night {how}: {documents} "
                 f"documents at readTime {read_time}, as many as Firestore counts")
        self.record.update(watermark=since, snapshot_documents=documents, layers=layers, compacted=why,
                           bytes_written=written, last_full_read_time=self.previous["last_full_read_time"],
                           full_rate=self.previous.get("full_rate"))

    def created_since(self, document):
        """Created after the previous night's readTime (which serves every write committed at or before it)."""
        try:
            return parse_time(document["createTime"]) > parse_time(self.previous["read_time"])
        except (KeyError, TypeError, ValueError):
            raise NotProven(f"{document['name']} came without a createTime ({document.get('createTime')!r}): "
                            "whether it is new cannot be told without the previous snapshot") from None
