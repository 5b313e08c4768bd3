/// Finds where a JSON text stops being valid, as a line and column an operator can go to.
///
/// Foundation's parser rejects a bad configuration file with a character offset at best, and
/// `JSONDecoder` with no position at all; an operator editing the file needs "line 7, column 12".
/// This scanner checks only the syntax (RFC 8259), builds no values, and is run only after the
/// real parser has already refused the text, to say where and why.
enum JSONSyntaxLocator {
    /// Where the first syntax error is, 1-based, and what was wrong there.
    struct Position: Equatable {
        var line: Int
        var column: Int
        var problem: String
    }

    /// Deeper nesting is reported rather than scanned (the scanner recurses per level).
    static let maxDepth = 512

    /// The first syntax error in `bytes`, or `nil` if the text is valid JSON.
    static func firstError(in bytes: [UInt8]) -> Position? {
        var scanner = Scanner(bytes: bytes)
        do throws(Failure) {
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            if scanner.index < bytes.count { throw Failure(index: scanner.index, problem: "unexpected text after the document") }
            return nil
        } catch {
            return position(of: error.index, in: bytes, problem: error.problem)
        }
    }

    private static func position(of index: Int, in bytes: [UInt8], problem: String) -> Position {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // one per character: UTF-8 continuation bytes do not count
            }
        }
        return Position(line: line, column: column, problem: problem)
    }

    private struct Failure: Error {
        var index: Int
        var problem: String
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private func fail(_ problem: String) -> Failure {
            Failure(index: index, problem: current == nil ? "the text ends early (\(problem))" : problem)
        }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < JSONSyntaxLocator.maxDepth else { throw fail("nested more than \(JSONSyntaxLocator.maxDepth) levels deep") }
            guard let byte = current else { throw fail("expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: throw fail("expected a value (an object, array, string, number, true, false or null)")
            }
        }

        private mutating func object(depth: Int) throws(Failure) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                guard current == UInt8(ascii: "\"") else { throw fail("expected a key in double quotes") }
                try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':' after the key") }
                index += 1
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    let comma = index
                    index += 1
                    skipWhitespace()
                    if current == UInt8(ascii: "}") { throw Failure(index: comma, problem: "a trailing comma before '}' (JSON allows none)") }
                case UInt8(ascii: "}"):
                    index += 1
                    return
                default: throw fail("expected ',' or '}' after a value")
                }
            }
        }

        private mutating func array(depth: Int) throws(Failure) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try value(depth: depth + 1)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    let comma = index
                    index += 1
                    skipWhitespace()
                    if current == UInt8(ascii: "]") { throw Failure(index: comma, problem: "a trailing comma before ']' (JSON allows none)") }
                case UInt8(ascii: "]"):
                    index += 1
                    return
                default: throw fail("expected ',' or ']' after a value")
                }
            }
        }

        private mutating func string() throws(Failure) {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { break }
                    if escaped == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            index += 1
                            guard let digit = current, digit.isHexDigit else { throw fail("expected four hex digits after \\u") }
                        }
                    } else if !Array("\"\\/bfnrt".utf8).contains(escaped) {
                        throw fail("an unknown escape in a string")
                    }
                    index += 1
                case 0..<0x20:
                    throw fail("a control character (such as a line break) inside a string")
                default:
                    index += 1
                }
            }
            throw fail("an unterminated string")
        }

        private mutating func number() throws(Failure) {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, first.isDigit else { throw fail("expected a digit") }
            index += 1
            if first != UInt8(ascii: "0") { while let byte = current, byte.isDigit { index += 1 } }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let byte = current, byte.isDigit else { throw fail("expected a digit after the decimal point") }
                while let byte = current, byte.isDigit { index += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, byte.isDigit else { throw fail("expected a digit in the exponent") }
                while let byte = current, byte.isDigit { index += 1 }
            }
        }

        private mutating func literal(_ word: String) throws(Failure) {
            for expected in word.utf8 {
                guard current == expected else { throw fail("expected a value (an object, array, string, number, true, false or null)") }
                index += 1
            }
        }
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    fileprivate var isHexDigit: Bool {
        isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
