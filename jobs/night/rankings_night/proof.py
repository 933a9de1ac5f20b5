"""The board proved against Firestore's own COUNTs at the snapshot's readTime (docs/firestore.md,
"The board's proof"): each joke's Hilarious and Horrible votes, and each kind's total, so no joke is
missing. Votes the job refuses as bad lines that Firestore's filters still match are found in the
snapshot by the job's rules (refused()) and added to the job's side by name before comparing."""
import collections
import contextlib
import json
import operator
import os
import re
import types
from dataclasses import dataclass, field

from . import parallel
from .firestore import count
from .snapshot import open_lines, parse_time
from .statuses import DATA, Failure
from .stream import Broken, conjuncts, field_value, value_key
from .transport import Refused

# Each kind the proof counts: the job's name for it (a --stats key) and its closed range. Both ends
# are needed: 6 and 0 are bad lines for the job, and NaN, which Firestore orders below every number, fails >= 1.
KINDS = (("hilarious", 4, 5), ("horrible", 1, 2))
_COMPARE = {"EQUAL": operator.eq, "LESS_THAN": operator.lt, "LESS_THAN_OR_EQUAL": operator.le,
            "GREATER_THAN": operator.gt, "GREATER_THAN_OR_EQUAL": operator.ge}


def index_fields(per_joke, where):
    """A COUNT's composite index: the equality, then the ranges' fields in name order, as Firestore orders them."""
    ranged = {f["fieldFilter"]["field"]["fieldPath"] for f in conjuncts(where) if f["fieldFilter"]["op"] != "EQUAL"}
    fields = (["joke_id"] if per_joke else []) + sorted({"rating"} | ranged)
    return fields if len(fields) > 1 else []


def read_stats(path):
    """{joke_id: (hilarious, horrible)} of the job's --stats file; Failure(DATA) naming the line."""
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
                if type(entry.get(key)) is not int or entry[key] < 0:
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
    """A document the job refused that a COUNT matches: its id, its string joke_id (or None), its kind."""
    name: str
    joke_id: object
    kind: str


@dataclass
class Refusals:
    """The snapshot's bad lines (the job's --report says `bad_lines`), and those a COUNT matches."""
    lines: int = 0
    votes: list = field(default_factory=list)


def _only(value, kind):
    """The inner value of a Firestore Value of exactly this one type, else None."""
    return value[kind] if isinstance(value, dict) and len(value) == 1 and kind in value else None


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rating(value):
    """The job's rating of a typed value: a number in 1...5, or None for a bad line."""
    integer, double = _only(value, "integerValue"), _only(value, "doubleValue")
    if isinstance(integer, str):
        body = integer.removeprefix("-")
        number = int(integer) if body.isascii() and body.isdigit() else None
    elif integer is not None:
        number = integer if _number(integer) and integer == int(integer) else None
    else:
        number = double if _number(double) else None    # "NaN", "Infinity": out of range; another string: none
    return number if number is not None and 1 <= number <= 5 else None


def _joke(value):
    joke = _only(value, "stringValue")
    try:
        return joke if isinstance(joke, str) and joke and joke.encode("utf-8") else None
    except UnicodeEncodeError:
        return None     # a lone surrogate: an invalid record for the job


def firestore_kind(fields):
    """The kind Firestore's range filters put a document's rating in, whatever the job thinks of it."""
    rating = fields.get("rating")
    if isinstance(rating, dict) and any(isinstance(inner, bool) for inner in rating.values()):
        return None     # not a number to Firestore, though Python's int(True) is one
    return next((kind for kind, _, _ in KINDS if matches(fields, kind_filter(kind))), None)


def matches(fields, where):
    """Whether Firestore's `where` matches: a range matches a value of its bound's type class only."""
    for f in (f["fieldFilter"] for f in conjuncts(where)):
        try:
            have, bound = value_key(field_value(fields, f["field"]["fieldPath"])), value_key(f["value"])
        except Broken:
            return False
        if have[0] != bound[0] or not _COMPARE[f["op"]](have, bound):
            return False
    return True


# Nearly every vote has this shape, one the job counts, so it is passed over at the disk's speed
# without decoding. Should the job still refuse such a line (a field repeated in a nested map), the
# refusals found fall short of its report: the board is unproven, never wrongly proven.
_JOKE = re.compile(rb'"joke_id":\{"stringValue":"[^"\\]+"\}')
_RATING = re.compile(rb'"rating":\{"integerValue":"[1-5]"\}')
_STAMP = re.compile(rb'"timestamp":\{"timestampValue":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'
                    rb'(\.[0-9]{1,9})?Z"\}')


def _readable_time(fields):
    try:
        parse_time(_only(fields.get("timestamp"), "timestampValue"))
        return True
    except (ValueError, TypeError, AttributeError, IndexError):
        return False


