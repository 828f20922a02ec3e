import ByteJSON
import LiveCollections

/// The `options` of a diff or a session.
package struct DiffOptions: Sendable, Equatable {
    /// How an object item finds its id: a key, or a dotted path such as `movie.id`.
    package var idKey = "id" {
        didSet { renameKeys() }
    }
    package var sectionIdKey = "id" {
        didSet { renameKeys() }
    }
    package var itemsKey = "items" {
        didSet { renameKeys() }
    }
    /// False: repeated ids are allowed and matched by occurrence.
    package var unique = true
    package var filter = ContentFilter.allFields
    package var dataCountAnimationThreshold = AnimationPolicy.defaultThreshold
    package var deltaCountAnimationThreshold = AnimationPolicy.defaultThreshold
    package var includeDeletedItems = false
    /// How answers spell their deltas.
    package var format = DeltaFormat.batch
    /// How much a changed item says.
    package var changes = ChangeDetail.rows
    /// Fields of items that hold lists of their own, each with the options it is diffed by: a
    /// changed item's list is answered with its own delta.
    package var nested: [String: DiffOptions] = [:]
    /// The most levels of lists within lists `nested` may describe.
    package static let maxNestedLevels = 4
    /// The most fields one `nested` may name (openapi.yaml's `maxProperties`).
    package static let maxNestedFields = 1_000

    package init() {}

    /// Whether items read under these options and under `other` come out the same (the
    /// thresholds, `unique` and `includeDeletedItems` act only after reading).
    func readsLike(_ other: DiffOptions) -> Bool {
        idKey == other.idKey && sectionIdKey == other.sectionIdKey && itemsKey == other.itemsKey && filter == other.filter
    }

    /// The keys as the scanner matches them, worked out once rather than per request (the
    /// defaults once only).
    private(set) var names = ScanNames.standard
    var itemsKeyBytes: [UInt8] { names.itemsName.bytes }

    /// Works the names out again after a key changed.
    private mutating func renameKeys() { names = ScanNames(idKey: idKey, sectionIdKey: sectionIdKey, itemsKey: itemsKey) }

    var policy: AnimationPolicy {
        AnimationPolicy(dataCountAnimationThreshold: dataCountAnimationThreshold, deltaCountAnimationThreshold: deltaCountAnimationThreshold)
    }

    /// A session's rules: as `policy`, and the exact delta worked out also where the thresholds
    /// keep it from the answer, so that a live window is sent its rows' delta, not its rows.
    var sessionPolicy: AnimationPolicy {
        var policy = policy
        policy.keepsExactDelta = true
        return policy
    }

    /// The most names `compareKeys` or `ignoreKeys` may list.
    package static let maxKeyListCount = 1_000

    static let keys = [
        "idKey", "sectionIdKey", "itemsKey", "unique", "compareKeys", "ignoreKeys",
        "dataCountAnimationThreshold", "deltaCountAnimationThreshold", "includeDeletedItems", "format", "changes", "nested",
    ]

    /// Reads options from their JSON object; every mistake is a 422 that points at it.
    package init(_ value: JSONValue, at pointer: JSONPointer) throws(APIError) {
        try self.init(value, at: pointer, level: 0)
    }

    private init(_ value: JSONValue, at pointer: JSONPointer, level: Int) throws(APIError) {
        guard case .object(let members) = value else {
            throw .invalidOption(pointer, "options must be an object")
        }
        for key in members.keys.map({ String(decoding: $0, as: UTF8.self) }).sorted() where !Self.keys.contains(key) {
            throw .invalidOption(pointer.appending(key), "unknown option '\(key)'; the options are \(Self.keys.joined(separator: ", "))")
        }
        let options = OptionMembers(members: members, pointer: pointer)
        idKey = try options.path("idKey") ?? idKey
        sectionIdKey = try options.path("sectionIdKey") ?? sectionIdKey
        if let items = options["itemsKey"] {
            guard let text = items.stringValue, !text.isEmpty else {
                throw .invalidOption(pointer.appending("itemsKey"), "itemsKey must be a non-empty string")
            }
            itemsKey = text
        }
        format = try options.choice("format", of: DeltaFormat.self) ?? format
        changes = try options.choice("changes", of: ChangeDetail.self) ?? changes
        if let value = options["nested"] { nested = try Self.nested(value, at: pointer.appending("nested"), level: level) }
        unique = try options.flag("unique") ?? unique
        includeDeletedItems = try options.flag("includeDeletedItems") ?? includeDeletedItems
        dataCountAnimationThreshold = try options.count("dataCountAnimationThreshold") ?? dataCountAnimationThreshold
        deltaCountAnimationThreshold = try options.count("deltaCountAnimationThreshold") ?? deltaCountAnimationThreshold
        switch (try options.keyList("compareKeys"), try options.keyList("ignoreKeys")) {
        case (nil, nil): break
        case (let only?, nil): filter = .only(KeySet(only))
        case (nil, let except?): filter = .except(KeySet(except))
        case (_?, _?):
            throw .invalidOption(pointer.appending("ignoreKeys"), "give compareKeys or ignoreKeys, not both")
        }
        // Property observers do not run inside an initializer; the defaults are set already.
        if idKey != "id" || sectionIdKey != "id" || itemsKey != "items" { renameKeys() }
    }

    /// The `nested` option at `pointer`: list fields, each with its options.
    private static func nested(_ value: JSONValue, at pointer: JSONPointer, level: Int) throws(APIError) -> [String: DiffOptions] {
        guard case .object(let fields) = value else {
            throw .invalidOption(pointer, "nested must be an object: list fields, each with its options")
        }
        guard level < maxNestedLevels else { throw .invalidOption(pointer, "nested lists go at most \(maxNestedLevels) levels deep") }
        guard fields.count <= maxNestedFields else {
            throw .invalidOption(pointer, "nested names \(fields.count) fields; it may name at most \(maxNestedFields)")
        }
        var nested: [String: DiffOptions] = [:]
        for (name, options) in fields {
            let field = String(decoding: name, as: UTF8.self)
            let at = pointer.appending(field)
            let inner = try DiffOptions(options, at: at, level: level + 1)
            guard inner.format == .batch, inner.changes == .rows, !field.isEmpty else {
                throw .invalidOption(at, "a nested list takes the answer's format and changes, and needs a field name; give them at the top")
            }
            nested[field] = inner
        }
        return nested
    }

    /// An options object's members, read by kind: each mistake is a 422 pointing at its member.
    private struct OptionMembers {
        let members: [[UInt8]: JSONValue]
        let pointer: JSONPointer

        subscript(_ key: String) -> JSONValue? { members[Array(key.utf8)] }

        /// A key, or keys joined by dots.
        func path(_ key: String) throws(APIError) -> String? {
            guard let value = self[key] else { return nil }
            guard let text = value.stringValue, !text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                throw .invalidOption(pointer.appending(key), "\(key) must be a non-empty key, or keys joined by dots")
            }
            return text
        }

        func flag(_ key: String) throws(APIError) -> Bool? {
            guard let value = self[key] else { return nil }
            guard case .bool(let flag) = value else { throw .invalidOption(pointer.appending(key), "\(key) must be true or false") }
            return flag
        }

        func count(_ key: String) throws(APIError) -> Int? {
            guard let value = self[key] else { return nil }
            guard case .number(let number) = value, let count = number.nonNegativeInt else {
                throw .invalidOption(pointer.appending(key), "\(key) must be a whole number from 0 to \(Int.max)")
            }
            return count
        }

        /// One of a string enumeration's names.
        func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, of type: Choice.Type) throws(APIError) -> Choice?
        where Choice.RawValue == String {
            guard let value = self[key] else { return nil }
            guard let name = value.stringValue, let choice = Choice(rawValue: name) else {
                throw .invalidOption(pointer.appending(key), "\(key) must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return choice
        }

        func keyList(_ key: String) throws(APIError) -> [[UInt8]]? {
            guard let value = self[key] else { return nil }
            guard case .array(let elements) = value else {
                throw .invalidOption(pointer.appending(key), "\(key) must be an array of strings")
            }
            guard elements.count <= DiffOptions.maxKeyListCount else {
                throw .invalidOption(
                    pointer.appending(key), "\(key) lists \(elements.count) names; it may list at most \(DiffOptions.maxKeyListCount)")
            }
            var keys = [[UInt8]]()
            for (index, element) in elements.enumerated() {
                guard case .string(let bytes) = element else {
                    throw .invalidOption(pointer.appending(key).appending(index), "\(key) must hold strings only")
                }
                keys.append(bytes)
            }
            return keys
        }
    }
}

