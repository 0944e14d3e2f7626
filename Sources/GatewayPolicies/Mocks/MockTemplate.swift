import Foundation

/// Fills `{{...}}` in a mock's body from the request: `{{path.NAME}}` (the
/// endpoint template's parameters), `{{query.NAME}}`, `{{header.NAME}}`,
/// `{{body.FIELD}}` (a field of a JSON body; `a.b` goes down objects),
/// `{{method}}`, `{{path}}`. An unknown or missing value becomes empty text.
public enum MockTemplate {
    public static func render(_ template: String, request: MockRequestView, parameters: [String: String]) -> String {
        guard template.contains("{{") else { return template }
        var json: Any?
        var parsedJSON = false
        var output = ""
        var rest = template[...]
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                output += rest[open.lowerBound...]
                return output
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if name.hasPrefix("body.") && !parsedJSON {
                parsedJSON = true
                json = request.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
            }
            output += value(of: name, request: request, parameters: parameters, json: json)
            rest = rest[close.upperBound...]
        }
        output += rest
        return output
    }

    static func value(of name: String, request: MockRequestView, parameters: [String: String], json: Any?) -> String {
        if name == "method" { return request.method }
        if name == "path" { return String(request.path) }
        guard let dot = name.firstIndex(of: ".") else { return "" }
        let kind = name[..<dot]
        let key = String(name[name.index(after: dot)...])
        switch kind {
        case "path": return parameters[key] ?? ""
        case "query": return request.queryValue(key) ?? ""
        case "header": return request.headers.first(name: key) ?? ""
        case "body":
            var current = json
            for part in key.split(separator: ".") {
                current = (current as? [String: Any])?[String(part)]
            }
            switch current {
            case let text as String: return text
            case let number as NSNumber: return number.stringValue
            case nil: return ""
            case let other?:
                guard JSONSerialization.isValidJSONObject(other), let data = try? JSONSerialization.data(withJSONObject: other, options: [.sortedKeys]) else { return "" }
                return String(decoding: data, as: UTF8.self)
            }
        default: return ""
        }
    }
}
