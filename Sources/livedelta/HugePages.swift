import Glibc

/// Transparent huge pages for the large arrays a long session's commits copy.
///
/// A commit to a session of a million items builds its new item list (40 MB) while the old one
/// is still held by its history. glibc serves an allocation that large by a fresh `mmap`, so
/// every commit faulted in about 10,000 pages of 4 KiB one by one: two thirds of a one-item commit's
/// 27 ms went to the kernel (`make bench-windows`, docs/performance.md). Where the kernel gives
/// huge pages only to memory that asks (`[madvise]`, the default of most distributions),
/// glibc asks for them when its tunable `glibc.malloc.hugetlb=1` is set, which it reads only
/// when a process starts: so the server starts itself again once, with the tunable set.
/// `execv` keeps the process id, its descriptors and its arguments.
///
/// An operator who sets `GLIBC_TUNABLES` (even empty) chooses for the server: it is left alone.
enum HugePages {
    static let variable = "GLIBC_TUNABLES"
    static let tunable = "glibc.malloc.hugetlb=1"
    static let modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

    /// Returns only where the process goes on as it is: the tunable set already, chosen by the
    /// operator, of no use here (huge pages always or never given), or the new start failed.
    static func startWithTunable() {
        guard getenv(variable) == nil, kernelMode() == "madvise" else { return }
        setenv(variable, tunable, 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Still here: the start failed (no /proc, say), so serve without huge pages.
        unsetenv(variable)
    }

    /// The kernel's transparent huge page mode, the word in brackets: `always`, `madvise` or
    /// `never`; nil where the kernel has none.
    static func kernelMode() -> String? {
        guard let file = fopen(modeFile, "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 128)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]") else { return nil }
        return String(text[text.index(after: open)..<close])
    }
}
