import Foundation

extension ClusterSetting {
    /// Reads the setting from the file: `value` as JSON decoded it; a relative path is resolved
    /// against `directory` (the file's).
    func read(json value: Any, file: String, directory: URL) throws(ClusterConfigurationError) -> Value {
        func fail(_ found: String? = nil) -> ClusterConfigurationError {
            ClusterConfigurationError(file: file, key: key, expected: kind.expected, found: found ?? JSONWords.describe(value))
        }
        switch kind {
        case .boolean:
            guard !(value is String), let flag = value as? Bool else { throw fail() }
            return .boolean(flag)
        case .milliseconds(let least), .count(let least):
            guard !(value is String), let number = value as? NSNumber, let integer = Int(exactly: number.doubleValue)
            else { throw fail() }
            guard integer >= least else { throw fail("\(integer)") }
            return .integer(integer)
        case .endpoints:
            guard let list = value as? [Any], !list.isEmpty else { throw fail() }
            var endpoints: [String] = []
            for (index, item) in list.enumerated() {
                guard let text = item as? String else {
                    throw ClusterConfigurationError(file: file, key: "\(key)[\(index)]", expected: "a string", found: JSONWords.describe(item))
                }
                endpoints.append(try ClusterEndpoint.validated(text, key: "\(key)[\(index)]", source: file))
            }
            return .list(endpoints)
        case .origins:
            guard let list = value as? [Any] else { throw fail() }
            var origins: [GatewayOrigin] = []
            for (index, item) in list.enumerated() {
                guard let text = item as? String else {
                    throw ClusterConfigurationError(file: file, key: "\(key)[\(index)]", expected: "a string", found: JSONWords.describe(item))
                }
                origins.append(try GatewayOrigin.parsing(text, key: "\(key)[\(index)]", source: file))
            }
            return .origins(origins)
        case .structured:
            throw fail()
        case .text, .path, .workingDirectoryPath, .url, .endpoint, .address, .choice:
            guard let text = value as? String else {
                throw ClusterConfigurationError(file: file, key: key, expected: "a string: \(kind.expected)", found: JSONWords.describe(value))
            }
            let read = try self.read(text: text, source: file, via: nil)
            if case .path = kind, !text.hasPrefix("/") { return .text(directory.appendingPathComponent(text).path) }
            return read
        }
    }

    /// Reads the setting from the command line or the environment (`via` names the flag or the
    /// variable, for errors): the same checks as the file's.
    func read(text: String, source: String, via: String?) throws(ClusterConfigurationError) -> Value {
        func fail() -> ClusterConfigurationError {
            ClusterConfigurationError(file: source, key: key, expected: kind.expected, found: "\"\(text)\"", via: via)
        }
        switch kind {
        case .text(let nonEmpty):
            guard !nonEmpty || !text.isEmpty else { throw fail() }
            return .text(text)
        case .path, .workingDirectoryPath, .url:
            guard !text.isEmpty else { throw fail() }
            return .text(text)
        case .endpoint:
            do {
                return .text(try ClusterEndpoint.validated(text, key: key, source: source))
            } catch {
                throw fail()
            }
        case .address:
            do {
                return .address(try GatewayAddress.parsing(text, key: key, source: source))
            } catch {
                throw fail()
            }
        case .milliseconds(let least), .count(let least):
            guard let integer = Int(text), integer >= least else { throw fail() }
            return .integer(integer)
        case .choice(let words):
            // `INFO` is `info`: a word's case is not worth a refusal.
            guard words.contains(text.lowercased()) else { throw fail() }
            return .text(text.lowercased())
        case .boolean:
            guard let flag = Bool(text) else { throw fail() }
            return .boolean(flag)
        case .origins:
            var origins: [GatewayOrigin] = []
            for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                do {
                    origins.append(try GatewayOrigin.parsing(item, key: key, source: source))
                } catch {
                    throw ClusterConfigurationError(file: error.file, key: error.key, expected: error.expected, found: error.found, via: via)
                }
            }
            return .origins(origins)
        case .endpoints, .structured:
            throw fail()
        }
    }

    /// The `--help` of the setting's flag: what it does, then what it overrides.
    package var argumentHelp: String {
        let overridden = [inFile ? key : nil, environment].compactMap { $0 }
        let suffix = overridden.isEmpty ? "" : " Overrides \(overridden.joined(separator: " and "))."
        let defaulted = defaultValue.isEmpty ? "" : " Default: \(defaultValue)."
        return help + defaulted + suffix
    }
}
