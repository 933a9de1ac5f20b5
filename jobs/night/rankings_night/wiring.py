"""What the settings make of a night, decided once before anything runs: which fetch (the shipped
one in this process, another program, or none), the snapshot the job reads, every board with its
file and its document, and which publish. Settings that contradict each other are refused (78).
A board's document is its role's, never its file's name: weekly_rankings/all_time, and for the
30-day board the New York week's (weekly_rankings/2026-W48, where older app versions read it)."""
import os
from dataclasses import dataclass

from .snapshot import parse_time
from .statuses import CONFIG, Failure
from .zone import zone

SHIPPED_FETCH = "rankings-fetch-firestore"
SHIPPED_PUBLISH = "rankings-publish-firestore"
# The 30-day board in the form app versions before the all-time board read (with week_start, week_end).
MONTHLY_FLAGS = ("--max-drop", "100", "--allow-empty", "--since", "-30d", "--week-document")


@dataclass(frozen=True)
class Board:
    role: str           # "all_time" or "monthly"
    output: str         # its file
    flags: tuple        # the job's flags for this board, after the operator's


@dataclass(frozen=True)
class Wiring:
    exports: str                    # what the job reads (the fetch's DIR/current with the shipped fetch)
    boards: tuple
    fetch_directory: str = None     # the shipped fetch's DIR: run in this process
    fetch_command: tuple = None     # another fetch program, run as a child
    publish_firestore: bool = False     # the shipped publish: run in this process
    publish_command: tuple = None   # another publish program, once per board with its path


def document_of(board, computed_at):
    """The board's document: the monthly one's is the ISO week of computed_at on New York's clocks
    (the app's getCurrentWeekId())."""
    if board.role != "monthly":
        return board.role
    year, week, _ = zone()(parse_time(computed_at) / 1e9).isocalendar()
    return f"{year:04d}-W{week:02d}"


def _same(a, b):
    """Two paths that name one place, spelt alike or not (a trailing slash, ./, a linked parent)."""
    def canonical(path):
        path = os.path.abspath(path)
        return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return canonical(a) == canonical(b)


def wire(settings, running=True):
    """The night's Wiring, or Failure(78) naming the settings that contradict each other; not
    `running` (what `plan` shows), a setting only a run needs may still be missing."""
    state = os.path.dirname(os.path.abspath(settings.output))
    fetch, publish = list(settings.fetch or []), list(settings.publish or [])
    fetch_directory = fetch_command = None
    if fetch and os.path.basename(fetch[0]) == SHIPPED_FETCH:
        if len(fetch) != 2:
            raise Failure(CONFIG, f"RANKINGS_FETCH runs {SHIPPED_FETCH} with {len(fetch) - 1} arguments: it takes "
                                  f"one, the folder its nights go in (RANKINGS_FETCH=\"{fetch[0]} DIR\")")
        fetch_directory = fetch[1]
    elif fetch:
        fetch_command = tuple(fetch)
    if fetch_directory is not None:
        exports = os.path.join(fetch_directory, "current")
        if settings.exports and not _same(settings.exports, exports):
            raise Failure(CONFIG, f"RANKINGS_EXPORTS={settings.exports} is not the folder the fetch writes "
                                  f"({exports}): the boards would be built from other votes than the fetch read; "
                                  f"set RANKINGS_EXPORTS={exports}, or leave it unset")
    elif settings.exports:
        exports = settings.exports
    else:
        raise Failure(CONFIG, f"RANKINGS_EXPORTS is not set ({settings.source}), and no RANKINGS_FETCH="
                              f"\"{SHIPPED_FETCH} DIR\" gives it")
    publish_firestore = bool(publish) and os.path.basename(publish[0]) == SHIPPED_PUBLISH
    if publish_firestore and len(publish) != 1:
        raise Failure(CONFIG, f"RANKINGS_PUBLISH runs {SHIPPED_PUBLISH} with arguments: it takes none "
                              "(the night hands it each board)")
    boards = [Board("all_time", settings.output, ())]
    if settings.monthly == "yes":
        monthly = settings.monthly_output or os.path.join(state, "monthly.json")
        if _same(monthly, settings.output):
            raise Failure(CONFIG, f"RANKINGS_MONTHLY_OUTPUT={monthly} is RANKINGS_OUTPUT's file: each board needs "
                                  "its own (leave RANKINGS_MONTHLY_OUTPUT unset for monthly.json beside it)")
        boards.append(Board("monthly", monthly, MONTHLY_FLAGS))
    if running and (fetch_directory is not None or publish_firestore) and not settings.firestore_project:
        raise Failure(CONFIG, f"RANKINGS_FIRESTORE_PROJECT is not set ({settings.source}): the Firestore "
                              f"{'fetch' if fetch_directory is not None else 'publish'} needs it")
    return Wiring(exports=exports, boards=tuple(boards), fetch_directory=fetch_directory,
                  fetch_command=fetch_command, publish_firestore=publish_firestore,
                  publish_command=None if publish_firestore or not publish else tuple(publish))
