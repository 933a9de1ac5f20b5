"""rankings-fetch-firestore DIR: tonight's snapshot of Firestore's rating_events in a new night under
DIR, proven whole, then DIR/current switched to it (folders.py). plan.py says what is read: all, what
changed since the last night (the next layer over its snapshot, layers.py), or a window. Every plan
ends proven: as many documents as Firestore counts at the readTime; an incremental night that cannot
be proven becomes a full read."""
import os
import sys
import threading
import time

from . import auth, layers as layering, metrics, parallel, plan as plans, ranges, record as records
from . import settings as setting, statuses
from .export import fetch_export
from .firestore import Firestore, Query, count, now
from .folders import Run, held
from .log import one_line
from .snapshot import SNAPSHOT, SNAPSHOT_GZ, Damaged, GzipWriter, Writer, document_line, drift, format_time, \
    parse_time, sorted_lines
from .statuses import CONFIG, DATA, UNAVAILABLE, Failure, status_of
from .stream import Broken
from .transport import FirestoreError, Refused

PROGRAM = "rankings-fetch-firestore"
COLLECTION = "rating_events"
USAGE_TEXT = """Usage: rankings-fetch-firestore DIR

Leaves one complete snapshot of Firestore's rating_events in a new folder under DIR and points
DIR/current at it, only once it is proven whole; keeps the newest RANKINGS_FIRESTORE_KEEP nights.
Settings come from the environment (RANKINGS_FIRESTORE_*, checked as rankings-night checks
/etc/rankings.conf); rankings-night runs it with the configuration's. See "Firestore: fetch and
publish" in rankings(1), or /usr/share/doc/rankings/firestore.md.gz.
"""
# COUNTs asked at once: each mostly waits on Firestore, and a plan's round of them must take a small
# share of the readTime's life, not one COUNT's latency after another.
COUNT_WORKERS = 32


def out(line):
    """Where the fetch's lines go: standard error, or the night's log (night.py sets it)."""
    print(line, file=sys.stderr, flush=True)


def say(message):
    out(f"{PROGRAM}: {one_line(auth.redact(message))}")


class NotProven(Exception):
    """An incremental night that cannot be proven whole: the night reads everything instead."""


def _time_filter(op, text):
    return {"fieldFilter": {"field": {"fieldPath": "timestamp"}, "op": op, "value": {"timestampValue": text}}}


def since_filter(nanoseconds):
    return _time_filter("GREATER_THAN_OR_EQUAL", format_time(nanoseconds))


