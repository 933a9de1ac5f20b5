"""One database's documents at any time: the synthetic votes (synthetic.py, in one collection,
there since `genesis`) under an overlay of the writes made since, each a version stamped with its
commit time, so a read at readTime T sees exactly the versions committed at or before T. A write
that changes nothing makes no version (as Firestore keeps the document's updateTime)."""
import bisect
import json
import threading

from . import times
from .values import key, normalise_fields


class Version:
    __slots__ = ("commit", "fields", "created")

    def __init__(self, commit, fields, created):
        self.commit, self.fields, self.created = commit, fields, created


class Database:
    def __init__(self, project, database, votes=None, collection="rating_events", genesis=0):
        self.root = f"projects/{project}/databases/{database}/documents"
        self.votes, self.collection, self.genesis = votes, collection, genesis
        self.lock = threading.RLock()
        self.versions = {}       # (collection, id) -> [Version], oldest first
        self.ids = {}            # collection -> its overlaid ids, sorted
        self.base_index = {}     # (collection, id) -> the synthetic index it overlays, or None
        self.generation = 0      # bumped by every commit (caches key on it)
        self.clock = 0           # the last commit time
        self.read = 0            # the latest "now" handed out: no later commit may be stamped at or before it
        self.query_cache = {}    # query.py's overlaid documents in a query's order, by query and readTime
        self.live_cache = {}     # live()'s answers, by collection, readTime and generation
        self.replaced_cache = None   # (generation, replaced()'s answer)
        self.base_kinds = {}     # (collection, id) -> the (joke_id, rating) of the synthetic vote it overlays
        self._text_parts = None

    # -- time

    def now(self):
        """The server's now: never before the last commit, so a read without readTime sees it; and
        every later commit is stamped after it, so a read at it gives the same answer ever after."""
        with self.lock:
            self.read = max(times.now(), self.clock, self.read)
            return self.read

    # -- the synthetic votes

    def base_count(self, collection):
        return self.votes.n if self.votes is not None and collection == self.collection else 0

    def base_visible(self, collection, read_time):
        return self.base_count(collection) > 0 and read_time >= self.genesis

    def name(self, path):
        return f"{self.root}/{'/'.join(path)}"

    def vote_document(self, vote):
        """A synthetic vote (Votes.vote) as its REST Document."""
        stamp = times.format(self.genesis)
        return {"name": f"{self.root}/{self.collection}/{vote[0]}", "fields": self.votes.fields_of(vote),
                "createTime": stamp, "updateTime": stamp}

    def vote_text(self, vote):
        if self._text_parts is None:
            stamp = times.format(self.genesis)
            self._text_parts = (json.dumps(f"{self.root}/{self.collection}/", ensure_ascii=False),
                                f'"createTime": "{stamp}", "updateTime": "{stamp}"')
        return self.votes.text(vote, *self._text_parts)

    def base_document(self, i):
        return self.vote_document(self.votes.vote(i))

    def _index_of(self, path):
        if path not in self.base_index:
            index = None
            if len(path) == 2 and self.base_count(path[0]):
                i = self.votes.index_of_id(path[1])
                if i < self.votes.n and self.votes.id(i) == path[1]:
                    index = i
            self.base_index[path] = index
        return self.base_index[path]

    # -- reading

    def version_at(self, path, read_time):
        """The overlay's version of path at read_time, or None when the overlay has none yet."""
        versions = self.versions.get(path)
        if not versions:
            return None
        k = bisect.bisect_right([v.commit for v in versions], read_time)
        return versions[k - 1] if k else None

    def overridden(self, path, read_time):
        versions = self.versions.get(path)
        return bool(versions) and versions[0].commit <= read_time

    def state(self, path, read_time):
        """(fields, createTime, updateTime) of the document at read_time, or None."""
        version = self.version_at(path, read_time)
        if version is not None:
            return None if version.fields is None else (version.fields, version.created, version.commit)
        index = self._index_of(path)
        if index is not None and read_time >= self.genesis:
            return self.votes.fields(index), self.genesis, self.genesis
        return None

    def document(self, path, state):
        fields, created, updated = state
        document = {"name": self.name(path)}
        if fields:
            document["fields"] = fields
        document["createTime"] = times.format(created)
        document["updateTime"] = times.format(updated)
        return document

    def overlay_paths(self, collection):
        """The overlaid top-level documents of a collection, in name order."""
        return [(collection, i) for i in self.ids.get(collection, ())]

    def live(self, collection, read_time):
        """{key of joke_id (None: none): [(path, version)]} of the overlaid documents live at
        read_time, so that a query of one joke_id looks at that joke's only."""
        signature = (collection, read_time, self.generation)
        if signature not in self.live_cache:
            by_joke = {}
            for path in self.overlay_paths(collection):
                version = self.version_at(path, read_time)
                if version is not None and version.fields is not None:
                    joke = version.fields.get("joke_id")
                    by_joke.setdefault(None if joke is None else key(joke), []).append((path, version))
            if len(self.live_cache) >= 8:
                self.live_cache.clear()
            self.live_cache[signature] = by_joke
        return self.live_cache[signature]

    def replaced(self, collection):
        """{(joke_id, rating): [(index, the first commit that replaced it)]} of the synthetic
        votes the overlay replaces (a COUNT by kind takes them out of Votes.kinds()'s)."""
        if self.replaced_cache is None or self.replaced_cache[0] != (collection, self.generation):
            found = {}
            for path in self.overlay_paths(collection):
                index = self.base_index.get(path)
                if index is not None:
                    if path not in self.base_kinds:
                        self.base_kinds[path] = self.votes.kind(index)
                    found.setdefault(self.base_kinds[path], []).append((index, self.versions[path][0].commit))
            self.replaced_cache = (collection, self.generation), found
        return self.replaced_cache[1]

    # -- writing

    def commit(self, writes):
        """Applies writes, each (path, fields) or (path, None) for a delete, at one commit time.
        Returns (commit time, [updateTime or None for each write])."""
        writes = [(path, None if fields is None else normalise_fields(fields)) for path, fields in writes]
        with self.lock:
            commit = max(times.now(), self.clock + 1, self.read + 1)
            results = []
            for path, fields in writes:
                now = self.state(path, commit - 1)
                if fields is None:
                    if now is not None:
                        self._add(path, Version(commit, None, None))
                    results.append(None)
                    continue
                if now is not None and now[0] == fields:
                    results.append(now[2])
                    continue
                self._add(path, Version(commit, fields, now[1] if now is not None else commit))
                results.append(commit)
            self.clock = commit
            self.generation += 1
            return commit, results

    def _add(self, path, version):
        self._index_of(path)
        if path not in self.versions:
            self.versions[path] = []
            if len(path) == 2:
                bisect.insort(self.ids.setdefault(path[0], []), path[1])
        self.versions[path].append(version)
