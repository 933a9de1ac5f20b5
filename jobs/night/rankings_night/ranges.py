"""Ranges of document ids, [low, high) (None: open), that together cover every id once: a full
read's streams, and a COUNT that would not finish split by one more character."""

# Characters ids are usually made of, in code point order (auto-ids are uniform over all but - and _).
ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
DEEPEST = 20    # no range is cut below ids of this many characters (an auto-id's)


def _cuts(low, high, depth, prefix=""):
    """Every id of `depth` characters of ALPHABET strictly between low and high, in order."""
    if len(prefix) == depth:
        return [prefix] if (low is None or prefix > low) and (high is None or prefix < high) else []
    out = []
    for c in ALPHABET:
        if high is not None and prefix + c >= high:
            break           # it and every id after it starts at or past high
        if low is None or prefix + c >= low[:len(prefix) + 1]:     # else every id it starts is below low
            out += _cuts(low, high, depth, prefix + c)
    return out


def split(low, high):
    """The children of [low, high), cut at the shortest ids inside it ([a, b) at a-, a0... az); [] when none fits."""
    for depth in range(1, DEEPEST + 1):
        cuts = _cuts(low, high, depth)
        if cuts:
            return between(cuts, low, high)
    return []


def between(cuts, low=None, high=None):
    """The ranges ids cut [low, high) into: [(low, c1), (c1, c2), ... (cN, high)]."""
    edges = [low] + sorted(set(cuts)) + [high]
    return list(zip(edges, edges[1:]))


def even(streams):
    """`streams` ranges (up to 64) cut evenly at ALPHABET's characters, as auto-ids fall."""
    return between(ALPHABET[len(ALPHABET) * k // streams] for k in range(1, streams))


def describe(low, high):
    return f"[{low or '…'}, {high or '…'})"