def slices(watermark, read_time, streams):
    """The incremental query cut into up to `streams` equal spans of time read side by side (one
    stream takes 25 s for 100,000 documents), the last open-ended (a vote stamped ahead of the
    clock), each bound written once: a document is in one span, and their COUNT is the query's."""
    if streams == 1 or read_time <= watermark:
        return [since_filter(watermark)]
    bounds = sorted({format_time(watermark + (read_time - watermark) * i // streams) for i in range(streams)})
    spans = []
    for low, high in zip(bounds, bounds[1:] + [None]):
        since = _time_filter("GREATER_THAN_OR_EQUAL", low)
        spans.append(since if high is None else
                     {"compositeFilter": {"op": "AND", "filters": [since, _time_filter("LESS_THAN", high)]}})
    return spans


def not_whole(documents, counted, read_time, fetched="", there=f"in {COLLECTION}"):
    return Failure(UNAVAILABLE, f"rest: the night is not whole: {documents} documents fetched{fetched}, but "
                                f"Firestore counts {counted} {there} at readTime {read_time}")


class Fetch:
    """One night's read; `firestore` answers its calls (HTTP when None; the unit tests' in memory)."""

    def __init__(self, settings, folder, previous_folder, previous, firestore=None):
        self.settings, self.folder = settings, folder
        self.previous_folder, self.previous = previous_folder, previous
        self.firestore = firestore if firestore is not None else Firestore(settings, say)
        # A night that keeps no state keeps its snapshot compressed: its file system is memory.
        self.gzip = settings.firestore_snapshot == "gzip"
        self.path = os.path.join(folder, SNAPSHOT_GZ if self.gzip else SNAPSHOT)
        self.record = {"method": "rest", "project": settings.firestore_project, "collection": COLLECTION,
                       "database": settings.firestore_database, "documents_read": 0, "drift_documents": 0,
                       "watermark": None, "since": None, "full_reason": None, "fallback": False, "streams": 1}
        self.started = time.monotonic()
        self.bytes_written = 0      # bytes tonight copied where it could not link (layers add their own)
        self.lock = threading.Lock()

    def run(self, plan):
        if plan.mode == "window":
            return self.window(plan.since)
        if plan.mode == "incremental":
            try:
                return self.incremental(plan.watermark)
            except NotProven as why:
                say(f"warning: rest: the incremental night is not proven, so a full read: {why}")
                self.record["fallback"] = True
                self.bytes_written = 0
                for name in os.listdir(self.folder):    # tonight's own partial folder: nothing shared
                    if layering.is_layer(name):
                        os.unlink(os.path.join(self.folder, name))
                return self.full(str(why), plan.watermark)
        return self.full(plan.reason, None)

    def read(self, query, out):
        for page in query.pages():
            out.write_lines([document_line(document, self.gzip) for document in page])
            with self.lock:
                self.record["documents_read"] += len(page)

    def count(self, read_time, low, high):
        return count(self.firestore, COLLECTION, read_time, low, high, COUNT_WORKERS, say)

    def count_all(self, read_time, ranges_):
        return parallel.each(lambda r: self.count(read_time, *r), ranges_, COUNT_WORKERS)

    def total(self, read_time):
        return sum(c for _, _, c in self.count(read_time, None, None))

    def empty(self, read_time):
        return Failure(DATA, f"{COLLECTION} in {self.firestore.database_path} holds no documents at readTime "
                             f"{read_time}: is RANKINGS_FIRESTORE_PROJECT or _DATABASE wrong? current unchanged")

    def cut(self, read_time, counted, total):
        """The streams' ranges and counts: at the previous snapshot's quantiles when there is one,
        else balanced by COUNTs of the ids' first characters."""
        streams = self.settings.firestore_streams
        if streams == 1 or total < 2 * streams:
            return [(None, None, total)]
        if self.previous is not None:
            prefix = f"{self.firestore.database_path}/documents/{COLLECTION}/"
            try:
                # Streamed: a list of 10 M names would hold a gigabyte in every stream's process.
                # The base alone: new votes have random ids, so its quantiles place every layer's.
                names = (name[len(prefix):] for name, _ in sorted_lines(os.path.join(self.previous_folder, SNAPSHOT)))
                cuts = ranges.quantiles(names, layering.of(self.previous)[0]["lines"], streams)
            except (Damaged, OSError) as damage:
                say(f"rest: the previous snapshot cannot place the ranges ({damage}): counting by first characters")
            else:
                parts = self.count_all(read_time, cuts)
                return [(low, high, sum(c for _, _, c in part)) for (low, high), part in zip(cuts, parts)]
        # Cut finer only where a stream's boundary falls, each round's COUNTs asked at once.
        return ranges.balance(counted, streams, lambda rs: self.count_all(read_time, rs))

    def read_range(self, read_time, number, part):
        """One stream, in a process of its own: one range into its own file, proven by its COUNT;
        (path, documents read), or the failure with what it had read."""
        low, high, counted = part
        out = self.writer(os.path.join(self.folder, f".range-{number:04d}"))
        try:
            self.read(Query(self.firestore, COLLECTION, read_time=read_time, low=low, high=high), out)
        except Exception as error:
            error.documents_read = out.lines
            raise
        documents, _ = out.close()
        if documents != counted:
            raise not_whole(documents, counted, read_time, f" in {ranges.describe(low, high)}", "there")
        return out.path, documents

    def full(self, reason, watermark):
        say(f"rest: a full read: {reason}")
        self.record["mode"] = "full"
        read_time = None
        try:
            read_time = now(self.firestore, COLLECTION, self.settings.firestore_pitr == "yes")
            counted = self.count(read_time, None, None)
            total = sum(c for _, _, c in counted)
            if total == 0:
                raise self.empty(read_time)
            life = plans.PITR_LIFE if self.settings.firestore_pitr == "yes" else plans.READ_TIME_LIFE
            rate = (self.previous or {}).get("full_rate")
            late = plans.full_read_fits(total, rate if isinstance(rate, (int, float)) else None,
                                        self.settings.firestore_streams, life,
                                        self.settings.firestore_deadline_seconds)
            if late:
                # Not refused: the rate is one night's (a night of 429s halves it), and a refused
                # night measures none, so a refusal would hold for ever.
                say(f"warning: rest: {late}; reading anyway: the rate is the last full read's, and this one "
                    "measures it again")
            planned = time.monotonic()
            parts = self.cut(read_time, counted, total)
            say(f"rest: {total} documents at readTime {read_time}, planned in {time.monotonic() - planned:.1f} s, "
                f"read in {len(parts)} {'range' if len(parts) == 1 else 'ranges'}: "
                + ", ".join(f"{ranges.describe(lo, hi)} {c}" for lo, hi, c in parts[:8])
                + (" …" if len(parts) > 8 else ""))
            begun = time.monotonic()
            try:
                files = parallel.apart(lambda numbered: self.read_range(read_time, *numbered), enumerate(parts))
            except Exception as error:
                self.record["documents_read"] += getattr(error, "documents_read", 0)
                raise
            self.record["documents_read"] += sum(read for _, read in files)
            seconds = max(time.monotonic() - begun, 0.001)
            out = Writer(self.path)     # the parts' bytes as they are: gzip members concatenate
            for path, read in files:
                out.copy(path, read if self.gzip else None)
            documents, digest = out.close()
        except Refused as refused:
            if refused.code == 400 and refused.reason == "FAILED_PRECONDITION" and "too old" in str(refused):
                self.outlived(read_time)    # Firestore no longer keeps the readTime
            raise
        if documents != total:
            raise not_whole(documents, total, read_time)
        say(f"rest: {documents} documents at readTime {read_time}, as many as Firestore counts in {COLLECTION}")
        self.record.update(mode="full", full_reason=reason, read_time=read_time, snapshot_documents=documents,
                           **self.base(documents, digest), last_full_read_time=read_time, streams=len(parts),
                           full_rate=round(documents / seconds / len(parts), 1),
                           seconds=round(time.monotonic() - self.started, 3))
        self.measure_drift(watermark)
        return self.record

    def base(self, documents, digest):
        size = os.stat(self.path).st_size
        if self.gzip:
            self.record["snapshot_form"] = "gzip"
        return {"layers": [{"file": os.path.basename(self.path), "lines": documents, "bytes": size, "sha256": digest}],
                "bytes_written": self.bytes_written + size, "compacted": None}

    def writer(self, path):
        return GzipWriter(path) if self.gzip else Writer(path)

    def outlived(self, read_time):
        seconds = time.monotonic() - self.started
        if not self.record["documents_read"]:
            # No setting made it so (a readTime kept less than an hour, a slow plan): try again.
            raise Failure(UNAVAILABLE, f"rest: Firestore no longer serves readTime {read_time}, {seconds:.0f} s "
                                       "after the fetch began and before any document was read; another try "
                                       "takes a new readTime")
        raise Failure(CONFIG, f"rest: the read outlived its readTime {read_time} after "
                              f"{self.record['documents_read']} documents in {seconds:.0f} s: Firestore keeps a "
                              "readTime an hour (seven days with point-in-time recovery); more "
                              "RANKINGS_FIRESTORE_STREAMS, RANKINGS_FIRESTORE_PITR=yes or the export method",
                      final=True)

    def measure_drift(self, watermark):
        if self.previous is None:
            return
        if watermark is None:
            watermark = parse_time(self.previous["read_time"]) - self.settings.firestore_margin * 10**9
        try:
            held = layering.merged(self.previous_folder, layering.of(self.previous))
            self.record["drift_documents"] = drift(held, self.path, watermark)
        except (Damaged, OSError) as error:
            say(f"warning: no drift against the previous night: {error}")
        if self.record["drift_documents"]:
            say(f"warning: rest: drift: the previous night held {self.record['drift_documents']} votes wrong "
                f"(deleted, or written with a timestamp before {format_time(watermark)})")

    def incremental(self, watermark):
        """Votes stamped at or after the watermark, as the next change file over the previous night's
        layers (linked), or merged with them into a new base (compact). Proven by the query's COUNT,
        every earlier layer's digest, and the collection's COUNT against what the layers make
        (proven_documents), all at one readTime; NotProven otherwise."""
        self.record["mode"] = "incremental"
        # Every layer built on is checked while Firestore answers: hashing lets go of the GIL.
        checked = {}
        checker = threading.Thread(target=self._check, args=(layering.of(self.previous), checked), daemon=True)
        checker.start()
        changed, created, held = {}, {}, set()
        try:
            read_time = now(self.firestore, COLLECTION, self.settings.firestore_pitr == "yes")
            query = Query(self.firestore, COLLECTION, where=since_filter(watermark), read_time=read_time)

            def read(where):
                for page in Query(self.firestore, COLLECTION, where=where, order_by=("timestamp", "__name__"),
                                  read_time=read_time).pages():
                    with self.lock:
                        changed.update((d["name"], document_line(d)) for d in page)
                        created.update((d["name"], d.get("createTime")) for d in page)
                        held.update(d["name"] for d in page if self.held_already(d))
                        self.record["documents_read"] += len(page)

            parallel.each(read, slices(watermark, parse_time(read_time), self.settings.firestore_streams),
                          self.settings.firestore_streams)
        except Refused as refused:
            raise NotProven(f"Firestore refused the incremental query: {refused}") from None
        except Broken as broken:
            raise NotProven(f"its answer is not whole: {broken}") from None
        try:
            answered = query.count()
            whole = self.total(read_time)
        except Refused as refused:
            raise NotProven(f"Firestore refused a COUNT at readTime {read_time}: {refused}") from None
        except Broken as broken:
            raise NotProven(f"a COUNT's answer is not whole: {broken}") from None
        if answered != len(changed):
            raise NotProven(f"{len(changed)} documents since {format_time(watermark)} returned, but Firestore counts "
                            f"{answered} for the same query at readTime {read_time}")
        checker.join()
        if "damage" in checked:
            raise NotProven(f"the previous snapshot cannot be built on: {checked['damage']}")
        before = checked["layers"]
        since = format_time(watermark)
        documents, new = self.proven_documents(created, whole, read_time, since)
        # What the margin reads again, unchanged since the previous night read it, is not written twice.
        names = sorted(n for n in changed if n not in held)
        escaped = [n for n in names if layering.needs_escape(n)]
        why = layering.compaction(before, sum(len(changed[n]) for n in names), escaped)
        if why is None:
            for layer in before:
                self.bytes_written += layering.link_or_copy(os.path.join(self.previous_folder, layer["file"]),
                                                            os.path.join(self.folder, layer["file"]), say)
            layers = [dict(layer) for layer in before]
            if names:   # a night of no changes is its links alone
                out = Writer(os.path.join(self.folder, layering.change_name(len(before))))
                out.write_lines([changed[n] for n in names])
                layers.append(self.layer(out))
            linked = f"{len(before)} linked {'layer' if len(before) == 1 else 'layers'}"
            say(f"rest: {len(changed)} documents since {since} merged into the previous night "
                + (f"as {layers[-1]['file']} ({len(names)} written, {new} of them new; later wins by name over "
                   f"{linked})" if names else f"({linked}; none changed since it)")
                + f": {documents} documents at readTime {read_time}, as many as Firestore counts")
        else:
            layers = [self.compact(before, changed, names, whole, read_time, since)]
            say(f"rest: {len(changed)} documents since {since} merged into the previous night as a new {SNAPSHOT} "
                f"(compacted: {why}): {documents} documents at readTime {read_time}, as many as Firestore counts")
        written = sum(layer["bytes"] for layer in layers if layer.pop("written", False))
        self.record.update(mode="incremental", watermark=since, read_time=read_time,
                           snapshot_documents=documents, layers=layers, compacted=why,
                           bytes_written=self.bytes_written + written,
                           last_full_read_time=self.previous["last_full_read_time"],
                           full_rate=self.previous.get("full_rate"), seconds=round(time.monotonic() - self.started, 3))
        return self.record

    def _check(self, layers, out):
        try:
            out["layers"] = layering.verify(self.previous_folder, layers)
        except Damaged as damage:
            out["damage"] = damage
        except Exception as error:  # noqa: BLE001 (told to the night as damage: it reads everything)
            out["damage"] = f"{type(error).__name__}: {error}"

    def held_already(self, document):
        """Whether the previous night's layers hold this very version, so it is not written again:
        last written at or before that night's readTime, which read every document stamped as this
        one is (a full read, or a watermark not after its timestamp). Anything unreadable is written."""
        previous = self.previous
        try:
            if parse_time(document["updateTime"]) > parse_time(previous["read_time"]):
                return False
            if previous.get("mode") != "incremental":
                return previous.get("mode") == "full"
            return parse_time(document["fields"]["timestamp"]["timestampValue"]) >= parse_time(previous["watermark"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return False

    def proven_documents(self, created, whole, read_time, since):
        """(documents tonight's snapshot holds, how many are new), proven equal to the collection's
        COUNT without reading the previous snapshot: the previous night's documents plus each changed
        one created after its readTime (one created before replaces one); NotProven otherwise.

        A misclassified document only adds one that is not there (deleted and created again since),
        so the sum exceeds the COUNT: a full read, never a wrong snapshot proven. One missing from the
        previous snapshot (drift) is replaced into it uncounted: a shortfall. Only both in one night
        cancel; the full read every RANKINGS_FIRESTORE_FULL_EVERY days finds them as drift. A readTime
        serves every write committed at or before it, so "after" is strict."""
        then = parse_time(self.previous["read_time"])
        new = 0
        for name, stamp in created.items():
            try:
                new += parse_time(stamp) > then
            except (TypeError, ValueError, AttributeError):
                raise NotProven(f"{name} came without a createTime ({stamp!r}): whether it is new cannot "
                                "be told without the previous snapshot") from None
        documents = self.previous["snapshot_documents"] + new
        if documents != whole:
            raise NotProven(f"{len(created)} documents since {since}, {new} of them created after the previous "
                            f"night's readTime {self.previous['read_time']}, make {documents}, but Firestore counts "
                            f"{whole} at readTime {read_time}")
        return documents, new

    def layer(self, out):
        lines, digest = out.close()
        return {"file": os.path.basename(out.path), "lines": lines, "bytes": os.stat(out.path).st_size,
                "sha256": digest, "written": True}

    def compact(self, before, changed, names, whole, read_time, since):
        """A new base: the previous layers and tonight's changes merged (a rare night: it reads and
        writes every document), itself as many as Firestore counts."""
        out = Writer(self.path)
        try:
            for _, line in layering.merged(self.previous_folder, before, ((n, changed[n]) for n in names)):
                out.write(line)
        except (Damaged, OSError) as damage:
            out.close()
            os.unlink(self.path)
            raise NotProven(f"the previous snapshot cannot be built on: {damage}") from None
        base = self.layer(out)
        if base["lines"] != whole:
            os.unlink(self.path)
            raise NotProven(f"{len(changed)} documents since {since} merged into {base['lines']}, but Firestore "
                            f"counts {whole} at readTime {read_time}")
        return base

    def window(self, since):
        """The votes stamped at or after since, proven by the query's COUNT; the collection is counted
        too, so a wrong project or database fails as a full read's does, not as a board of no votes."""
        self.record["mode"] = "window"
        query = Query(self.firestore, COLLECTION, where=since_filter(since), order_by=("timestamp", "__name__"))
        counted = query.count()
        if self.total(query.read_time) == 0:
            raise self.empty(query.read_time)
        out = self.writer(self.path)
        self.read(query, out)
        documents, digest = out.close()
        what = f"{COLLECTION} since {format_time(since)}"
        if documents != counted:
            raise not_whole(documents, counted, query.read_time, there=f"in {what}")
        say(f"rest: {documents} documents at readTime {query.read_time}, as many as Firestore counts in {what}")
        self.record.update(mode="window", since=format_time(since), read_time=query.read_time,
                           last_full_read_time=query.read_time, snapshot_documents=documents,
                           **self.base(documents, digest), seconds=round(time.monotonic() - self.started, 3))
        return self.record


def previous_night(folder, now_ns):
    """(record, None) of the night DIR/current names, or (None, why it cannot be built on)."""
    if folder is None:
        return None, "no previous night"
    try:
        record = records.read(folder, now_ns)
    except Damaged as damage:
        return None, f"the previous night's record cannot be used: {damage}"
    if record.get("snapshot_form") == "gzip":
        return None, "the previous night's snapshot is compressed (RANKINGS_FIRESTORE_SNAPSHOT=gzip): never built on"
    if not os.path.isfile(os.path.join(folder, SNAPSHOT)):
        return None, f"the previous night has no {SNAPSHOT}"
    return record, None


def run(directory, settings, deadline=None, full_because=None, firestore=None):
    """One fetch into DIR within `deadline` seconds (RANKINGS_FIRESTORE_DEADLINE_SECONDS when None),
    rankings-fetch.prom written however it ends (but for 64, before anything is touched).
    `full_because`: why tonight must read everything (the last board disagreed with Firestore)."""
    settings.require("RANKINGS_FIRESTORE_PROJECT")
    shorter = deadline is not None and deadline < settings.firestore_deadline_seconds
    night = Run(PROGRAM, directory, deadline if shorter else settings.firestore_deadline_seconds, say,
                named="RANKINGS_FETCH_TIMEOUT_SECONDS" if shorter else "RANKINGS_FIRESTORE_DEADLINE_SECONDS")
    night.record, status = {}, 70
    try:
        with night:
            night.start()
            now_ns = time.time_ns()
            previous_folder = night.current()
            previous, damage = previous_night(previous_folder, now_ns)
            tonight = plans.plan(settings, previous, damage, now_ns, COLLECTION)
            if full_because and tonight.mode == "incremental":
                tonight = plans.Plan("full", full_because)
            where = f" from the emulator at {settings.emulator_host}" if settings.emulator_host else ""
            say(f"{settings.firestore_fetch}: fetching {settings.firestore_project}/{settings.firestore_database}/"
                f"{COLLECTION}{where}: {tonight.mode}")
            if tonight.mode == "export":
                night.record = fetch_export(settings, night.folder, night.name, night.ends, say)
            else:
                given = {} if firestore is None else {"firestore": firestore}
                fetch = Fetch(settings, night.folder, previous_folder, previous, **given)
                fetch.firestore.transport.deadline = night.ends
                night.record = fetch.record
                if tonight.mode == "full" and previous is None and previous_folder is not None \
                        and tonight.reason == damage:
                    # A night there but not usable (damaged, a clock far off) is a fall back too.
                    say(f"warning: rest: the previous night cannot be built on, so a full read: {damage}")
                    fetch.record["fallback"] = True
                fetch.run(tonight)
            records.write(night.folder, night.record)
            night.commit(settings.firestore_keep)
            say(f"{settings.firestore_fetch}: {directory}/current is now {night.name} "
                f"({time.time() - night.started:.1f}s)")
        status = 0
        return night.record
    except (Failure, FirestoreError) as failure:
        status = status_of(failure)
        raise
    finally:
        if hasattr(night, "started"):
            write_metrics(settings, night, status)


def write_metrics(settings, night, status):
    path = metrics.beside(settings.metrics, "rankings-fetch.prom")
    if not path:
        return
    ended, record = time.time(), night.record or {}
    last = ended if status == 0 else metrics.carried(path, "rankings_fetch_last_success_timestamp_seconds")
    try:
        current = records.read(os.path.join(night.directory, "current"), time.time_ns())
    except Damaged:
        current = {}
    values = [
        ("last_run_timestamp_seconds", "Unix time at which the last fetch ended.", f"{ended:.3f}"),
        ("last_run_duration_seconds", "How long the last fetch took.", f"{ended - night.started:.3f}"),
        ("last_run_exit_status", "Exit status of the last fetch; 0 is success.", status),
        ("prune_errors", "Entries the last fetch's clean-up could not remove.", night.prune_errors),
        ("documents_read", "Documents Firestore returned to the last fetch, failed or not (what it bills as "
                           "reads, besides one per 1,000 counted).", record.get("documents_read", 0)),
        ("snapshot_documents", "Documents in the night current names.", current.get("snapshot_documents", 0)),
        ("full", "1 when the last fetch read the whole collection.", int(record.get("mode") == "full")),
        ("fallback", "1 when the last fetch read in full because its incremental night could not be proven.",
         int(bool(record.get("fallback")))),
        ("drift_documents", "Votes the previous nights held wrong, found by the last full fetch.",
         record.get("drift_documents", 0)),
        ("bytes_written", "Bytes of the files the last fetch wrote (a change file, or a new base; layers it "
                          "linked from earlier nights not counted).",
         record.get("bytes_written", 0) if status == 0 else 0),
        ("kept_bytes", "Disk the kept nights in the fetch's folder hold, each file once however many nights link it.",
         held(night.directory)[1]),
    ]
    if last is not None:
        values.append(("last_success_timestamp_seconds", "Unix time at which a fetch last switched current.",
                       f"{last:.3f}"))
    metrics.write(path, [(f"rankings_fetch_{n}", h, [("", v)]) for n, h, v in values], say)


def main(argv, environ):
    return statuses.command(argv, USAGE_TEXT, lambda arg: run(arg, setting.from_environment(environ)), say, PROGRAM)