/// A diff's keys as the scanner matches them: each key's path as UTF-8, and the first name of
/// each path. One reference for all of them, so that copying options (which every request
/// does several times) retains one object, not five.
final class ScanNames: Sendable, Equatable {
    let idPath: [[UInt8]]
    let idName: JSONName
    let sectionIdPath: [[UInt8]]
    let sectionIdName: JSONName
    let itemsName: JSONName

    static let standard = ScanNames(idKey: "id", sectionIdKey: "id", itemsKey: "items")

    init(idKey: String, sectionIdKey: String, itemsKey: String) {
        (idPath, idName) = Self.path(idKey)
        (sectionIdPath, sectionIdName) = Self.path(sectionIdKey)
        itemsName = JSONName(itemsKey)
    }

    private static func path(_ key: String) -> (path: [[UInt8]], first: JSONName) {
        let path = key.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
        return (path, JSONName(path[0]))
    }

    static func == (a: ScanNames, b: ScanNames) -> Bool {
        a === b || (a.idPath == b.idPath && a.sectionIdPath == b.sectionIdPath && a.itemsName == b.itemsName)
    }
}

extension CanonicalNumber {
    /// The value as an Int when it is a whole number from 0 to Int.max.
    package var nonNegativeInt: Int? {
        if digits.isEmpty { return 0 }
        guard !negative, exponent >= digits.count, exponent <= 19 else { return nil }
        var value = 0
        for k in 0..<exponent {
            let digit = k < digits.count ? Int(digits[k] - 0x30) : 0
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}
