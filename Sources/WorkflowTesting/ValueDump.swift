/// Writes a value out the way a failure message shows it: type-qualified enum cases on one line
/// (`TestAction.noop(10)`), structs, classes and collections one property or element per line.
///
/// workflow-swift's equality failures show a line diff of the two values (via swift-custom-dump);
/// tests written for it match those words, and a line diff is only readable when each line
/// holds one property. This package has no dependency for that, so it writes the dump itself
/// with `Mirror`: close to custom-dump's format for enums, scalars and strings, and simpler
/// elsewhere.
enum ValueDump {
    /// The dump of `value`, possibly several lines.
    static func dump(_ value: Any) -> String {
        dump(value, indent: "")
    }

    private static func dump(_ value: Any, indent: String) -> String {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return dump(wrapped, indent: indent)
        case .enum:
            return dumpCase(value, mirror: mirror, indent: indent)
        case .struct, .class:
            if mirror.children.isEmpty {
                return (value as? CustomStringConvertible).map(\.description) ?? "\(typeName(type(of: value)))()"
            }
            return block(open: "\(typeName(type(of: value)))(", close: ")", items: labelled(mirror, indent: indent), indent: indent)
        case .tuple:
            return block(open: "(", close: ")", items: labelled(mirror, indent: indent), indent: indent)
        case .collection:
            let items = mirror.children.enumerated().map { "[\($0.offset)]: \(dump($0.element.value, indent: indent + "  "))" }
            return block(open: "[", close: "]", items: items, indent: indent)
        case .set:
            let items = mirror.children.map { dump($0.value, indent: indent + "  ") }.sorted()
            return block(open: "Set([", close: "])", items: items, indent: indent)
        case .dictionary:
            let items = mirror.children.map { pair -> String in
                let parts = Mirror(reflecting: pair.value).children.map(\.value)
                guard parts.count == 2 else { return dump(pair.value, indent: indent + "  ") }
                return "\(dump(parts[0], indent: indent + "  ")): \(dump(parts[1], indent: indent + "  "))"
            }.sorted()
            return items.isEmpty ? "[:]" : block(open: "[", close: "]", items: items, indent: indent)
        default:
            if let string = value as? String { return String(reflecting: string) }
            if let character = value as? Character { return String(reflecting: character) }
            return String(describing: value)
        }
    }

    /// `Type.case` or `Type.case(payload)`, on one line as custom-dump writes enums.
    private static func dumpCase(_ value: Any, mirror: Mirror, indent: String) -> String {
        let prefix = typeName(type(of: value))
        guard let payload = mirror.children.first, let name = payload.label else {
            return "\(prefix).\(value)"
        }
        let payloadMirror = Mirror(reflecting: payload.value)
        let arguments: String
        if payloadMirror.displayStyle == .tuple {
            arguments = payloadMirror.children.map { child in
                let label = child.label.flatMap { $0.hasPrefix(".") ? nil : $0 }
                return (label.map { "\($0): " } ?? "") + oneLine(dump(child.value, indent: indent))
            }.joined(separator: ", ")
        } else {
            arguments = oneLine(dump(payload.value, indent: indent))
        }
        return "\(prefix).\(name)(\(arguments))"
    }

    private static func labelled(_ mirror: Mirror, indent: String) -> [String] {
        mirror.children.map { child in
            let label = child.label.flatMap { $0.hasPrefix(".") ? nil : $0 }
            return (label.map { "\($0): " } ?? "") + dump(child.value, indent: indent + "  ")
        }
    }

    private static func block(open: String, close: String, items: [String], indent: String) -> String {
        guard !items.isEmpty else { return open + close }
        let inner = items.map { indent + "  " + $0 }.joined(separator: ",\n")
        return "\(open)\n\(inner)\n\(indent)\(close)"
    }

    /// A nested dump squeezed onto one line (inside an enum case's parentheses).
    private static func oneLine(_ dump: String) -> String {
        dump.split(separator: "\n").map { $0.trimmingPrefix(while: { $0 == " " }) }.joined(separator: " ")
            .replacing("( ", with: "(").replacing("[ ", with: "[").replacing(" )", with: ")").replacing(" ]", with: "]")
    }

    /// A type's name without its module and without the compiler's marks for private and local
    /// types: `TestWorkflow.State` rather than `MyTests.(unknown context at $1f).TestWorkflow.State`.
    static func typeName(_ type: Any.Type) -> String {
        var name = String(reflecting: type)
        name.replace(#/\(unknown context at \$[0-9a-fA-F]+\)\./#, with: "")
        name.replace(#/\(extension in [^)]*\):/#, with: "")
        name.replace(#/\(([A-Za-z_][A-Za-z0-9_]*) in _[0-9A-Fa-f]+\)/#) { String($0.output.1) }
        // Every remaining qualified name starts with its module: drop that first component.
        name.replace(#/(^|[^A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*\.(?=[A-Za-z_(])/#) { String($0.output.1) }
        return name
    }
}
