# The aggregation in jq, for the benchmark: `jq -n -c -f bench/tally.jq FILE`.
# jq is what one reaches for first on NDJSON; -n with `inputs` streams the
# file instead of slurping it, so memory stays flat like the other tools'.
def valid:
  type == "object"
  and (.joke_id | type == "string" and length > 0)
  and (.rating | type == "number" and . >= 1 and . <= 5);

def top($counts):
  $counts | to_entries | sort_by(-.value, .key) | .[:10]
  | map({joke_id: .key, count: .value});

reduce (inputs | select(valid)) as $e ({h: {}, b: {}, th: 0, tb: 0};
  if $e.rating >= 4 then .h[$e.joke_id] += 1 | .th += 1
  elif $e.rating <= 2 then .b[$e.joke_id] += 1 | .tb += 1
  else . end)
| {hilarious: top(.h), horrible: top(.b),
   total_hilarious_ratings: .th, total_horrible_ratings: .tb}
