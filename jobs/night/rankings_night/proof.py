"""The board proved against Firestore's own counts at the snapshot's readTime, before it is
published: for every joke the job counted (its `--stats` file), Firestore's COUNT of that joke's
Hilarious votes and of its Horrible votes equals the job's; and the sums over those jokes equal
Firestore's COUNT of each kind over the whole collection, so no joke is missing from the board.

What is counted, exactly as the job counts it (docs/input-rules.md, docs/input-formats.md):

- Hilarious is a rating from 4 to 5, Horrible one from 1 to 2, both ends included, the rating an
  `integerValue` or a `doubleValue`. Firestore's filters `rating >= 4 AND rating <= 5` and
  `rating >= 1 AND rating <= 2` match exactly those: a range on a number compares integers and
  doubles by value (4, 4.0, 4.5 and 5 are Hilarious for both), and matches no other type (a
  string "5", true, null: counted by neither; the job calls them bad lines). Both ends are
  needed: 6 and 0 are out of the job's range (bad lines), and NaN, which Firestore orders below
  every number, fails `>= 1`. A rating between 2 and 4 (2.5, 3, 3.5) is neutral for the job and
  in neither range. Neutral votes are not proved (a third COUNT a joke).
- The per-joke COUNT adds `joke_id == J`: Firestore's equality matches the string J only, and
  the job's joke is that string's exact bytes; the `--stats` file names each joke so.
- `where` (the 30-day board: `timestamp >= T`) is ANDed to every COUNT; the job's `--since T`
  counts the same votes when T is a whole microsecond (Firestore keeps microseconds) and every
  timestamp a `timestampValue` (the only form the job reads in a typed document).

What differs, and how it is accounted for: votes the job refuses as bad lines (tolerated by
`--max-invalid`) that Firestore's filters still match. A rating in range with a missing,
non-string or empty `joke_id` is in Firestore's total of its kind but in no joke of the board;
with `--since`, a vote without a readable timestamp is a bad line for the job, and matched by
Firestore only if its `timestamp` is a timestampValue after T (never, then). `refused()` reads
the snapshot the job read, with the job's rules, and names every such vote (its document, its
string `joke_id` if any, the kind Firestore's filters put it in); the proof adds them to the
job's numbers before comparing, so they are accounted for by name, not taken for a mismatch. The
job's own `--report` is the check on that reading: its `bad_lines` must be as many as the
snapshot's refused lines found here, else the proof is unproven, not passed.

Not proved: a board made with `--dedupe` that removed duplicates (one vote per device and joke is
not what Firestore counts); the job's --report says so, and the proof is then unproven.

The queries: 2 a joke (Hilarious, Horrible) and 1 a kind for the totals, each COUNT cut by
document name range (firestore.count) only where Firestore cannot finish it within its deadline;
the per-joke ones on `workers` threads. `joke_id ==` with a range on `rating` needs the composite
index (joke_id ASC, rating ASC) in production (the emulator checks none): INDEX_COMMAND. Where
Firestore refuses for want of an index (FAILED_PRECONDITION, "requires an index"), what it
refused is unproven, with the command that makes the index, and the rest still proved. With a
window, ranges on two fields: the totals need (rating ASC, timestamp ASC), the jokes (joke_id
ASC, rating ASC, timestamp ASC); index_fields() says which a COUNT needs."""
import contextlib
import json
import os
import re
import threading
from dataclasses import dataclass, field

from . import parallel
from .firestore import count
from .snapshot import open_lines, parse_time
from .statuses import DATA, Failure
from .stream import Broken, value_key
from .transport import Refused

# Each kind the proof counts: the job's name for it (a --stats key) and its closed range.
KINDS = (("hilarious", 4, 5), ("horrible", 1, 2))


def _index_command(project, database, collection, fields):
    configs = " ".join(f"--field-config=field-path={f},order=ascending" for f in fields)
    return (f"gcloud firestore indexes composite create --project={project} --database='{database}' "
            f"--collection-group={collection} --query-scope=COLLECTION {configs}")


