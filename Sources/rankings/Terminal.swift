import Glibc
import RankingsKit

/// Standard output and error for the front end: plain `write(2)`, no buffering surprises, and
/// a failed stdout write is an error (status 74) instead of a silent loss.
enum Terminal {
    static func writeStdout(_ bytes: [UInt8]) throws(OutputError) {
        do {
            try FileDescriptor.writeAll(1, bytes)
        } catch {
            throw .writeFailed(path: "standard output", reason: error.reason)
        }
    }

    /// Prints one line on standard error, control characters escaped (`LogText`): the single
    /// door every diagnostic leaves by, so no path or value in one can forge another line.
    static func printError(_ line: String) {
        var text = LogText.escaped(line) + "\n"
        text.withUTF8 { buf in try? FileDescriptor.writeAll(2, UnsafeRawBufferPointer(buf)) }
    }

    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static var output: JobOutput { JobOutput(stdout: { (bytes: [UInt8]) throws(OutputError) in try writeStdout(bytes) },
                                  stderr: printError) }

    /// The life of every command: parse the words (nil means `--help`), run, exit with the
    /// status the work returns or the one its error maps to.
    static func run<Options>(_ words: [String], help: String, synopsis: String,
                             parse: ([String]) throws(JobError) -> Options?,
                             work: (Options) throws(JobError) -> Int32) -> Never {
        let options: Options
        do {
            guard let parsed = try parse(words) else { printAndExit(help) }
            options = parsed
        } catch {
            fail(error, usage: synopsis)
        }
        do {
            exit(try work(options))
        } catch {
            fail(error)
        }
    }

    /// Prints `text` and a newline on standard output and exits 0, or 74 when the write fails
    /// (`--help > /dev/full` must not pass for success).
    static func printAndExit(_ text: String) -> Never {
        do {
            try writeStdout(Array((text + "\n").utf8))
        } catch {
            fail(.output(error))
        }
        exit(0)
    }

    /// Prints a failure as `rankings: error: …` and exits with its status.
    static func fail(_ error: JobError, usage: String? = nil) -> Never {
        printError("rankings: error: \(error.message)")
        if case .usage = error, let usage {
            printError("usage: \(usage)")
            printError("run 'rankings --help' for more")
        }
        exit(error.exitStatus)
    }
}
