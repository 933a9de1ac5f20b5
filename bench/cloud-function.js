#!/usr/bin/env node
// The Cloud Function's aggregation, lifted out of Firestore and pointed at an
// NDJSON export, so the benchmark compares `rankings aggregate` with what
// production does today rather than with a straw man: parse every record
// with JSON.parse, count per joke_id, sort by count, keep the first ten.
//
// Usage: node bench/cloud-function.js FILE...   (a .gz name is gunzipped)
// Prints {"hilarious":[{joke_id,count}],"horrible":[...],"total_...":N}.
'use strict';

const fs = require('fs');
const readline = require('readline');
const zlib = require('zlib');

const TOP = 10;

async function tallyFile(path, hilarious, horrible, totals) {
  let input = fs.createReadStream(path, { highWaterMark: 1 << 20 });
  if (path.endsWith('.gz')) input = input.pipe(zlib.createGunzip());
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    // The Swift tool's validity rule, so results compare on odd input too
    // (bar invalid UTF-8, which Node replaces rather than rejects); on
    // generated exports it never rejects anything.
    if (event === null || typeof event !== 'object' || Array.isArray(event)) continue;
    const { joke_id: jokeId, rating } = event;
    if (typeof jokeId !== 'string' || jokeId === '') continue;
    if (typeof rating !== 'number' || !(rating >= 1 && rating <= 5)) continue;
    if (rating >= 4) {
      hilarious.set(jokeId, (hilarious.get(jokeId) || 0) + 1);
      totals.hilarious++;
    } else if (rating <= 2) {
      horrible.set(jokeId, (horrible.get(jokeId) || 0) + 1);
      totals.horrible++;
    }
  }
}

function top(counts) {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([joke_id, count]) => ({ joke_id, count }));
}

function inputs(paths) {
  // A directory stands for its files, as with the Swift tool's shards.
  return paths.flatMap((p) =>
    fs.statSync(p).isDirectory()
      ? fs.readdirSync(p).sort().map((name) => `${p}/${name}`)
      : [p]);
}

async function main() {
  const paths = process.argv.slice(2);
  if (paths.length === 0) {
    console.error('usage: node bench/cloud-function.js FILE...');
    process.exit(64);
  }
  const hilarious = new Map();
  const horrible = new Map();
  const totals = { hilarious: 0, horrible: 0 };
  for (const path of inputs(paths)) {
    await tallyFile(path, hilarious, horrible, totals);
  }
  process.stdout.write(JSON.stringify({
    hilarious: top(hilarious),
    horrible: top(horrible),
    total_hilarious_ratings: totals.hilarious,
    total_horrible_ratings: totals.horrible,
  }) + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