def index_fields(per_joke, where):
    """The fields of the composite index a COUNT needs (an empty list: none, Firestore's
    automatic single-field index serves it): an equality first, then the ranges' fields in
    name order, which is the order Firestore gives a query with ranges on several fields."""
    ranged = sorted({"rating"} | set(_range_fields(where)))
    fields = (["joke_id"] if per_joke else []) + ranged
    return fields if len(fields) > 1 else []


def _range_fields(where):
    if not where:
        return []
    if "compositeFilter" in where:
        return [f for inner in where["compositeFilter"]["filters"] for f in _range_fields(inner)]
    f = where["fieldFilter"]
    return [f["field"]["fieldPath"]] if f["op"] != "EQUAL" else []


INDEX_COMMAND = _index_command("PROJECT", "(default)", "rating_events", ["joke_id", "rating"])


# --- the job's side ---------------------------------------------------------------------------

def read_stats(path):
    """{joke_id: (hilarious, horrible)} of the job's --stats file (one object a line, joke ids
    in strictly increasing byte order, counts whole numbers); Failure(DATA) naming the line."""
    jokes, last = {}, None
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, 1):
            where = f"{path}:{number}"
            try:
                entry = json.loads(raw)
            except ValueError as error:
                raise Failure(DATA, f"{where}: not a --stats line: {error}") from None
            if not isinstance(entry, dict) or not isinstance(entry.get("joke_id"), str):
                raise Failure(DATA, f"{where}: not a --stats line: no string joke_id")
            for key in ("hilarious", "horrible", "neutral", "ratings"):
                value = entry.get(key)
                if type(value) is not int or value < 0:
                    raise Failure(DATA, f"{where}: not a --stats line: {key} is not a whole number")
            joke = entry["joke_id"]
            key = joke.encode("utf-8", "surrogatepass")
            if last is not None and key <= last:
                raise Failure(DATA, f"{where}: joke {joke!r} is not after the line before it")
            last = key
            jokes[joke] = (entry["hilarious"], entry["horrible"])
    return jokes


@dataclass(frozen=True)
class Vote:
    """A document the job refused that a COUNT of the proof matches: its name (the id), its
    string joke_id (None when it has none), and the kind Firestore's filters put it in."""
    name: str
    joke_id: object
    kind: str


@dataclass
class Refusals:
    """What the snapshot holds that the job refuses: `lines` how many bad lines in all (the job's
    --report says `bad_lines`), `votes` those of them a COUNT matches."""
    lines: int = 0
    votes: list = field(default_factory=list)


def _only(value, kind):
    """The inner value of a Firestore Value of exactly this one type, else None."""
    if isinstance(value, dict) and len(value) == 1 and kind in value:
        return value[kind]
    return None


def _rating(value):
    """The job's rating of a typed value: a float in 1...5, or None for a bad line."""
    integer, double = _only(value, "integerValue"), _only(value, "doubleValue")
    if integer is not None:
        if isinstance(integer, str):
            body = integer[1:] if integer.startswith("-") else integer
            if not (body.isascii() and body.isdigit()):
                return None
            number = float(int(integer))
        elif isinstance(integer, (int, float)) and not isinstance(integer, bool):
            number = float(integer)
            if number != int(number):
                return None
        else:
            return None
    elif double is not None:
        if isinstance(double, bool) or not isinstance(double, (int, float)):
            return None     # "NaN", "Infinity", "-Infinity": out of range; another string: no number
        number = float(double)
    else:
        return None
    return number if 1 <= number <= 5 else None


def _joke(value):
    joke = _only(value, "stringValue")
    if not isinstance(joke, str) or not joke:
        return None
    try:
        joke.encode("utf-8")
    except UnicodeEncodeError:
        return None     # a lone surrogate: an invalid record for the job
    return joke


def firestore_kind(fields):
    """The kind Firestore's range filters put a document's rating in, or None: any integer or
    double within a kind's range, whatever the job thinks of the document."""
    value = fields.get("rating")
    for kind in ("integerValue", "doubleValue"):
        inner = _only(value, kind)
        if inner is None or isinstance(inner, bool):
            continue
        try:
            number = int(inner) if kind == "integerValue" else float(inner)
        except (TypeError, ValueError):
            return None
        for name, low, high in KINDS:
            if low <= number <= high:
                return name
    return None


