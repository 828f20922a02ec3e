import ArgumentParser
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Every flag may be set by an environment variable instead, so that a container is
/// configured without a command line: `LIVEDELTA_` and the flag's name in capitals, `-` as `_`
/// (`--max-body-size`: `LIVEDELTA_MAX_BODY_SIZE`); a repeatable flag takes a comma-separated
/// list. A flag on the command line wins. The variables are not declared anywhere: each is
/// derived from its flag, whose declaration (name, default, help) is the only one, and the
/// variables set are handed to the argument parser as flags before it runs. A variable whose
/// value does not read as its flag's type is remembered, and start-up stops on it
/// (`Serve.validate`), rather than running silently on the default.
enum EnvironmentArguments {
    static let prefix = "LIVEDELTA_"

    private static let unreadable = Mutex<[String]>([])

    /// The variables set to values their flags do not take, as `NAME="value"`.
    static var invalid: [String] { unreadable.withLock { $0 } }

    /// An option of a command, as the environment names it.
    struct Variable {
        /// `--max-body-size`.
        let flag: String
        /// `LIVEDELTA_MAX_BODY_SIZE`.
        let name: String
        /// Whether the flag repeats (its variable holds a comma-separated list).
        let repeats: Bool
    }

    /// The options `types` declare, found as the argument parser finds them: by the names of
    /// their properties. (An option group's type is named among them: a group's own properties
    /// cannot be reached before parsing.)
    static func variables(of types: [any ParsableArguments.Type]) -> [Variable] {
        types.flatMap { type in
            Mirror(reflecting: type.init()).children.compactMap { child -> Variable? in
                guard let label = child.label, label.hasPrefix("_"), String(describing: Swift.type(of: child.value)).hasPrefix("Option<") else {
                    return nil
                }
                let words = Self.words(of: String(label.dropFirst()))
                return Variable(
                    flag: "--" + words.joined(separator: "-"), name: prefix + words.joined(separator: "_").uppercased(),
                    repeats: String(describing: Swift.type(of: child.value)).hasPrefix("Option<Array<"))
            }
        }
    }

    /// Set while a variable's value is read alone: the commands' `validate` then checks nothing
    /// (a value that is fine with the flags given beside it must not be refused on its own).
    static let readingValue = Atomic<Bool>(false)

    /// A property's name in lower-case words, split where the argument parser splits it to make
    /// a flag: before a capital that follows a small letter or a digit, and before the last
    /// capital of a run followed by a small letter (`jwksURL`: jwks, url).
    static func words(of name: String) -> [String] {
        var words: [String] = []
        var word = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, !word.isEmpty {
                let previous = characters[index - 1]
                let nextIsSmall = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsSmall) {
                    words.append(word)
                    word = ""
                }
            }
            word.append(Character(character.lowercased()))
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// `arguments` with the flags the environment sets for `command` (whose options `types`
    /// declare) added, where the command line does not give them; `only` limits them to these.
    static func applied(
        to arguments: [String], for command: any ParsableArguments.Type, declaredBy types: [any ParsableArguments.Type], only: Set<String>? = nil
    ) -> [String] {
        var added: [String] = []
        for variable in variables(of: types) where only?.contains(variable.flag) ?? true {
            guard let text = getenv(variable.name).map({ String(cString: $0) }) else { continue }
            let values = variable.repeats ? text.split(separator: ",").map(String.init) : [text]
            let flags = values.flatMap { [variable.flag, $0] }
            // Read alone first, so that a value the flag does not take is named by its variable,
            // whether or not the command line gives the flag too.
            readingValue.store(true, ordering: .relaxed)
            defer { readingValue.store(false, ordering: .relaxed) }
            do {
                _ = try command.parse(flags)
            } catch {
                unreadable.withLock { $0.append("\(variable.name)=\"\(text)\"") }
                continue
            }
            let given = arguments.contains { $0 == variable.flag || $0.hasPrefix(variable.flag + "=") }
            if !given { added += flags }
        }
        return arguments + added
    }
}
