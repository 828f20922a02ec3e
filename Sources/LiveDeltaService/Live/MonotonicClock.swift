/// Monotonic nanoseconds since the process first asked.
func monotonicNow() -> Int64 {
    let (seconds, attoseconds) = (ContinuousClock.now - clockOrigin).components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
}

private let clockOrigin = ContinuousClock.now
