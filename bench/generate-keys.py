#!/usr/bin/env python3
# Memory bench data: many distinct jokes (plain) or many distinct (device, joke) keys (dedupe).
import sys, random
kind, n = sys.argv[1], int(sys.argv[2])
r = random.Random(1)
out = sys.stdout
w = out.write
if kind == "jokes":      # n distinct jokes, each rated 3 times at places spread over the file
    for rep in range(3):
        for j in range(n):
            k = (j * 7919 + rep * 104729) % n
            w('{"joke_id":"joke-%08d-xxxxxxxxxx","rating":%d,"device_id":"D%07d","timestamp":{"_seconds":%d,"_nanoseconds":0}}\n' % (k, 5 if (k+rep) % 3 else 1, j % 100000, 1700000000 + j))
else:                     # n distinct (device, joke) keys: n/4 devices x 4 jokes, each vote twice
    jokes = ["J%019d" % i for i in range(433)]
    for d in range(n // 4):
        dev = "%08X-8708-4202-B720-%012X" % (d, d * 31)
        for rep in range(2):
            for k in range(4):
                j = jokes[(d * 13 + k * 101) % 433]
                w('{"id":"%s_%s","joke_id":"%s","rating":%d,"device_id":"%s","timestamp":{"_seconds":%d,"_nanoseconds":%d}}\n' % (dev, j, j, 5 if (d+k+rep) % 2 else 1, dev, 1700000000 + d + rep, k))
