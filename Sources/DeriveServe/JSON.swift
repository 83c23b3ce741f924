import DeriveLanguage

/// The language's JSON, by its short name in this module.
typealias JSONValue = DeriveLanguage.JSONValue
