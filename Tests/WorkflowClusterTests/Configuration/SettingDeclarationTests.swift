import Foundation
import Testing
import WorkflowClusterTesting
@testable import WorkflowCluster

/// The settings' declarations (`ClusterSetting.all`) are the one source of every key, flag,
/// variable, default and rule: the docs say what they say, and every rule between settings is
/// enforced.
@Suite("Setting declarations")
struct SettingDeclarationTests {
    @Test("docs/OPERATIONS.md's settings table is the one the declarations write (scripts/settings-table.sh rewrites it)")
    func docsTableMatches() throws {
        let root = try #require(repositoryFolder(holding: "docs/OPERATIONS.md", from: #filePath))
        let document = try String(contentsOf: root.appendingPathComponent("docs/OPERATIONS.md"), encoding: .utf8)
        let updated = try #require(ClusterSettingsReference.updating(document), "OPERATIONS.md has no settings-table markers")
        #expect(updated == document, "the settings table in docs/OPERATIONS.md is out of date: run scripts/settings-table.sh")
    }

    @Test("each key, flag and variable is declared once, and each key appears in Sources/ as a declaration only")
    func declaredOnce() throws {
        let all = ClusterSetting.all
        #expect(Set(all.map(\.key)).count == all.count)
        let flags = all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
        let variables = all.compactMap(\.environment)
        #expect(Set(variables).count == variables.count)
        #expect(variables.allSatisfy { $0.hasPrefix("WORKFLOW_") })
        for setting in all {
            for rule in setting.rules { #expect(ClusterSetting.named(rule.other) != nil, "\(setting.key) names \(rule.other)") }
        }
        let root = try #require(repositoryFolder(holding: "Package.swift", from: #filePath))
        let sources = root.appendingPathComponent("Sources")
        var spellings: [String: Int] = [:]
        let files = try #require(FileManager.default.enumerator(atPath: sources.path))
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for setting in all where setting.key.contains(".") {
                let quoted = text.components(separatedBy: "\"\(setting.key)\"").count - 1
                if !path.hasSuffix("ClusterSetting+Declarations.swift") { #expect(quoted == 0, "\(path) spells \(setting.key) again") }
                spellings[setting.key, default: 0] += quoted
            }
        }
        for setting in all where setting.key.contains(".") {
            // The declaration, and each rule that names it as the setting it depends on.
            let references = all.flatMap(\.rules).filter { $0.other == setting.key }.count
            #expect(spellings[setting.key] == 1 + references, "\(setting.key)")
        }
    }

    /// A value `setting` accepts, other than `avoiding` (for a rule's "one of" on a choice).
    private static func sample(_ setting: ClusterSetting, avoiding: [String] = []) -> ClusterSetting.Value {
        switch setting.kind {
        case .choice(let words): .text(words.first { !avoiding.contains($0) } ?? words[0])
        case .boolean: .boolean(!avoiding.contains("true"))
        case .milliseconds(let least), .count(let least): .integer(max(least, 1) * 2)
        case .address: .address(GatewayAddress(host: "127.0.0.1", port: 0))
        case .endpoint: .text("ipc:///tmp/x")
        case .url: .text("http://a.example:1")
        case .origins: .origins([])
        default: .text("x")
        }
    }

    @Test("every rule between settings, violated, is a configuration error naming the setting, the other and the source")
    func everyRuleIsEnforced() throws {
        var tried = 0
        for setting in ClusterSetting.all {
            for rule in setting.rules {
                let other = try #require(ClusterSetting.named(rule.other))
                var values = ClusterSettingValues()
                let value = rule.when.map { ClusterSetting.Value.text($0[0]) } ?? Self.sample(setting)
                values[setting] = .init(value: value, source: "rules.json", via: nil)
                switch rule.need {
                case .oneOf(let allowed): values[other] = .init(value: Self.sample(other, avoiding: allowed), source: "rules.json", via: nil)
                case .absent: values[other] = .init(value: Self.sample(other), source: "rules.json", via: nil)
                case .given: break
                }
                let given = try #require(values[setting])
                #expect {
                    try values.check(rule, of: setting, given: given)
                } throws: { error in
                    let error = error as? ClusterConfigurationError
                    let words = error?.description ?? ""
                    return error?.file == "rules.json" && [setting.key, other.key].contains(error?.key ?? "") && words.contains(setting.key)
                        && words.contains(other.key)
                }
                tried += 1
            }
        }
        #expect(tried >= 15)
    }

    @Test("an unknown key names the closest known one")
    func closestKey() {
        #expect(ClosestKey.to("gatway", among: ["coordinator", "gateway", "store"]) == "gateway")
        #expect(ClosestKey.to("heartbeat_ms", among: ["interval_ms", "liveness"]) == nil)
        #expect(ClosestKey.to("intreval_ms", among: ["interval_ms", "liveness"]) == "interval_ms")
        do {
            _ = try ClusterConfigurationParser(file: "c.json").parse(Data(#"{"coordinator":{"endpoint":"ipc:///x"},"gatway":{}}"#.utf8))
        } catch let error as ClusterConfigurationError {
            #expect(error.description.contains("c.json: key 'gatway'") && error.description.contains(#"did you mean "gateway"?"#), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
