import Foundation

/// Any JSON value: ids, section fields, and whatever an app does not decode into its own types.
/// Numbers keep their digits: integers exactly (an id past 2^53 is written back as it was
/// read), and a number `Double` would change (an integer past `Int`, more digits than a
/// `Double` holds) as a `Decimal`, exact to 38 significant digits. A whole number is equal to,
/// and hashes as, the same integer (`.integer(2) == .number(2)`).
///
/// Foundation's `JSONDecoder` refuses a document holding a number past `Double`'s range
/// (`1e309`) whole; such an event stops following as undecodable (`FollowEnd.undecodable`).
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits `Int`, exactly.
    case integer(Int)
    /// Any other number that `Double` holds as written (the shortest text of the `Double` is the
    /// number read).
    case number(Double)
    /// A number `Double` would change, exact to 38 significant digits: an integer past `Int`,
    /// a fraction with more digits than a `Double` keeps (`0.1000000000000000055511151231257827`).
    case decimal(Decimal)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            // The Decimal read from the same text says whether the Double kept every digit.
            if let exact = try? container.decode(Decimal.self), Decimal(string: "\(value)") != exact {
                self = .decimal(exact)
            } else {
                self = .number(value)
            }
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes it as it was read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .decimal(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Equal values: a whole number equals the same integer. A decimal is never equal to a
    /// number or an integer: it is one only where no `Double` or `Int` holds it.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Int(exactly: b) == a
        case (.decimal(let a), .decimal(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    /// Hashes as `==` compares: a whole number as its integer.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        case .number(let value):
            if let whole = Int(exactly: value) { hasher.combine(whole) } else { hasher.combine(value) }
        case .decimal(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }

    /// The member `key` of an object; nil otherwise.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
