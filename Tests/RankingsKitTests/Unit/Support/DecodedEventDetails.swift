@testable import RankingsKit

/// An event's details given in full, for tests that hand events to an `EventCounter` directly.
struct DecodedEventDetails: RatingEventDetails {
    var time: EventTime = .absent
    var device: UnsafeBufferPointer<UInt8>?
    var event: UnsafeBufferPointer<UInt8>?

    func timestamp() -> EventTime { time }
    func deviceID() -> UnsafeBufferPointer<UInt8>? { device }
    func eventID() -> UnsafeBufferPointer<UInt8>? { event }
    func weekID() -> UnsafeBufferPointer<UInt8>? { nil }
}
