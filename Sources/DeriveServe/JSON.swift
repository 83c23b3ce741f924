import DeriveLanguage

/// The language's JSON (FlyingFox has a type of the same name).
typealias JSONValue = DeriveLanguage.JSONValue
