extension InputFile {
    /// Feeds every line of this input, first to last, to `consumer` on the calling thread.
    ///
    /// `migrate` writes lines in input order, so it cannot use `Aggregator`'s split reading;
    /// gzip is detected here the way `Aggregator` detects it (by magic bytes, also on a pipe).
    func readLines<C: LineConsumer & ~Copyable>(with reader: LineReader, into consumer: inout C) throws(InputError) {
        switch kind {
        case .regular:
            var source = FileRangeSource(fd: fd, path: displayPath, offset: 0)
            try reader.read(&source, into: &consumer)
        case .gzip:
            try Self.inflate(FileRangeSource(fd: fd, path: displayPath, offset: 0), path: displayPath,
                             with: reader, into: &consumer)
        case .stream:
            var source = try PeekedSource(StreamSource(fd: fd, path: displayPath), peek: 2)
            if source.peeked.count == 2 && GzipMagic.matches(source.peeked[0], source.peeked[1]) {
                try Self.inflate(source, path: displayPath, with: reader, into: &consumer)
            } else {
                try reader.read(&source, into: &consumer)
            }
        }
    }

    private static func inflate<S: ByteSource, C: LineConsumer & ~Copyable>(
        _ compressed: S, path: String, with reader: LineReader, into consumer: inout C) throws(InputError) {
        var source = try GzipSource(compressed, path: path)
        defer { source.close() }
        try reader.read(&source, into: &consumer)
    }
}
