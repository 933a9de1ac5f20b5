"""The night's proof step: every board the job wrote proved against Firestore's own counts at the
snapshot's readTime (proof.py) before any is published: proven, unproven (published with a
warning, or 78 with RANKINGS_BOARD_PROOF=required) or a mismatch (a full read and another proof
after an incremental night, else 65). The job writes each board's --stats and --report beside it,
hidden; the refused votes are read from every layer of the night, the later winning by name."""
import json
import os
from dataclasses import dataclass, field

from . import layers, proof
from .fetch import COLLECTION, since_filter
from .snapshot import parse_time

PROVEN, UNPROVEN, MISMATCH = "proven", "unproven", "mismatch"
THIRTY_DAYS_NS = 30 * 86_400 * 10**9


@dataclass
class Verdict:
    status: str
    lines: list = field(default_factory=list)           # one a board, as proof.describe() says it
    mismatches: list = field(default_factory=list)      # "BOARD: joke J: hilarious 3 on the board, 4 in Firestore"
    index_commands: list = field(default_factory=list)
    queries: int = 0

    def entry(self):
        """What the night's history keeps of it (`rankings-night status`)."""
        return {"status": self.status, "lines": self.lines, "mismatches": self.mismatches[:20],
                "index_commands": self.index_commands, "queries": self.queries}


def files(board):
    """The job's --stats and --report for a board: hidden, beside its file."""
    directory, name = os.path.split(os.path.abspath(board.output))
    stem = name.removesuffix(".json")
    return os.path.join(directory, f".{stem}.stats.ndjson"), os.path.join(directory, f".{stem}.report.json")


def job_flags(board):
    stats, report = files(board)
    return ["--stats", stats, "--report", report]


def window(board, record, computed_at):
    """(the COUNTs' filter, whether the job read timestamps): the later of the fetch's window and the board's."""
    bounds = [parse_time(record["since"])] if record.get("since") else []
    if "--since" in board.flags:
        bounds.append(parse_time(computed_at) - THIRTY_DAYS_NS)
    return (since_filter(max(bounds)), "--since" in board.flags) if bounds else (None, False)


def prove(firestore, record, folder, boards, computed_at, workers, say):
    """The Verdict over every board at record's readTime; raises what Firestore's calls raise."""
    verdict = Verdict(PROVEN)
    if record.get("method") != "rest":
        verdict.status = UNPROVEN
        verdict.lines.append(f"the boards are unproven: the {record.get('method')} method's night holds no "
                             "snapshot of documents to account the job's refused votes by name")
        return verdict
    for board in boards:
        stats, report = files(board)
        where, timestamps = window(board, record, computed_at)
        try:
            with open(report, encoding="utf-8") as text:
                said = json.load(text)
        except (OSError, ValueError):
            said = None     # unread: the proof says why
        if isinstance(said, dict) and said.get("bad_lines") == 0:
            # The job refused nothing, so there is nothing to find: no pass over the snapshot.
            bad, report = proof.Refusals(), said
        else:
            bad = proof.refused(layers.lines(folder, layers.of(record)), where=where, timestamps=timestamps)
        result = proof.prove_board(firestore, COLLECTION, record["read_time"], stats, bad, workers, say,
                                   where=where, report=report)
        verdict.queries += result.queries
        verdict.lines.append(f"{board.role}: {result.describe()}")
        verdict.mismatches += [f"{board.role}: {m.describe()}" for m in result.mismatches]
        verdict.index_commands += [c for c in result.index_commands if c not in verdict.index_commands]
        if result.status == MISMATCH or (result.status == UNPROVEN and verdict.status == PROVEN):
            verdict.status = result.status
    return verdict
