/// Target 4: `migrate`. For a fuzzed file of lines: the migrated bytes are exactly the
/// reference's (each kept line byte for byte, but for its last rating's value, which becomes
/// `5` or `1`); aggregating them gives every joke the same Hilarious and Horrible counts as
/// aggregating the original; migrating them again changes nothing.

/// Collects what the migrator writes.
final class CollectedOutput: MigrationDestination {
    var bytes: [UInt8] = []
    func writeBatch(_ chunk: UnsafeRawBufferPointer) throws(OutputError) { bytes += chunk }
}

private func migrate(_ file: [UInt8], chunk: Int) -> [UInt8] {
    let destination = CollectedOutput()
    let output = BatchedOutput(to: destination)
    var migrator = LineMigrator(output: output)
    var source = MemorySource(data: file, readSizes: [])
    let reader = LineReader(chunkSize: chunk)
    do { _ = try reader.read(&source, into: &migrator) } catch { fatalError("a memory source cannot fail") }
    output.flush()
    return destination.bytes
}

/// What the product's aggregate counts in `file`.
private func aggregate(_ file: [UInt8]) -> [[UInt8]: RefRecord.Counts] {
    var source = MemorySource(data: file, readSizes: [])
    let worker = WorkerTally(dedupe: .none)
    var counter = RecordCounter(worker: worker)
    do { _ = try LineReader(chunkSize: 64).read(&source, into: &counter) } catch { fatalError("a memory source cannot fail") }
    return referenceView(of: worker.tally)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMigrate(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let chunk = Int(input.byte() % 32) + 1
    let file = input.rest

    var expected: [UInt8] = []
    for line in RefRecord.lines(of: file) {
        guard case .valid(_, let rating) = RefRecord.judge(line), case .object(let members)? = RefJSON.parse(line),
              let value = RefRecord.field(members, "rating")?.valueRange else { continue }
        let digit: UInt8
        switch RefRecord.kind(rating) {
        case .neutral: continue
        case .hilarious: digit = UInt8(ascii: "5")
        case .horrible: digit = UInt8(ascii: "1")
        }
        expected += line[..<value.lowerBound] + [digit] + line[value.upperBound...] + [0x0A]
    }
    let migrated = migrate(file, chunk: chunk)
    if migrated != expected { mismatch("migrated bytes", input: input.bytes, product: migrated, reference: expected) }

    var before = aggregate(file)
    for (id, counts) in before {
        before[id]!.neutral = 0
        if counts.hilarious + counts.horrible == 0 { before[id] = nil }
    }
    let after = aggregate(migrated)
    if after != before { mismatch("verdicts after migration", input: input.bytes, product: after, reference: before) }

    let again = migrate(migrated, chunk: chunk)
    if again != migrated { mismatch("second migration", input: input.bytes, product: again, reference: migrated) }
    return 0
}