def matches(fields, where):
    """Whether Firestore's filter `where` (a REST Filter of fieldFilters, ANDed) matches a
    document's fields: a range matches a value of the bound's own type class only."""
    if not where:
        return True
    if "compositeFilter" in where:
        assert where["compositeFilter"]["op"] == "AND"
        return all(matches(fields, f) for f in where["compositeFilter"]["filters"])
    f = where["fieldFilter"]
    value = {"mapValue": {"fields": fields}}
    for part in f["field"]["fieldPath"].split("."):
        value = ((value.get("mapValue") or {}).get("fields") or {}).get(part) if isinstance(value, dict) else None
    if not isinstance(value, dict):
        return False
    try:
        have, bound = value_key(value), value_key(f["value"])
    except Broken:
        return False
    if have[0] != bound[0]:
        return False
    compare = {"EQUAL": have == bound, "LESS_THAN": have < bound, "LESS_THAN_OR_EQUAL": have <= bound,
               "GREATER_THAN": have > bound, "GREATER_THAN_OR_EQUAL": have >= bound}
    return compare[f["op"]]


# The shape nearly every vote has, matched without decoding it: a string joke_id, an integer
# rating from 1 to 5 (and with --since, a Timestamp). Such a line is one the job counts, so it is
# passed over at the disk's speed. Should a line of that shape still be refused by the job (a
# field repeated in a nested map, say), the refusals found fall short of the job's report, and
# the board is unproven, never wrongly proven.
_JOKE = re.compile(rb'"joke_id":\{"stringValue":"[^"\\]+"\}')
_RATING = re.compile(rb'"rating":\{"integerValue":"[1-5]"\}')
_STAMP = re.compile(rb'"timestamp":\{"timestampValue":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'
                    rb'(\.[0-9]{1,9})?Z"\}')


def _plainly_counted(line, timestamps):
    return bool(_RATING.search(line) and _JOKE.search(line) and (not timestamps or _STAMP.search(line)))


def refused(snapshot, where=None, timestamps=False):
    """The snapshot's documents the job refuses (`timestamps`: the job was given --since or
    --as-of, which make a vote without a readable timestamp a bad line), and which of them the
    proof's COUNTs (with `where`) match. The snapshot is the one the job read: one Firestore
    Document a line (snapshot.py), a path, or its lines (a layered night's: layers.lines)."""
    result = Refusals()
    with (open_lines(snapshot) if isinstance(snapshot, (str, os.PathLike)) else contextlib.nullcontext(snapshot)) as lines:
        for raw in lines:
            if _plainly_counted(raw, timestamps) or not raw.strip():
                continue
            try:
                document = json.loads(raw)
            except ValueError:
                result.lines += 1
                continue
            fields = document.get("fields") if isinstance(document, dict) else None
            if not isinstance(fields, dict) or not isinstance(document.get("name"), str):
                result.lines += 1
                continue
            joke, rating = _joke(fields.get("joke_id")), _rating(fields.get("rating"))
            readable = True
            if timestamps:
                stamp = _only(fields.get("timestamp"), "timestampValue")
                try:
                    parse_time(stamp)
                except (ValueError, TypeError, AttributeError, IndexError):
                    readable = False
            if joke is not None and rating is not None and readable:
                continue
            result.lines += 1
            kind = firestore_kind(fields)
            if kind is not None and matches(fields, where):
                string_joke = _only(fields.get("joke_id"), "stringValue")
                result.votes.append(Vote(document["name"].rsplit("/", 1)[-1],
                                         string_joke if isinstance(string_joke, str) else None, kind))
    return result


# --- Firestore's side -------------------------------------------------------------------------

