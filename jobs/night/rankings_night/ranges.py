"""Ranges of document ids, [low, high) (None: open), that together cover every id once: split by one
more character where a COUNT would not finish, grouped into a few balanced ranges to read at once."""
import itertools

# Characters ids are usually made of, in code point order: children are cut at them.
ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
DEEPEST = 20    # no range is cut below ids of this many characters (an auto-id's)


def _cuts(low, high, depth):
    """Every id of `depth` characters of ALPHABET strictly between low and high, in order."""
    out = []

    def walk(prefix):
        if len(prefix) == depth:
            if (low is None or prefix > low) and (high is None or prefix < high):
                out.append(prefix)
            return
        for c in ALPHABET:
            s = prefix + c
            if high is not None and s >= high:
                return          # it and every id after it starts at or past high
            if low is None or s >= low[:len(s)]:    # else every id it starts is below low
                walk(s)

    walk("")
    return out


def split(low, high, parts=None):
    """The children of [low, high), cut at the shortest ids inside it ([a, b) at a-, a0... az); with
    `parts`, about that many, evenly chosen (one character deeper where too few). [] when none fits."""
    for depth in range(1, DEEPEST + 1):
        cuts = _cuts(low, high, depth)
        if cuts:
            break
    else:
        return []
    if parts:
        if len(cuts) < parts - 1 and depth < DEEPEST:
            cuts = sorted(set(cuts) | set(_cuts(low, high, depth + 1)))
        if len(cuts) > parts - 1:
            step = len(cuts) / parts
            cuts = sorted({cuts[min(int(step * k), len(cuts) - 1)] for k in range(1, parts)})
    edges = [low] + cuts + [high]
    return list(zip(edges, edges[1:]))


def balance(counted, streams, count_all, rounds=2 * DEEPEST):
    """Counted ranges [(low, high, count)] cut finer where a stream's boundary (each k/streams of the
    total) falls inside one by over an eighth of a share, then grouped into at most `streams`.
    count_all(ranges) gives each one's [(low, high, count)]: a round's COUNTs are asked at once, each
    range cut into children of about a quarter of a share."""
    finest = list(counted)
    total = sum(c for _, _, c in finest)
    share = total / max(streams, 1)
    marks = [total * k / streams for k in range(1, streams)]
    for _ in range(rounds):
        wanted, held = [], 0
        for part in finest:
            start, end = held, held + part[2]
            held = end
            if any(start + share / 8 < mark < end - share / 8 for mark in marks):
                children = split(part[0], part[1], parts=max(2, -(-part[2] * 4 // max(int(share), 1))))
                if children:
                    wanted.append((part, children))
        if not wanted:
            break
        answers = iter(count_all([child for _, children in wanted for child in children]))
        finer = {part: [piece for _ in children for piece in next(answers)] for part, children in wanted}
        finest = [piece for part in finest for piece in finer.get(part, [part])]
    return group([(low, high) for low, high, _ in finest], [c for _, _, c in finest], streams)


def group(ranges, counts, streams):
    """The ranges joined into at most `streams` runs cut at the edges nearest each k/streams of the total."""
    total, edges = sum(counts), list(itertools.accumulate(counts[:-1]))
    cuts = sorted({min(range(len(edges)), key=lambda i: abs(edges[i] - total * k / streams))
                   for k in range(1, streams)} if edges else set())
    out, start = [], 0
    for cut in cuts + [len(counts) - 1]:
        out.append((ranges[start][0], ranges[cut][1], sum(counts[start:cut + 1])))
        start = cut + 1
    return out


def quantiles(names, total, streams):
    """[(low, high)]: `streams` ranges cut at even places of sorted names (the previous snapshot's)."""
    if streams <= 1 or total < streams:
        return [(None, None)]
    places = {round(total * k / streams) for k in range(1, streams)}
    cuts = sorted({name for place, name in enumerate(names) if place in places})
    edges = [None] + cuts + [None]
    return list(zip(edges, edges[1:]))


def describe(low, high):
    return f"[{low or '…'}, {high or '…'})"
