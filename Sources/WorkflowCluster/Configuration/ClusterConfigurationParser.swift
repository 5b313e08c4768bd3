import Foundation
import WorkflowRemote

/// Reads and validates a cluster configuration file (JSON).
///
/// Validation is strict and complete at start: a wrong type, a missing required key, an unknown
/// key (with the known key it most likely meant), an unknown enumeration value or settings that
/// contradict each other is a `ClusterConfigurationError` naming the file, the key and what was
/// expected. A daemon that started is therefore running on exactly what the file says (unknown
/// keys are rejected because a typo would otherwise be silently ignored). The keys and what each
/// holds are the declarations' (`ClusterSetting.all`); only `workers` and `placement`, arrays of
/// objects, are read here.
package struct ClusterConfigurationParser: Sendable {
    /// The file's path, as reported in errors.
    package let file: String

    /// Creates a parser whose errors name `file`.
    package init(file: String) {
        self.file = file
    }

    /// What a file says: its settings' values, its workers and its placement rules.
    package struct Document: Sendable {
        /// The settings the file gives.
        package var values = ClusterSettingValues()
        /// `workers`.
        package var workers: [WorkerEntry] = []
        /// `placement`.
        package var placement = PlacementTable()
    }

    /// Reads and parses the file at `file` into a configuration.
    package func load() throws -> ClusterConfiguration {
        try configuration(of: try loadDocument())
    }

    /// Parses a configuration document.
    package func parse(_ data: Data) throws -> ClusterConfiguration {
        try configuration(of: try document(data))
    }

    /// Reads the file at `file`.
    package func loadDocument() throws -> Document {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw ClusterConfigurationError(noSuchFile: file)
        }
        guard !isDirectory.boolValue else {
            throw ClusterConfigurationError(file: file, key: "", expected: "a readable JSON file", found: "a directory")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason = access(file, R_OK) != 0 ? "a file this user may not read" : "an unreadable file"
            throw ClusterConfigurationError(file: file, key: "", expected: "a readable JSON file", found: reason)
        }
        return try document(data)
    }

    private func configuration(of document: Document) throws -> ClusterConfiguration {
        try ClusterSettings(file: file, values: document.values, workers: document.workers, placement: document.placement).configuration
    }

    /// Reads a document's settings, each as its declaration says.
    package func document(_ data: Data) throws -> Document {
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data)
        } catch {
            let position = JSONSyntaxLocator.firstError(in: Array(data))
            let found = position.map { "invalid JSON at line \($0.line), column \($0.column): \($0.problem)" } ?? "text that is not JSON"
            throw fail("", "a JSON object", found: found)
        }
        let root = try object(json, "")
        let declared = ClusterSetting.all.filter(\.inFile)
        var sections: [String] = []
        for setting in declared where !sections.contains(setting.section) { sections.append(setting.section) }
        try allowOnly(root, "", sections)
        _ = try required(root, ClusterSetting.coordinatorEndpoint.section)
        var document = Document()
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        for section in sections {
            guard let value = root[section] else { continue }
            switch section {
            case ClusterSetting.workers.key: document.workers = try parseWorkers(value)
            case ClusterSetting.placement.key: continue
            default:
                let object = try object(value, section)
                let members = declared.filter { $0.section == section }
                try allowOnly(object, section, members.compactMap(\.name))
                for setting in members {
                    guard let name = setting.name, let raw = object[name], !(raw is NSNull) else { continue }
                    let read = try setting.read(json: raw, file: file, directory: directory)
                    document.values[setting] = ClusterSettingValues.Given(value: read, source: file, via: nil)
                }
            }
        }
        if let placement = root[ClusterSetting.placement.key] {
            document.placement = try parsePlacement(placement, workers: document.workers)
        }
        return document
    }

    // MARK: - Sections

    private func parseWorkers(_ value: Any) throws -> [WorkerEntry] {
        guard let array = value as? [Any] else { throw fail(ClusterSetting.workers.key, ClusterSetting.workers.kind.expected, found: describe(value)) }
        var names: Set<String> = []
        return try array.enumerated().map { index, element in
            let key = "workers[\(index)]"
            let object = try object(element, key)
            try allowOnly(object, key, ["name", "pool", "capacity"])
            let name = try string(try required(object, "name", in: key), "\(key).name")
            guard !name.isEmpty else { throw fail("\(key).name", "a non-empty worker name", found: "\"\"") }
            guard names.insert(name).inserted else { throw fail("\(key).name", "a worker name not used by another worker", found: "\"\(name)\"") }
            var entry = WorkerEntry(name: name)
            if let pool = object["pool"] { entry.pool = try string(pool, "\(key).pool") }
            if let capacity = object["capacity"] {
                guard !(capacity is String), let number = capacity as? NSNumber, let integer = Int(exactly: number.doubleValue), integer > 0 else {
                    throw fail("\(key).capacity", "a positive integer", found: describe(capacity))
                }
                entry.capacity = integer
            }
            return entry
        }
    }

    private func parsePlacement(_ value: Any, workers: [WorkerEntry]) throws -> PlacementTable {
        guard let array = value as? [Any] else { throw fail(ClusterSetting.placement.key, ClusterSetting.placement.kind.expected, found: describe(value)) }
        let rules = try array.enumerated().map { index, element -> PlacementTable.Rule in
            let key = "placement[\(index)]"
            let object = try object(element, key)
            try allowOnly(object, key, ["match", "worker", "pool", "strategy"])
            let pattern = try string(try required(object, "match", in: key), "\(key).match")
            guard !pattern.isEmpty else { throw fail("\(key).match", "a type name or a path glob", found: "\"\"") }
            switch (object["worker"], object["pool"]) {
            case (let worker?, nil):
                guard object["strategy"] == nil else {
                    throw fail("\(key).strategy", "no strategy with \"worker\" (strategies choose within a pool)")
                }
                let name = try string(worker, "\(key).worker")
                guard workers.contains(where: { $0.name == name }) else {
                    let listed = workers.isEmpty ? "none is listed" : "listed: \(workers.map(\.name).joined(separator: ", "))"
                    throw fail("\(key).worker", "the name of a worker listed in \"workers\" (\(listed))", found: "\"\(name)\"")
                }
                return PlacementTable.Rule(pattern: pattern, placement: .worker(name))
            case (nil, let pool?):
                let poolName = try string(pool, "\(key).pool")
                let strategy = try object["strategy"].map { try string($0, "\(key).strategy") } ?? "least-loaded"
                switch strategy {
                case "least-loaded": return PlacementTable.Rule(pattern: pattern, placement: .pool(poolName))
                case "hashed": return PlacementTable.Rule(pattern: pattern, placement: .hashed(pool: poolName))
                default: throw fail("\(key).strategy", "\"least-loaded\" or \"hashed\"", found: "\"\(strategy)\"")
                }
            case (nil, nil):
                if object["strategy"] as? String == "any" { return PlacementTable.Rule(pattern: pattern, placement: .anyWorker) }
                if object["strategy"] as? String == "local" { return PlacementTable.Rule(pattern: pattern, placement: .local) }
                throw fail(key, "exactly one of \"worker\" or \"pool\" (or \"strategy\": \"any\" / \"local\")")
            case (_?, _?):
                throw fail(key, "exactly one of \"worker\" or \"pool\", not both")
            }
        }
        return PlacementTable(rules: rules)
    }

    // MARK: - Typed access

    private func fail(_ key: String, _ expected: String, found: String? = nil) -> ClusterConfigurationError {
        ClusterConfigurationError(file: file, key: key, expected: expected, found: found)
    }

    private func object(_ value: Any, _ key: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw fail(key, "an object", found: describe(value)) }
        return object
    }

    private func required(_ object: [String: Any], _ name: String, in parent: String = "") throws -> Any {
        guard let value = object[name] else {
            throw fail(parent.isEmpty ? name : "\(parent).\(name)", "a value (the key is required)", found: "nothing")
        }
        return value
    }

    /// Refuses a key of `object` (at `key`) not among `allowed`, naming the known key it most
    /// likely meant.
    private func allowOnly(_ object: [String: Any], _ key: String, _ allowed: [String]) throws {
        for name in object.keys.sorted() where !allowed.contains(name) {
            let guess = ClosestKey.to(name, among: allowed).map { "did you mean \"\($0)\"? " } ?? ""
            throw fail(
                key.isEmpty ? name : "\(key).\(name)", "a known key (\(guess)known keys: \(allowed.joined(separator: ", ")))", found: "no such key")
        }
    }

    private func string(_ value: Any, _ key: String) throws -> String {
        guard let text = value as? String else { throw fail(key, "a string", found: describe(value)) }
        return text
    }

    private func describe(_ value: Any) -> String {
        JSONWords.describe(value)
    }
}
