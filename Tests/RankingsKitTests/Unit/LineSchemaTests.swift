import CKernels
import Testing
@testable import RankingsKit

/// The numbers Swift and C share are defined once, in Sources/CKernels/include/schema.h; the
/// Swift types that must repeat them (an enum's raw values are literals) are held to them here.
@Suite("Swift and C agree on the line fields of the schema")
struct LineSchemaTests {
    @Test func lineFieldNumbersAreTheKernels() {
        let numbers: [(Field, Int32)] = [
            (.jokeID, RK_FIELD_JOKE_ID), (.rating, RK_FIELD_RATING), (.timestamp, RK_FIELD_TIMESTAMP),
            (.weekID, RK_FIELD_WEEK_ID), (.deviceID, RK_FIELD_DEVICE_ID), (.eventID, RK_FIELD_EVENT_ID),
            (.name, RK_FIELD_NAME), (.fields, RK_FIELD_FIELDS),
        ]
        #expect(numbers.count == Field.allCases.count - 1 - 5, "every flat and document field listed")
        for (field, number) in numbers { #expect(Int32(field.rawValue) == number, "\(field)") }
        // The typed values: each the typed offset above its flat field, for exactly the flat
        // fields schema.h says have one.
        for field in Field.allCases where field != .none {
            let hasTyped = RK_FIELDS_WITH_TYPED_VALUE >> field.rawValue & 1 == 1
            #expect((field.typed != nil) == hasTyped, "\(field)")
            if let typed = field.typed { #expect(Int32(typed.rawValue) == Int32(field.rawValue) + RK_FIELD_TYPED_OFFSET) }
        }
        #expect(Field.allCases.filter { $0.typed != nil }.map(\.typed!) == [.typedJokeID, .typedRating, .typedTimestamp, .typedWeekID, .typedDeviceID])
        // Every field's two spans fit.
        #expect(Int(Field.allCases.map(\.rawValue).max()!) * 2 + 1 < Int(RK_SPANS))
        #expect(CapturedFields.spanCount == Int(RK_SPANS))
    }
}
