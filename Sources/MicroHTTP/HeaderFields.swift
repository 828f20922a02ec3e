/// A request's header fields as sent, their bytes back to back in one buffer: a request makes
/// one small allocation for all of them, and a string only for a field that is asked for.
package struct HeaderFields: Sendable {
    /// Each field as its name's length and its value's length (four bytes each, little-endian),
    /// then the name's bytes and the value's.
    private var storage: [UInt8] = []

    package init() {}

    package init(_ fields: [(name: String, value: String)]) {
        for field in fields {
            var (name, value) = field
            name.withUTF8 { name in value.withUTF8 { value in append(name: name, value: value) } }
        }
    }

    mutating func reserve(_ bytes: Int) { storage.reserveCapacity(bytes) }

    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let lengths = (UInt32(truncatingIfNeeded: name.count).littleEndian, UInt32(truncatingIfNeeded: value.count).littleEndian)
        withUnsafeBytes(of: lengths) { storage.append(contentsOf: $0) }
        storage.append(contentsOf: name)
        storage.append(contentsOf: value)
    }

    /// Calls `body` with each field's name and value bytes, in order, until it returns false.
    private func forEach(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        storage.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let raw = UnsafeRawPointer(base + offset)
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
                let valueLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
                let name = UnsafeBufferPointer(start: base + offset + 8, count: nameLength)
                let value = UnsafeBufferPointer(start: base + offset + 8 + nameLength, count: valueLength)
                guard body(name, value) else { return }
                offset += 8 + nameLength + valueLength
            }
        }
    }

    /// The first value of a field, by case-insensitive name (ASCII, as field names are).
    package func first(_ name: String) -> String? {
        var found: String?
        forEach(named: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// Whether the first field called `name` (ignoring case) has the value `value`, ignoring the
    /// case of ASCII letters; false where there is no such field. No string is made.
    package func first(_ name: String, equalsIgnoringASCIICase value: String) -> Bool {
        var wanted = value
        return wanted.withUTF8 { wanted in
            var equal = false
            forEach(named: name) { given in
                equal = Self.sameIgnoringASCIICase(given, wanted)
                return false
            }
            return equal
        }
    }

    /// Every value of a field, by case-insensitive name.
    package func values(_ name: String) -> [String] {
        var found: [String] = []
        forEach(named: name) { value in
            found.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return found
    }

    /// Calls `body` with the value of each field called `name`, until it returns false.
    private func forEach(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var wanted = name
        wanted.withUTF8 { wanted in
            forEach { name, value in Self.sameIgnoringASCIICase(name, wanted) ? body(value) : true }
        }
    }

    /// All fields, as strings.
    package var all: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        forEach { name, value in
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return fields
    }

    static func sameIgnoringASCIICase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for k in 0..<a.count where a[k] != b[k] {
            let lower = a[k] | 0x20
            guard a[k] ^ b[k] == 0x20, lower >= 0x61, lower <= 0x7A else { return false }
        }
        return true
    }
}

extension String {
    /// Equal but for the case of ASCII letters (as header names and many values compare).
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var (a, b) = (self, other)
        return a.withUTF8 { a in b.withUTF8 { b in HeaderFields.sameIgnoringASCIICase(a, b) } }
    }
}
