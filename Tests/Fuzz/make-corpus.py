#!/usr/bin/env python3
"""Writes the committed seed corpus (Tests/Fuzz/corpus/TARGET/) from sample-data/: every
edge-case line and file, a few lines of the sample export, and hand-picked timestamps.
Each seed starts with the option bytes its target reads first. Run it again after changing
the fixtures or a target's input layout; libFuzzer's own findings are not committed."""
import glob, gzip, hashlib, os, shutil

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
out = os.path.join(root, "Tests", "Fuzz", "corpus")

def read(path):
    with open(os.path.join(root, path), "rb") as f:
        return f.read()

files = [read(p) for p in sorted(glob.glob(os.path.join(root, "sample-data/edge-cases/*.ndjson")))
         + sorted(glob.glob(os.path.join(root, "sample-data/migrate/*.ndjson")))]
sample = read("sample-data/rating_events.ndjson").split(b"\n")[:12]
lines = sorted({l for f in files for l in f.split(b"\n") if l} | set(sample))
sample_file = b"\n".join(sample) + b"\n"
times = [b"2025-06-01T00:00:00Z", b"2025-06-01t00:00:00.123456789123z", b"2024-02-29 23:59:60+14:00",
         b"1970-01-01T00:00:00-23:59", b"0000-01-01T00:00:00Z", b"9999-12-31T23:59:59.9Z", b"2025-02-29T00:00:00Z"]
values = [b'"%s"' % t for t in times] + [b'{"_seconds":1757881625,"_nanoseconds":643273000}',
          b'{"seconds": -5, "nanoseconds": 0}', b'{ "_seconds" : 1, "seconds": 2, "_nanoseconds": 999999999 }',
          b'{"_s\\u0065conds":9223372036854775807}', b'"2025-06-01T00:00:00\\u005a"']

typed_sample = gzip.decompress(read("sample-data/typed/rating_events.typed.ndjson.gz")).split(b"\n")[:8]
doc = b'{"name":"projects/p/databases/(default)/documents/%s","fields":{%s}}'
typed_lines = typed_sample + [doc % (n, f) for n, f in [
    (b"rating_events/e1", b'"joke_id":{"stringValue":"j\\u00e9"},"rating":{"doubleValue":4.5}'),
    (b"rating_events/e\\/2", b'"joke_id":{"stringValue":"j"},"rating":{"integerValue":5},"device_id":{"stringValue":"d"}'),
    (b"rating_events/e3", b'"joke_id":{"stringValue":"j"},"rating":{"doubleValue":"NaN"},"timestamp":{"timestampValue":"2025-01-01T00:00:00Z"}'),
    (b"rating_events/e4", b'"joke_id":{"stringValue":"j"},"rating":{"integerValue":"-3"}'),
    (b"rating_events/e5", b'"joke_id":{"bytesValue":"ag=="},"rating":{"integerValue":"1"}'),
    (b"rating_events/e6", b'"joke_id":{"stringValue":"j"},"rating":{"stringValue":"5"},"timestamp":{"nullValue":null}'),
    (b"jokes/j/rating_events/e7", b'"joke_id":{"stringValue":"j"},"rating":{"integerValue":"2"}'),
    (b"rating_events", b'"joke_id":{"stringValue":"j"},"rating":{"integerValue":"2"}'),
    (b"rating_events/e8", b'"rating":{"integerValue":"2"}'),
    # A joke id at Firestore's query limit, in the spans' form and escaped: 1,499 bytes count, 1,500 do not.
    (b"rating_events/e9", b'"joke_id":{"stringValue":"%s"},"rating":{"integerValue":"5"}' % (b"a" * 1499)),
    (b"rating_events/e10", b'"joke_id":{"stringValue":"%s"},"rating":{"integerValue":"5"}' % (b"a" * 1500)),
    (b"rating_events/e11", b'"joke_id":{"stringValue":"%s"},"rating":{"integerValue":"1"}' % (b"\\u00e9" * 750))]]

seeds = {
    "line_rules": [b"\x00" + l for l in lines] + [bytes([1 + 2 * k]) + f for k, f in enumerate(files)] + [b"\x01" + sample_file],
    "json_validity": lines + [read(p).replace(b"\n", b" ") for p in sorted(glob.glob(os.path.join(root, "sample-data/check/*.json")))],
    "timestamps": [b"\x00\x00" + t for t in times] + [b"\x01" + bytes([k]) + v for k, v in enumerate(values)]
                  + [b"\x02\x03" + l for l in sample[:4]],
    "migrate": [bytes([k]) + f for k, f in enumerate(files)] + [b"\x1f" + sample_file],
    "gzip": [bytes([m, 7, 3]) + sample_file[:600] for m in (0x60, 0x61, 0x62, 0xe3, 0x41)]
            + [b"\x04\x00\x00" + gzip.compress(sample_file[:300])[2:]],
    "typed_lines": [bytes([2 * k]) + l for k, l in enumerate(typed_lines)] + [b"\x01" + b"\n".join(typed_lines) + b"\n",
                    b"\x43" + b"\n".join(typed_sample + sample[:4]) + b"\n"],
    "parallel": [bytes([k, 5 + k, 9 + k, k]) + f for k, f in enumerate(files)] + [b"\x03\x02\x05\x01" + sample_file],
}
for target, items in seeds.items():
    d = os.path.join(out, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for item in items:
        with open(os.path.join(d, hashlib.sha1(item).hexdigest()[:16]), "wb") as f:
            f.write(item)
