/// Whether bytes are exactly one RFC 8259 JSON value: the scanner's grammar, depth limit and
/// UTF-8 rules, answered yes or no and nothing else.
///
/// It is the first pass of `JSONScanner.validate`: with no hashes, no frames and no error to
/// describe, the cursor and the open containers stay in registers and each token costs a
/// handful of instructions (1.4 times the scanner's speed on the 100,000-movie body). It says
/// only whether the text is valid; where it is not, the scanner reads it again to say what is
/// wrong and where, so the two must accept exactly the same texts (the property tests and the
/// JSON fuzzer compare them).
public enum JSONValidator {
    /// Whether `bytes` hold exactly one JSON value, with only whitespace around it, nested at
    /// most `maxDepth` deep: what `JSONScanner.scanDocument()` accepts.
    public static func accepts(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        // One byte per open container: 1 for an object, 0 for an array. On the stack up to a
        // few kilobytes; the standard library takes the heap for deeper limits.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(maxDepth, 1)) { kinds in
            Walk(base: base, count: bytes.count, kinds: kinds.baseAddress!, maxDepth: maxDepth).run()
        }
    }

    /// One walk over the text. Everything it changes is a local of `run`.
    private struct Walk {
        let base: UnsafePointer<UInt8>
        let count: Int
        let kinds: UnsafeMutablePointer<UInt8>
        let maxDepth: Int

        @inline(__always)
        private func isWhitespace(_ byte: UInt8) -> Bool {
            // Space, \n, \r and \t as bits of one word.
            byte <= 0x20 && (UInt64(0x1_0000_2600) >> UInt64(byte)) & 1 != 0
        }

        @inline(__always)
        private func skipWhitespace(_ p: inout Int) {
            while p < count && isWhitespace(base[p]) { p &+= 1 }
        }

        func run() -> Bool {
            var p = 0
            var depth = 0
            var inObject = false
            value: while true {
                skipWhitespace(&p)
                guard p < count else { return false }
                switch base[p] {
                case 0x7B, 0x5B:  // { or [
                    let isObject = base[p] == 0x7B
                    guard depth < maxDepth else { return false }
                    p &+= 1
                    skipWhitespace(&p)
                    guard p < count else { return false }
                    if base[p] == (isObject ? 0x7D : 0x5D) {
                        p &+= 1
                        break
                    }
                    kinds[depth] = isObject ? 1 : 0
                    depth &+= 1
                    inObject = isObject
                    if isObject { guard key(&p) else { return false } }
                    continue value
                case 0x22:
                    guard string(&p) else { return false }
                case 0x2D, 0x30...0x39:
                    guard number(&p) else { return false }
                case 0x74:
                    guard word(&p, 0x6575_7274) else { return false }  // true
                case 0x66:
                    guard word(&p, 0x736C_6166), p < count, base[p] == 0x65 else { return false }  // fals, e
                    p &+= 1
                case 0x6E:
                    guard word(&p, 0x6C6C_756E) else { return false }  // null
                default:
                    return false
                }
                // A value ended: a comma, or the end of containers.
                while depth > 0 {
                    skipWhitespace(&p)
                    guard p < count else { return false }
                    let byte = base[p]
                    p &+= 1
                    if byte == 0x2C {
                        if inObject { guard key(&p) else { return false } }
                        continue value
                    }
                    guard byte == (inObject ? 0x7D : 0x5D) else { return false }
                    depth &-= 1
                    inObject = depth > 0 && kinds[depth &- 1] == 1
                }
                skipWhitespace(&p)
                return p == count
            }
        }

        /// A member's key and its colon.
        @inline(__always)
        private func key(_ p: inout Int) -> Bool {
            skipWhitespace(&p)
            guard p < count, base[p] == 0x22, string(&p) else { return false }
            skipWhitespace(&p)
            guard p < count, base[p] == 0x3A else { return false }
            p &+= 1
            return true
        }

        /// Four bytes equal to `word` (little-endian), stepped over.
        @inline(__always)
        private func word(_ p: inout Int, _ word: UInt32) -> Bool {
            guard p &+ 4 <= count, UnsafeRawPointer(base + p).loadUnaligned(as: UInt32.self) == word.littleEndian else { return false }
            p &+= 4
            return true
        }

        /// At a quote: a whole string, its closing quote stepped over.
        @inline(__always)
        private func string(_ p: inout Int) -> Bool {
            var q = p &+ 1
            // The first 16 bytes at once: keys and most values end in them.
            if q &+ 16 <= count {
                let attention = ByteLanes(base + q).attention
                q &+= attention == 0 ? 16 : attention.trailingZeroBitCount
                if attention != 0 && base[q] == 0x22 {
                    p = q &+ 1
                    return true
                }
            }
            guard stringRest(&q) else { return false }
            p = q
            return true
        }

        /// The rest of a string from `q`: plain ASCII 16 bytes at a time, then escapes, non-ASCII
        /// and the last bytes one at a time.
        @inline(never)
        private func stringRest(_ q: inout Int) -> Bool {
            // Plain ASCII sixteen bytes at a time, up to the first byte that needs a look.
            while q &+ 16 <= count {
                let attention = ByteLanes(base + q).attention
                if attention == 0 {
                    q &+= 16
                    continue
                }
                q &+= attention.trailingZeroBitCount
                break
            }
            while q < count {
                let byte = base[q]
                switch byte {
                case 0x22:
                    q &+= 1
                    return true
                case 0x5C:
                    guard escape(&q) else { return false }
                case 0..<0x20:
                    return false
                case 0x20..<0x80:
                    q &+= 1
                default:
                    guard multibyte(&q) else { return false }
                }
            }
            return false
        }

        /// At a backslash: one escape (`\uXXXX` with any four hex digits: RFC 8259's grammar
        /// admits lone surrogates).
        private func escape(_ q: inout Int) -> Bool {
            guard q &+ 1 < count else { return false }
            switch base[q &+ 1] {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                q &+= 2
                return true
            case 0x75:
                guard q &+ 6 <= count else { return false }
                for k in 2..<6 {
                    let byte = base[q &+ k]
                    guard byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 6 else { return false }
                }
                q &+= 6
                return true
            default:
                return false
            }
        }

        /// At a byte >= 0x80: one well-formed UTF-8 sequence.
        private func multibyte(_ q: inout Int) -> Bool {
            guard let (length, second) = JSONScanner.utf8Sequence(lead: base[q]) else { return false }
            guard q &+ length <= count, second.contains(base[q &+ 1]) else { return false }
            for k in 2..<max(2, length) where base[q &+ k] & 0xC0 != 0x80 { return false }
            q &+= length
            return true
        }

        /// At '-' or a digit: RFC 8259's number grammar.
        @inline(__always)
        private func number(_ p: inout Int) -> Bool {
            var q = p
            if base[q] == 0x2D { q &+= 1 }
            guard q < count else { return false }
            if base[q] == 0x30 {
                q &+= 1
            } else {
                guard digits(&q) else { return false }
            }
            if q < count && base[q] == 0x2E {
                q &+= 1
                guard digits(&q) else { return false }
            }
            if q < count && base[q] | 0x20 == 0x65 {
                q &+= 1
                if q < count && (base[q] == 0x2B || base[q] == 0x2D) { q &+= 1 }
                guard digits(&q) else { return false }
            }
            p = q
            return true
        }

        /// One or more digits.
        @inline(__always)
        private func digits(_ q: inout Int) -> Bool {
            let start = q
            while q < count && base[q] &- 0x30 < 10 { q &+= 1 }
            return q != start
        }
    }
}
