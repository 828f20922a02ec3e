import PropertyBased
import Testing

@testable import LiveDeltaService

/// `LazyMembers` must keep an object's members as a list of names would: set in place, added
/// and re-added at the end, removed without moving the others, the last of repeated names
/// winning where it stands.
@Suite struct LazyMembersTests {
    static func value(_ tag: Int) -> LazyJSON { .owned(Array(String(tag).utf8)) }

    static func listed(_ members: LazyMembers) -> [String] {
        members.map { String(decoding: $0.name, as: UTF8.self) + "=" + String(decoding: $0.value.bytes, as: UTF8.self) }
    }

    @Test func followsAListOfNames() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...1_000_000).array(of: 0...200)) { edits in
            var model: [(name: String, value: Int)] = []
            var members = LazyMembers()
            for (step, edit) in edits.enumerated() {
                let name = "m\(edit / 4 % 12)"
                let bytes = Array(name.utf8)
                switch edit % 4 {
                case 0:
                    model.removeAll { $0.name == name }
                    model.append((name, step))
                    members.append(bytes, Self.value(step))
                case 1:
                    if let index = model.firstIndex(where: { $0.name == name }) { model[index].value = step } else { model.append((name, step)) }
                    members.set(Self.value(step), for: bytes)
                case 2:
                    let index = model.firstIndex { $0.name == name }
                    let removed = members.remove(bytes)
                    #expect((removed.map { String(decoding: $0.bytes, as: UTF8.self) }) == index.map { String(model[$0].value) })
                    if let index { model.remove(at: index) }
                default:
                    let found = members.modify(bytes) { value in
                        value = Self.value(-step)
                        return true
                    }
                    if let index = model.firstIndex(where: { $0.name == name }) {
                        model[index].value = -step
                        #expect(found == true)
                    } else {
                        #expect(found == nil)
                    }
                }
            }
            #expect(Self.listed(members) == model.map { "\($0.name)=\($0.value)" })
            #expect(members.count == model.count)
            for (name, value) in model { #expect(members[Array(name.utf8)].map { String(decoding: $0.bytes, as: UTF8.self) } == String(value)) }
        }
    }
}
