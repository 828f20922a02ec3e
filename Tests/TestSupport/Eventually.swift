import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Polls `condition` until it holds, for at most `seconds`; whether it held. What a test
/// waits for happens at once on an idle machine and may take seconds on CI's loaded two
/// cores (the whole suite runs in parallel there), so the bound is generous: it only keeps
/// a broken build from hanging, and a test that passes never waits for it.
public func eventually(within seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(10_000)
    }
}
