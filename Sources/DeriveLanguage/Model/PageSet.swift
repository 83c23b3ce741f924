/// Pages or frames taken in order, as Cloudinary's `pg_` writes them: a list joined by `;`
/// whose items are a page (`3`), a range (`3-5`) or a range to the last page (`5-`).
/// An output with a page set is an animation of those pages (`pg_2-4`, `pg_1;3;5`, `pg_5-`).
public struct PageSet: Sendable, Hashable {
    /// Consecutive pages from `first` to `last`; `last` nil runs to the source's last page.
    public struct Run: Sendable, Hashable {
        public var first: Int
        public var last: Int?

        public init(first: Int, last: Int?) {
            self.first = first
            self.last = last
        }
    }

    /// Most frames one output may take, repeats included (as many as `frame` may name).
    public static let maxFrames = 10_000

    /// As written, in order.
    public var runs: [Run]

    public init(_ runs: [Run]) {
        self.runs = runs
    }

    /// `2-4;7`, `5-`, `1;3;5`; nil when it is not that grammar (empty items, a range written
    /// downwards, a page below 1). Numbers are bounded to keep arithmetic safe; the range
    /// Derive accepts is checked by the validation rules.
    public static func parse(_ text: Substring) -> PageSet? {
        func page(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.count <= 9, s.allSatisfy(\.isASCII), let n = Int(s), n >= 1 else { return nil }
            return n
        }
        var runs: [Run] = []
        for item in text.split(separator: ";", omittingEmptySubsequences: false) {
            let ends = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let first = page(ends[0]) else { return nil }
            if ends.count == 1 {
                runs.append(Run(first: first, last: first))
            } else if ends[1].isEmpty {
                runs.append(Run(first: first, last: nil))
            } else {
                guard let last = page(ends[1]), last >= first else { return nil }
                runs.append(Run(first: first, last: last))
            }
        }
        return runs.isEmpty ? nil : PageSet(runs)
    }

    public static func parse(_ text: String) -> PageSet? { parse(Substring(text)) }

    /// The same pages with touching runs joined: `2;3;4` and `2-3;4` are `2-4`, `2-4;5-` is
    /// `2-`; order and repeats are kept, as they make the animation.
    public var normalised: PageSet {
        var merged: [Run] = []
        for run in runs {
            if let previous = merged.last, let end = previous.last, run.first == end + 1 {
                merged[merged.count - 1].last = run.last
            } else {
                merged.append(run)
            }
        }
        return PageSet(merged)
    }

    /// The one page of a set that holds one page and no open range (`pg_3-3` is `pg_3`).
    public var singlePage: Int? {
        let n = normalised.runs
        guard n.count == 1, let last = n[0].last, last == n[0].first else { return nil }
        return last
    }

    /// `2-4;7`, `5-`: Cloudinary's spelling, after `pg_`.
    public var text: String {
        runs.map { run in
            guard let last = run.last else { return "\(run.first)-" }
            return last == run.first ? "\(run.first)" : "\(run.first)-\(last)"
        }.joined(separator: ";")
    }

    /// The highest page named in the set (a range's end, or an open range's start).
    public var highestNamed: Int {
        runs.map { $0.last ?? $0.first }.max() ?? 1
    }

    /// The pages in order on a source of `count` pages, at most `limit` of them; nil when
    /// there would be more.
    public func pages(count: Int, limit: Int) -> [Int]? {
        var pages: [Int] = []
        for run in runs {
            let last = run.last ?? count
            guard last >= run.first else { continue }
            guard pages.count + (last - run.first + 1) <= limit else { return nil }
            pages += Array(run.first...last)
        }
        return pages
    }
}
