"""The collection's documents cut into ranges of their ids that together cover every possible
id exactly once: [low, high), low None for the first range, high None for the last, each range's
ids strictly between its neighbours'. A range splits into children by one more character, so
ranges can be counted finer where a COUNT would not finish, and grouped into a few balanced
ranges to read concurrently. Pure."""

# Characters ids are usually made of, in code point order: children are cut at them.
ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
DEEPEST = 8     # no range is cut below ids of this many characters


def split(low, high):
    """The children of [low, high): cut at low + c for each character c, where that falls
    inside; [] when nothing does (the range below "-", or one too deep)."""
    base = low or ""
    if len(base) >= DEEPEST:
        return []
    cuts = [base + c for c in ALPHABET if (low is None or base + c > low) and (high is None or base + c < high)]
    if not cuts:
        return []
    edges = [low] + cuts + [high]
    return list(zip(edges, edges[1:]))


def group(ranges, counts, streams):
    """The counted ranges, in order, joined into at most `streams` runs of about equal counts,
    cut at the edges nearest each k/streams of the total: [(low, high, count)]."""
    total, edges, held = sum(counts), [], 0
    for count in counts[:-1]:
        held += count
        edges.append(held)
    cuts = sorted({min(range(len(edges)), key=lambda i: abs(edges[i] - total * k / streams))
                   for k in range(1, streams)} if edges else set())
    out, start = [], 0
    for cut in cuts + [len(counts) - 1]:
        out.append((ranges[start][0], ranges[cut][1], sum(counts[start:cut + 1])))
        start = cut + 1
    return out


def quantiles(names, total, streams):
    """Cuts into `streams` ranges at the ids found at even places of a sorted list of names
    (the previous night's snapshot): [(low, high)]."""
    if streams <= 1 or total < streams:
        return [(None, None)]
    places = {round(total * k / streams) for k in range(1, streams)}
    cuts = sorted({name for place, name in enumerate(names) if place in places})
    edges = [None] + cuts + [None]
    return list(zip(edges, edges[1:]))


def describe(low, high):
    return f"[{low or '…'}, {high or '…'})"
