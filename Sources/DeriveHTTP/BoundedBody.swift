
/// A request's body, read whole but never past `limit` bytes: a body that would be larger stops
/// being read at the first byte over (and a declared Content-Length over it before any byte),
/// and one that cannot be read (a broken chunked encoding, a connection cut short) says so
/// instead of throwing. Shared by every listener that reads bodies (the dashboard's forms,
/// `derive serve`'s uploads).
public enum BoundedBody {
    public enum Failure: Error, Sendable {
        case tooLarge
        case unreadable
    }

    public static func read(_ request: HTTPRequest, limit: Int) async -> Result<[UInt8], Failure> {
        if let length = request.headers[.contentLength].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), length > limit {
            return .failure(.tooLarge)
        }
        var body: [UInt8] = []
        do {
            for try await chunk in request.bodySequence {
                body.append(contentsOf: chunk)
                if body.count > limit { return .failure(.tooLarge) }
            }
        } catch {
            return .failure(.unreadable)
        }
        return .success(body)
    }
}
