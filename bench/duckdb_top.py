#!/usr/bin/env python3
"""The same aggregation as one SQL query in DuckDB, for the benchmark.

DuckDB stands for "just load it into an analytics engine": read_ndjson with
only the two columns the job needs (so it may skip the rest), GROUP BY, sort.
Needs the duckdb module (bench/run.sh installs it into bench/data/venv).

With --typed the input is typed Firestore Document lines (what the fetch hook
writes): the same two values read as nested struct columns,
fields.joke_id.stringValue and fields.rating.integerValue (or doubleValue).

Usage: duckdb_top.py [--threads N] [--typed] INPUT...  (files, .gz files or globs)
Prints the same shape as bench/cloud-function.js.
"""

import argparse
import json

import duckdb

TOP = 10

FLAT = """
    SELECT joke_id, rating
    FROM read_ndjson($paths,
                     columns = {'joke_id': 'VARCHAR', 'rating': 'DOUBLE'},
                     ignore_errors = true)
"""

TYPED = """
    SELECT fields.joke_id.stringValue AS joke_id,
           coalesce(TRY_CAST(fields.rating.integerValue AS DOUBLE), fields.rating.doubleValue) AS rating
    FROM read_ndjson($paths,
                     columns = {'fields': 'STRUCT(joke_id STRUCT(stringValue VARCHAR),
                                rating STRUCT(integerValue VARCHAR, doubleValue DOUBLE))'},
                     ignore_errors = true)
"""

QUERY = """
WITH read AS ({read}), events AS (
    SELECT joke_id, rating FROM read
    WHERE joke_id <> '' AND rating BETWEEN 1 AND 5
), per_joke AS (
    SELECT joke_id,
           count(*) FILTER (WHERE rating >= 4) AS hilarious,
           count(*) FILTER (WHERE rating <= 2) AS horrible
    FROM events
    GROUP BY joke_id
)
SELECT 'hilarious' AS list, joke_id, hilarious AS n FROM (
    SELECT * FROM per_joke WHERE hilarious > 0
    ORDER BY hilarious DESC, joke_id LIMIT $top)
UNION ALL
SELECT 'horrible', joke_id, horrible FROM (
    SELECT * FROM per_joke WHERE horrible > 0
    ORDER BY horrible DESC, joke_id LIMIT $top)
UNION ALL
SELECT 'total_hilarious_ratings', NULL, sum(hilarious) FROM per_joke
UNION ALL
SELECT 'total_horrible_ratings', NULL, sum(horrible) FROM per_joke
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--typed", action="store_true")
    args = parser.parse_args()

    con = duckdb.connect(config={"threads": args.threads})
    query = QUERY.replace("{read}", TYPED if args.typed else FLAT)
    rows = con.execute(query, {"paths": args.inputs, "top": TOP}).fetchall()
    result = {"hilarious": [], "horrible": [],
              "total_hilarious_ratings": 0, "total_horrible_ratings": 0}
    for kind, joke_id, n in rows:
        if joke_id is None:
            result[kind] = int(n or 0)
        else:
            result[kind].append({"joke_id": joke_id, "count": int(n)})
    # UNION ALL keeps no order of its own.
    for kind in ("hilarious", "horrible"):
        result[kind].sort(key=lambda e: (-e["count"], e["joke_id"]))
    print(json.dumps(result, separators=(",", ":"), ensure_ascii=False))


if __name__ == "__main__":
    main()
