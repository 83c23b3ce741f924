/// `JSONValue` through any Swift coder. Coders do not keep number spellings, so a number read
/// this way is an integer when it is whole (`1.0` becomes `1`); write whole-number fractions as
/// percentages ("200%") when a document travels through other JSON tools.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            self = .object(try object.allKeys.sorted { $0.stringValue < $1.stringValue }.map {
                JSONMember(key: $0.stringValue, value: try object.decode(JSONValue.self, forKey: $0))
            })
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? single.decode(Int.self) {
            self = .int(int)
        } else if let double = try? single.decode(Double.self) {
            self = Double(Int(exactly: double) ?? 0) == double ? .int(Int(double)) : .number(JSONNumber(text: "\(double)"))
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let b):
            var single = encoder.singleValueContainer()
            try single.encode(b)
        case .number(let n):
            var single = encoder.singleValueContainer()
            if let int = n.intValue { try single.encode(int) } else { try single.encode(n.doubleValue) }
        case .string(let s):
            var single = encoder.singleValueContainer()
            try single.encode(s)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: AnyKey.self)
            for member in members { try object.encode(member.value, forKey: AnyKey(member.key)) }
        }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Jobs and outputs decode through the same rules as `JSONChainDecoder`; a rejected document
/// throws its `ValidationError` unchanged, with every path and reason.
extension JobSpec: Codable {
    public init(from decoder: any Decoder) throws {
        self = try JSONChainDecoder().decodeJob(JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try ChainEncoder.json(self).encode(to: encoder)
    }
}

extension OutputSpec: Codable {
    public init(from decoder: any Decoder) throws {
        self = try JSONChainDecoder().decodeOutput(JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try ChainEncoder.json(self).encode(to: encoder)
    }
}
