extension InputFile {
    /// Feeds every line of this input, read through `fd` (its one descriptor, see `open`), first
    /// to last, to `consumer` on the calling thread, and returns how many lines there were and
    /// how many stored bytes were read.
    ///
    /// gzip is recognised by its magic bytes, on a pipe too. A pipe or a gzip stream is read
    /// (and inflated) on a second thread while this one scans. `aggregate` uses this for
    /// inputs it cannot split, `migrate` for every input, since it writes lines in order.
    func readLines<C: LineConsumer & ~Copyable>(descriptor fd: Int32, with reader: LineReader,
                                                progress: ProgressCounter = ProgressCounter(),
                                                into consumer: inout C) throws(InputError) -> (lines: Int, bytes: Int64) {
        switch compression {
        case .none:
            var source = DescriptorSource(fd: fd, path: displayPath, offset: 0, progress: progress)
            let lines = try reader.read(&source, into: &consumer)
            return (lines, source.bytesConsumed)
        case .gzip:
            let raw = DescriptorSource(fd: fd, path: displayPath, offset: 0, progress: progress)
            let gzip = try GzipSource(raw, path: displayPath, deferChecksums: true)
            return try Self.readAhead(gzip, with: reader, into: &consumer)
        case .detectOnRead:
            let raw = try PeekedSource(DescriptorSource(fd: fd, path: displayPath, offset: nil, progress: progress), peek: 2)
            guard raw.peeked.count == 2 && Compression.of(raw.peeked[0], raw.peeked[1]) == .gzip else {
                return try Self.readAhead(raw, with: reader, into: &consumer)
            }
            let gzip = try GzipSource(raw, path: displayPath, deferChecksums: true)
            return try Self.readAhead(gzip, with: reader, into: &consumer)
        }
    }

    /// Reads `source` on a second thread while this one scans; the read-ahead thread has
    /// stopped when this returns, so the caller may free the source.
    private static func readAhead<S: ByteSource, C: LineConsumer & ~Copyable>(
        _ source: S, with reader: LineReader, into consumer: inout C) throws(InputError) -> (lines: Int, bytes: Int64) {
        let prefetcher = Prefetcher(source)
        var ahead = PrefetchSource(prefetcher)
        defer {
            ahead.release()
            prefetcher.close()
        }
        let lines = try reader.read(&ahead, into: &consumer)
        return (lines, ahead.bytesConsumed)
    }
}
