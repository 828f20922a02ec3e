import Testing

@testable import LiveDeltaService

/// The `If-Match` parser alone (RFC 9110 §13.1.1), beside the end-to-end tests that send it.
@Suite struct IfMatchTests {
    enum Outcome: Equatable {
        case success(VersionCondition)
        case failure(ErrorCode)
    }

    func condition(_ header: String?, base: UInt64? = nil) -> Outcome {
        do throws(APIError) {
            return .success(try SessionEndpoints.condition(ifMatch: header, baseVersion: base))
        } catch {
            return .failure(error.code)
        }
    }

    @Test func tagsReadAsVersions() {
        #expect(condition(nil) == .success(.any))
        #expect(condition("*") == .success(.exists))
        #expect(condition("\"3\"") == .success(.version(3)))
        #expect(condition("3") == .success(.version(3)))
        #expect(condition(" \"3\" ,  \"4\" ") == .success(.anyOf([3, 4])))
        #expect(condition("\"3\", W/\"4\"") == .success(.version(3)))
        #expect(condition(nil, base: 7) == .success(.version(7)))
        #expect(condition("\"7\"", base: 7) == .success(.version(7)))
        #expect(condition("\"6\", \"7\"", base: 7) == .success(.version(7)))
        #expect(condition("*", base: 7) == .success(.version(7)))
    }

    @Test func whatIsNotATagIsRefused() {
        for header in ["", "\"\"", "abc", "\"3", "3\"", "\"3\",", ",\"3\"", "*, \"3\"", "\"-1\"", "\"18446744073709551616\"", "\"3.0\""] {
            #expect(condition(header) == .failure(.invalidIfMatch), "\(header)")
        }
    }

    @Test func weakTagsAloneNeverMatch() {
        #expect(condition("W/\"3\"") == .failure(.versionMismatch))
        #expect(condition("W/\"3\", W/\"4\"") == .failure(.versionMismatch))
    }

    @Test func aHeaderAndABaseVersionMustAgree() {
        #expect(condition("\"6\"", base: 7) == .failure(.invalidShape))
        #expect(condition("\"5\", \"6\"", base: 7) == .failure(.invalidShape))
    }
}
