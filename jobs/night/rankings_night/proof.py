"""The boards proved by Firestore's COUNTs, the job's refused votes added (docs/firestore.md, "The board's proof")."""
import collections
import dataclasses
import json
import time
import types

from . import parallel, snapshot
from .firestore import Query, count
from .snapshot import COLLECTION
from .statuses import DATA, Failure
from .stream import conjuncts, field_filter
from .transport import Refused

# Each kind: the job's name (a --stats key, a firestore_kind) and closed range (0, 6 and NaN are of no kind).
KINDS = (("hilarious", 4, 5), ("horrible", 1, 2))
WORKERS = 32        # COUNTs asked at once: each mostly waits on Firestore
LIMIT_FLOOR, SECONDS_A_COUNT = 300.0, 1.0   # the proof's try (a fixed 300 s failed past ~28,000 jokes)
PROVEN, UNPROVEN, MISMATCH = "proven", "unproven", "mismatch"
VOTES = ("the votes by rating", "a joke's votes by rating")     # what a COUNT counts, of all jokes or of one


def since_filter(since_ns):
    return field_filter("timestamp", "GREATER_THAN_OR_EQUAL", {"timestampValue": snapshot.format_time(since_ns)})


def kind_filter(kind, joke=None, where=None):
    """The REST Filter of a kind's votes (of one joke when given, within `where` when given)."""
    _, low, high = next(k for k in KINDS if k[0] == kind)
    filters = [field_filter("joke_id", "EQUAL", {"stringValue": joke})] if joke is not None else []
    filters += [field_filter("rating", "GREATER_THAN_OR_EQUAL", {"integerValue": str(low)}),
                field_filter("rating", "LESS_THAN_OR_EQUAL", {"integerValue": str(high)})] + conjuncts(where)
    return {"compositeFilter": {"op": "AND", "filters": filters}}


def _indexed(firestore, per_joke, where, ask):
    """(ask(), None), or (None, the gcloud command of the composite index Firestore refused it for want of)."""
    try:
        return ask(), None
    except Refused as refusal:
        if refusal.reason != "FAILED_PRECONDITION" or "index" not in str(refusal).lower():
            raise
    fields = (["joke_id"] if per_joke else []) + ["rating"] + (["timestamp"] if where else [])    # as Firestore orders
    _, project, _, database = firestore.database_path.split("/")
    return None, (f"gcloud firestore indexes composite create --project={project} --database='{database}' "
                  f"--collection-group={COLLECTION} --query-scope=COLLECTION "
                  + " ".join(f"--field-config=field-path={f},order=ascending" for f in fields))


def read_stats(path):
    """{joke_id: (hilarious, horrible)} of the job's --stats file; Failure(DATA) naming a line that is not one."""
    jokes = {}
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, 1):
            try:
                entry = json.loads(raw)
                joke, counted = entry["joke_id"], (entry["hilarious"], entry["horrible"])
                again = joke in jokes   # a joke's second line would hide its first from the COUNTs
            except (ValueError, KeyError, TypeError) as error:
                raise Failure(DATA, f"{path}:{number}: not a --stats line: {type(error).__name__}: {error}") from None
            if again or not all(type(n) is int and n >= 0 for n in counted):
                raise Failure(DATA, f"{path}:{number}: " + (f"joke {joke!r} is on an earlier line too" if again else
                                                             "not a --stats line: a count is not a whole number"))
            jokes[joke] = counted
    return jokes


def counts(stats_path):
    """The COUNTs a board's proof asks: 2 a joke of its --stats, and 2 totals (more only where one is cut)."""
    with open(stats_path, "rb") as lines:
        return 2 * sum(1 for line in lines if line.strip()) + 2


def limit(counts_):     # the seconds the proof's try may take
    return LIMIT_FLOOR + counts_ * SECONDS_A_COUNT / WORKERS


def probe(firestore, monthly, say):
    """(the indexes' commands the proof lacks, the slowest COUNT's seconds): a COUNT matching nothing an index."""
    future = since_filter(253370764800 * 10**9)     # 9999-01-01: a window no vote is in, the same index
    commands, seconds = [], None
    for per_joke, where in [(True, None)] + ([(False, future), (True, future)] if monthly else []):
        started = time.monotonic()
        query = Query(firestore, COLLECTION, where=kind_filter("hilarious", "" if per_joke else None, where))
        _, command = _indexed(firestore, per_joke, where, query.count)
        if command is None:
            seconds = max(seconds or 0.0, time.monotonic() - started)
            continue
        commands.append(command)
        say(f"the {'30-day' if where else 'all-time'} board cannot be proven: no index for {VOTES[per_joke]}"
            f"{' in its window' if where else ''}; make it with: {command}", "WARNING")
    return commands, seconds


def refusals(report):
    """(the job's refused documents that have a kind, or None; why they cannot be accounted for, or None)."""
    refused = report.get("refused") if isinstance(report, dict) else None
    if not isinstance(refused, list):
        return None, "the job's --report names no refused documents (a job older than the night)"
    if report.get("bad_lines") != len(refused):
        return None, (f"the job refused {report.get('bad_lines')} lines but its --report names {len(refused)} "
                      "documents: the refused votes cannot be accounted for")
    for number, entry in enumerate(refused, 1):
        if not isinstance(entry, dict) or entry.get("firestore_kind") not in (None, *(k for k, _, _ in KINDS)) \
                or not isinstance(entry.get("joke_id"), (str, type(None))):
            return None, f"refused document {number} of the job's --report is not one: {json.dumps(entry)[:200]}"
    return [e for e in refused if e["firestore_kind"] is not None], None