def _filter(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def kind_filter(kind, joke=None, where=None):
    """The REST Filter of a kind's votes (of one joke when given, within `where` when given)."""
    _, low, high = next(k for k in KINDS if k[0] == kind)
    filters = [_filter("joke_id", "EQUAL", {"stringValue": joke})] if joke is not None else []
    filters += [_filter("rating", "GREATER_THAN_OR_EQUAL", {"integerValue": str(low)}),
                _filter("rating", "LESS_THAN_OR_EQUAL", {"integerValue": str(high)})]
    if where and where.get("compositeFilter", {}).get("op") == "AND":
        filters += where["compositeFilter"]["filters"]
    elif where:
        filters.append(where)
    return {"compositeFilter": {"op": "AND", "filters": filters}}


def wants_index(refused):
    """Firestore's refusal of a query for want of a composite index."""
    return refused.reason == "FAILED_PRECONDITION" and "index" in str(refused).lower()


@dataclass(frozen=True)
class Mismatch:
    """One count that differs: joke_id None for a kind's total over the collection; `job` the
    job's number, `accounted` the refused votes added to it, `firestore` Firestore's COUNT."""
    joke_id: object
    kind: str
    job: int
    accounted: int
    firestore: int

    def describe(self):
        what = f"joke {self.joke_id}" if self.joke_id is not None else "all jokes"
        extra = f" + {self.accounted} refused by the job" if self.accounted else ""
        return f"{what}: {self.kind} {self.job}{extra} on the board, {self.firestore} in Firestore"


@dataclass
class Proof:
    """The proof's outcome. `status`: "proven" (every count asked for equal), "mismatch" (at
    least one differs: `mismatches`), or "unproven" (none differs, but some were not compared:
    `unproven` says why, `index_commands` make the indexes Firestore asked for)."""
    read_time: str
    jokes: int
    mismatches: list = field(default_factory=list)
    unproven: list = field(default_factory=list)
    index_commands: list = field(default_factory=list)
    totals: dict = field(default_factory=dict)      # kind -> (job, accounted, firestore)
    accounted: int = 0                              # refused votes added to the job's numbers
    queries: int = 0                                # COUNTs sent (parts of a split one each)
    jokes_proven: bool = False                      # every joke's two COUNTs compared

    @property
    def status(self):
        return "mismatch" if self.mismatches else "unproven" if self.unproven else "proven"

    @property
    def proven(self):
        return self.status == "proven"

    def describe(self):
        if self.mismatches:
            shown = "; ".join(m.describe() for m in self.mismatches[:5])
            more = f" (and {len(self.mismatches) - 5} more)" if len(self.mismatches) > 5 else ""
            return f"the board disagrees with Firestore at readTime {self.read_time}: {shown}{more}"
        totals = ", ".join(f"{job + acc} {kind}" for kind, (job, acc, _) in self.totals.items())
        if self.unproven:
            return (f"the board is unproven at readTime {self.read_time}: " + "; ".join(self.unproven)
                    + (f" ({totals} votes agree)" if totals else ""))
        refused_ = f", {self.accounted} of them refused by the job" if self.accounted else ""
        return (f"the board is proven at readTime {self.read_time}: {self.jokes} jokes, {totals} votes "
                f"as Firestore counts them{refused_} ({self.queries} COUNTs)")


class _Counted:
    """firestore's calls, counted; all Query uses of it."""

    def __init__(self, firestore):
        self.firestore, self.database_path = firestore, firestore.database_path
        self.calls, self.lock = 0, threading.Lock()

    def run_aggregation_query(self, body, final=()):
        with self.lock:
            self.calls += 1
        return self.firestore.run_aggregation_query(body, final)


class _NoIndex(Exception):
    def __init__(self, refused):
        super().__init__(str(refused))
        self.refused = refused


def prove_board(firestore, collection, read_time, stats, bad, workers, say, where=None, report=None):
    """Proof of the board whose --stats file is `stats` (a path, or read_stats's dict) against
    Firestore's `collection` at `read_time` (the snapshot's). `bad`: refused(snapshot, where,
    timestamps) of the snapshot the job read. `where`: the window's filter (the 30-day board's
    `timestamp >= T`, fetch.since_filter(T)), ANDed to every COUNT. `report`: the job's --report
    (a path or its dict), which must count as many bad lines as `bad` and remove no duplicates,
    else nothing is compared and the board is unproven. `workers`: threads for the per-joke
    COUNTs. Raises what a COUNT raises (Failure 69), but for a refusal for want of an index,
    which leaves what it refused unproven."""
    jokes = read_stats(stats) if isinstance(stats, (str, bytes, os.PathLike)) else dict(stats)
    counted = _Counted(firestore)
    proof = Proof(read_time=read_time, jokes=len(jokes), accounted=len(bad.votes))
    project, database = _project_database(firestore.database_path)
    why = _against_report(bad, report) if report is not None else None
    if why:
        proof.unproven.append(why)
        say(f"proof: {proof.describe()}")
        return proof

    def firestore_count(filter_):
        try:
            parts = count(counted, collection, read_time, None, None, workers, say, where=filter_)
        except Refused as refusal:
            if wants_index(refusal):
                raise _NoIndex(refusal) from None
            raise
        return sum(c for _, _, c in parts)

    def no_index(what, per_joke, refusal):
        command = _index_command(project, database, collection, index_fields(per_joke, where))
        proof.unproven.append(f"Firestore cannot count {what} without a composite index "
                              f"({refusal.refused}); make it with: {command}")
        proof.index_commands.append(command)
        say(f"proof: {what}: unproven for want of an index; make it with: {command}")

    # The totals: every vote of each kind, the board's and the refused ones, so none is missing.
    extra = {(v.joke_id, v.kind): 0 for v in bad.votes}
    for v in bad.votes:
        extra[(v.joke_id, v.kind)] += 1
    try:
        for number, (kind, _, _) in enumerate(KINDS):
            job = sum(c[number] for c in jokes.values())
            accounted = sum(1 for v in bad.votes if v.kind == kind)
            theirs = firestore_count(kind_filter(kind, where=where))
            proof.totals[kind] = (job, accounted, theirs)
            if job + accounted != theirs:
                proof.mismatches.append(Mismatch(None, kind, job, accounted, theirs))
    except _NoIndex as refusal:
        proof.totals.clear()
        no_index("the totals in the window", False, refusal)

    # Each joke, its two kinds: the first alone, so that a missing index costs one refusal.
    work = [(joke, number, kind) for joke in jokes for number, (kind, _, _) in enumerate(KINDS)]

    def one(item):
        joke, number, kind = item
        theirs = firestore_count(kind_filter(kind, joke, where))
        job, accounted = jokes[joke][number], extra.get((joke, kind), 0)
        return None if job + accounted == theirs else Mismatch(joke, kind, job, accounted, theirs)

    try:
        found = [one(work[0])] if work else []
        found += parallel.each(one, work[1:], workers)
        proof.mismatches = [m for m in found if m is not None] + proof.mismatches
        proof.jokes_proven = True
    except _NoIndex as refusal:
        no_index("a joke's votes by rating", True, refusal)
    proof.queries = counted.calls
    say(f"proof: {proof.describe()}")
    return proof


def _against_report(bad, report):
    """Why the job's --report (a path or its dict) keeps the proof from standing, or None: the
    votes it removed as duplicates are votes Firestore counts, and bad lines other than those
    read here cannot be accounted for."""
    if not isinstance(report, dict):
        with open(report, encoding="utf-8") as text:
            report = json.load(text)
    if report.get("duplicates_removed"):
        return (f"the job removed {report['duplicates_removed']} duplicate votes (--dedupe), which Firestore "
                "counts: a deduplicated board cannot be held to Firestore's counts")
    if report.get("bad_lines") != bad.lines:
        return (f"the job refused {report.get('bad_lines')} lines of the snapshot, but its rules read here refuse "
                f"{bad.lines}: the refused votes cannot be accounted for")
    return None


def _project_database(database_path):
    parts = database_path.split("/")
    return (parts[1], parts[3]) if len(parts) == 4 else ("PROJECT", "(default)")