def refused(snapshot, where=None, timestamps=False):
    """The snapshot's (a path or its lines) documents the job refuses (`timestamps`: given --since
    or --as-of), and those of them the COUNTs (with `where`) match."""
    result = Refusals()
    opened = open_lines(snapshot) if isinstance(snapshot, (str, os.PathLike)) else contextlib.nullcontext(snapshot)
    with opened as lines:
        for raw in lines:
            if not raw.strip() or (_RATING.search(raw) and _JOKE.search(raw)
                                   and (not timestamps or _STAMP.search(raw))):
                continue
            try:
                document = json.loads(raw)
            except ValueError:
                document = None
            fields = document.get("fields") if isinstance(document, dict) else None
            if not isinstance(fields, dict) or not isinstance(document.get("name"), str):
                result.lines += 1
                continue
            if _joke(fields.get("joke_id")) and _rating(fields.get("rating")) is not None \
                    and (not timestamps or _readable_time(fields)):
                continue
            result.lines += 1
            kind = firestore_kind(fields)
            if kind is not None and matches(fields, where):
                joke = _only(fields.get("joke_id"), "stringValue")
                result.votes.append(Vote(document["name"].rsplit("/", 1)[-1], joke if isinstance(joke, str) else None,
                                         kind))
    return result


def _filter(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def kind_filter(kind, joke=None, where=None):
    """The REST Filter of a kind's votes (of one joke when given, within `where` when given)."""
    _, low, high = next(k for k in KINDS if k[0] == kind)
    filters = [_filter("joke_id", "EQUAL", {"stringValue": joke})] if joke is not None else []
    filters += [_filter("rating", "GREATER_THAN_OR_EQUAL", {"integerValue": str(low)}),
                _filter("rating", "LESS_THAN_OR_EQUAL", {"integerValue": str(high)})] + conjuncts(where)
    return {"compositeFilter": {"op": "AND", "filters": filters}}


@dataclass(frozen=True)
class Mismatch:
    """One count that differs (joke_id None: a kind's total); `accounted`: refused votes added to `job`."""
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
    """"proven", "mismatch" (one differs at least) or "unproven" (some not compared: `unproven` says why)."""
    read_time: str
    jokes: int
    mismatches: list = field(default_factory=list)
    unproven: list = field(default_factory=list)
    index_commands: list = field(default_factory=list)
    totals: dict = field(default_factory=dict)      # kind -> (job, accounted, firestore)
    accounted: int = 0                              # refused votes added to the job's numbers
    queries: int = 0                                # COUNTs sent (parts of a split one each)

    @property
    def status(self):
        return "mismatch" if self.mismatches else "unproven" if self.unproven else "proven"

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


def prove_board(firestore, collection, read_time, stats, bad, workers, say, where=None, report=None):
    """Proof of the board whose --stats is `stats` (a path or a dict); `bad`: refused() of the snapshot
    the job read; `report`: its --report (a path or a dict). A refusal for want of an index leaves
    what it refused unproven; any other failure is raised."""
    jokes = read_stats(stats) if isinstance(stats, (str, bytes, os.PathLike)) else dict(stats)
    proof = Proof(read_time=read_time, jokes=len(jokes), accounted=len(bad.votes))
    why = _against_report(bad, report) if report is not None else None
    if why:
        proof.unproven.append(why)
        say(f"proof: {proof.describe()}")
        return proof
    sent = []

    def run_aggregation_query(body, final=()):
        sent.append(body)
        return firestore.run_aggregation_query(body, final)
    counted = types.SimpleNamespace(database_path=firestore.database_path, run_aggregation_query=run_aggregation_query)

    def firestore_count(filter_):
        return sum(c for _, _, c in count(counted, collection, read_time, None, None, workers, say, where=filter_))

    def no_index(what, per_joke, refusal):
        if refusal.reason != "FAILED_PRECONDITION" or "index" not in str(refusal).lower():
            raise refusal
        parts = firestore.database_path.split("/")
        project, database = (parts[1], parts[3]) if len(parts) == 4 else ("PROJECT", "(default)")
        configs = " ".join(f"--field-config=field-path={f},order=ascending" for f in index_fields(per_joke, where))
        command = (f"gcloud firestore indexes composite create --project={project} --database='{database}' "
                   f"--collection-group={collection} --query-scope=COLLECTION {configs}")
        proof.unproven.append(f"Firestore cannot count {what} without a composite index ({refusal}); "
                              f"make it with: {command}")
        proof.index_commands.append(command)
        say(f"proof: {what}: unproven for want of an index; make it with: {command}")

    by_joke = collections.Counter((v.joke_id, v.kind) for v in bad.votes)
    by_kind = collections.Counter(v.kind for v in bad.votes)

    def one(item):
        joke, number, kind = item
        theirs = firestore_count(kind_filter(kind, joke, where))
        if joke is None:
            job, accounted = sum(c[number] for c in jokes.values()), by_kind[kind]
            proof.totals[kind] = (job, accounted, theirs)
        else:
            job, accounted = jokes[joke][number], by_joke[(joke, kind)]
        return None if job + accounted == theirs else Mismatch(joke, kind, job, accounted, theirs)

    found = {}
    for per_joke, what in ((False, "the totals in the window"), (True, "a joke's votes by rating")):
        work = [(joke, number, kind) for joke in (jokes if per_joke else [None])
                for number, (kind, _, _) in enumerate(KINDS)]
        try:
            # The first alone, so that a missing index costs one refusal.
            found[per_joke] = [one(work[0])] if work else []
            found[per_joke] += parallel.each(one, work[1:], workers)
        except Refused as refusal:
            found[per_joke] = []
            if not per_joke:
                proof.totals.clear()
            no_index(what, per_joke, refusal)
    proof.mismatches = [m for m in found[True] + found[False] if m is not None]
    proof.queries = len(sent)
    say(f"proof: {proof.describe()}")
    return proof


def _against_report(bad, report):
    """Why the job's --report keeps the proof from standing (duplicates removed, bad lines not these), or None."""
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