@dataclasses.dataclass
class Verdict:     # one board's proof, or all boards'
    status: str                                                 # "proven", "mismatch" (a count differs) or "unproven"
    lines: list = dataclasses.field(default_factory=list)       # one a board: "ROLE: the board is ..."
    mismatches: list = dataclasses.field(default_factory=list)  # "ROLE: joke J: hilarious 3 on the board, 4 in …"
    index_commands: list = dataclasses.field(default_factory=list)
    queries: int = 0                                            # COUNTs sent (each part of a cut one)

    def entry(self):    # what the night's history keeps of it (`rankings-night status`)
        return dict(dataclasses.asdict(self), mismatches=self.mismatches[:20])


def prove_board(firestore, read_time, stats_path, report, since_ns=None, say=lambda text: None):
    """One board's Verdict, its line without the role: unproven where an index is missing (`say`: a COUNT cut)."""
    jokes, (refused, why) = read_stats(stats_path), refusals(report)
    if why:
        return Verdict(UNPROVEN, [f"the board is unproven at readTime {read_time}: {why}"])
    by_kind = collections.Counter(e["firestore_kind"] for e in refused)
    by_joke = collections.Counter((e["joke_id"], e["firestore_kind"]) for e in refused if e["joke_id"] in jokes)
    totals = {kind: sum(c[n] for c in jokes.values()) for n, (kind, _, _) in enumerate(KINDS)}
    where, sent = since_filter(since_ns) if since_ns is not None else None, []     # sent: from the workers' threads
    counting = types.SimpleNamespace(database_path=firestore.database_path,
                                     call=lambda *call: sent.append(call) or firestore.call(*call))

    def one(item):
        joke, number, kind = item
        job, accounted = (totals[kind], by_kind[kind]) if joke is None else (jokes[joke][number], by_joke[(joke, kind)])
        theirs = sum(c for _, _, c in count(counting, COLLECTION, read_time, None, None, WORKERS, say,
                                            where=kind_filter(kind, joke, where)))
        if job + accounted != theirs:
            what = "all jokes" if joke is None else f"joke {joke}"
            extra = f" + {accounted} refused by the job" if accounted else ""
            return f"{what}: {kind} {job}{extra} on the board, {theirs} in Firestore"

    mismatches, missing = [], {}    # missing[per_joke]: the index command the totals' (False) or jokes' COUNTs lack
    for per_joke in (False, True):
        work = [(joke, n, kind) for joke in (jokes if per_joke else [None]) for n, (kind, _, _) in enumerate(KINDS)]
        # The first alone, so that a missing index costs one refusal.
        found, missing[per_joke] = _indexed(firestore, per_joke, where,
                                            lambda: [one(w) for w in work[:1]] + parallel.each(one, work[1:], WORKERS))
        mismatches += [m for m in found or [] if m is not None]
    unproven = [f"Firestore cannot count {VOTES[per_joke]} without a composite index; make it with: {command}"
                for per_joke, command in missing.items() if command]
    votes = "" if missing[False] else ", ".join(f"{totals[kind] + by_kind[kind]} {kind}" for kind, _, _ in KINDS)
    status = MISMATCH if mismatches else UNPROVEN if unproven else PROVEN
    more = f" (and {len(mismatches) - 5} more)" if len(mismatches) > 5 else ""
    agree, at = f" ({votes} votes agree)" if votes else "", f"at readTime {read_time}:"
    line = {MISMATCH: f"disagrees with Firestore {at} " + "; ".join(mismatches[:5]) + more,
            UNPROVEN: f"is unproven {at} " + "; ".join(unproven) + agree,
            PROVEN: f"is proven {at} {len(jokes)} jokes, {votes} votes as Firestore counts them"
                    + (f", {len(refused)} of them refused by the job" if refused else "") + f" ({len(sent)} COUNTs)"}
    return Verdict(status, [f"the board {line[status]}"], mismatches, [c for c in missing.values() if c], len(sent))


def prove(firestore, read_time, boards, say):
    """The Verdict of `boards` (role, stats_path, the job's --report, since_ns or None), each one's line said once."""
    verdict = Verdict(PROVEN)
    for role, stats_path, report, since_ns in boards:
        board = prove_board(firestore, read_time, stats_path, report, since_ns, say)
        verdict.lines.append(f"{role}: {board.lines[0]}")
        say(verdict.lines[-1], "INFO" if board.status == PROVEN else "WARNING")
        verdict.queries += board.queries
        verdict.mismatches += [f"{role}: {m}" for m in board.mismatches]
        verdict.index_commands += [c for c in board.index_commands if c not in verdict.index_commands]
        verdict.status = max(verdict.status, board.status, key=[PROVEN, UNPROVEN, MISMATCH].index)   # the worse
    return verdict
