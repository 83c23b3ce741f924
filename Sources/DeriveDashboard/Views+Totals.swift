import DeriveLanguage
import DeriveJobs
import Foundation

/// Completed and failed jobs over time, drawn on the server as SVG bars under a labelled time
/// axis (no chart library: the Content-Security-Policy allows no script but Derive's own).
extension Views {
    /// A window the totals page offers: how far back, in buckets of how long, and every how
    /// many buckets the axis has a labelled tick.
    public struct TotalsWindow: Sendable, Equatable {
        public var hours: Int
        public var bucket: Int
        public var tickEvery: Int

        public static let lastHour = TotalsWindow(hours: 1, bucket: 60, tickEvery: 10)
        public static let lastDay = TotalsWindow(hours: 24, bucket: 900, tickEvery: 16)
        public static let all = [lastHour, lastDay]

        public var buckets: Int { hours * 3600 / bucket }

        /// The first bucket's start: the window ends with the bucket that holds `now`.
        public func start(at now: Date) -> Date {
            let width = Double(bucket)
            return Date(timeIntervalSince1970: (now.timeIntervalSince1970 / width).rounded(.down) * width - Double(buckets - 1) * width)
        }
    }

    /// One line of a chart: completed and failed jobs per bucket, oldest first.
    struct Series {
        var completed: [Int]
        var failed: [Int]
        var cancelled = 0
        var total: Int { completed.reduce(0, +) + failed.reduce(0, +) }

        init(buckets: Int) {
            completed = [Int](repeating: 0, count: buckets)
            failed = [Int](repeating: 0, count: buckets)
        }
    }

    /// How many queues and workers get a chart each; the rest are summed in one.
    static let chartsShown = 12

    /// `/totals`: every queue and every worker, completed and failed per bucket over the
    /// window, from the archive (`QueueInspector.finishedTotals`). `capped`: the store returned
    /// as many groups as asked for, so the oldest buckets may be missing some.
    public static func totals(_ totals: [FinishedTotal], window: TotalsWindow, now: Date, capped: Bool = false) -> String {
        let start = window.start(at: now)
        var all = Series(buckets: window.buckets)
        var queues: [String: Series] = [:], workers: [String: Series] = [:]
        for total in totals {
            let index = Int(((total.start.timeIntervalSince1970 - start.timeIntervalSince1970) / Double(window.bucket)).rounded(.down))
            guard (0..<window.buckets).contains(index) else { continue }
            func add(_ series: inout Series) {
                switch total.outcome {
                case .completed: series.completed[index] += total.jobs
                case .failed: series.failed[index] += total.jobs
                default: series.cancelled += total.jobs
                }
            }
            add(&all)
            add(&queues[total.queue, default: Series(buckets: window.buckets)])
            add(&workers[total.worker ?? "no worker (cancelled while waiting)", default: Series(buckets: window.buckets)])
        }
        let choices = Markup.join(TotalsWindow.all.map { choice in
            let label = choice.hours == 1 ? "last hour" : "last \(choice.hours) hours"
            return choice == window ? HTML.element("strong", [], .text(label)) : HTML.link("/totals?hours=\(choice.hours)", label)
        }, separator: " · ")
        let span = window.hours == 1 ? "the last hour" : "the last \(window.hours) hours"
        let per = window.bucket == 60 ? "minute" : window.bucket < 3600 ? "\(window.bucket / 60) minutes" : "\(window.bucket / 3600) h"
        var content = HTML.element("p", [("class", "choices")], choices)
            + HTML.element("p", [("class", "note")], .text("Finished jobs per \(per) over \(span), from the archive; times in UTC."
                                                             + (capped ? " Too many queues and workers to count them all: the oldest bars may be short." : "")))
            + HTML.element("h2", [], .text("All queues"))
            + chart(all, window: window, start: start, id: "totals-all", label: "all queues", over: span)
        for (title, groups, prefix) in [("Per queue", queues, "queue"), ("Per worker", workers, "worker")] {
            content = content + HTML.element("h2", [], .text(title))
            guard !groups.isEmpty else {
                content = content + HTML.element("p", [], .text("No job finished in \(span)."))
                continue
            }
            let ranked = groups.sorted { ($1.value.total, $0.key) < ($0.value.total, $1.key) }
            var shown = Array(ranked.prefix(chartsShown))
            if ranked.count > chartsShown {
                var rest = Series(buckets: window.buckets)
                for (_, series) in ranked.dropFirst(chartsShown) {
                    for index in 0..<window.buckets {
                        rest.completed[index] += series.completed[index]
                        rest.failed[index] += series.failed[index]
                    }
                    rest.cancelled += series.cancelled
                }
                shown.append(("\(ranked.count - chartsShown) more", rest))
            }
            for (name, series) in shown {
                let heading: Markup = prefix == "queue" && ranked.contains(where: { $0.key == name })
                    ? HTML.link("/jobs?" + HTML.query([("queue", name)]), name) : .text(name)
                content = content + HTML.element("section", [("class", "totals \(prefix)")],
                    HTML.element("h3", [], heading) + chart(series, window: window, start: start, id: nil, label: "\(prefix) \(name)", over: span))
            }
        }
        return HTML.page(title: "Totals", content)
    }

    /// Completed (green) and failed (red, stacked on top) per bucket, with the time of every
    /// `tickEvery`th bucket under the axis and the tallest bar's count beside it; the sentence
    /// under it says the totals. `label` and the counts are escaped into the SVG's text.
    static func chart(_ series: Series, window: TotalsWindow, start: Date, id: String?, label: String, over span: String) -> Markup {
        // The tallest bar's count above the plot, the plot, then the axis and its labels.
        let width = 600.0, top = 18.0, plot = 110.0, height = 150.0, buckets = window.buckets
        let most = max(1, zip(series.completed, series.failed).map { $0 + $1 }.max() ?? 1)
        let bar = width / Double(buckets)
        var shapes = ""
        // The chart for all queues (`id` set) has a title on each bar, which a pointer over it
        // shows; the charts of each queue and worker draw each outcome as one path, a fifth of
        // the bytes (thirteen charts of 96 bars made the day's page 250 kB).
        var completedPath = "", failedPath = ""
        for index in 0..<buckets {
            let done = series.completed[index], failed = series.failed[index]
            guard done + failed > 0 else { continue }
            let x = Double(index) * bar, wide = max(0.5, bar - 1)
            let ok = Double(done) / Double(most) * plot, bad = Double(failed) / Double(most) * plot
            if id == nil {
                if done > 0 { completedPath += String(format: "M%.1f %.1fh%.1fv%.1fh%.1fz", x, top + plot - ok, wide, ok, -wide) }
                if failed > 0 { failedPath += String(format: "M%.1f %.1fh%.1fv%.1fh%.1fz", x, top + plot - ok - bad, wide, bad, -wide) }
                continue
            }
            shapes += "<g><title>\(timeOfDay(start.addingTimeInterval(Double(index * window.bucket)))): \(done) completed, \(failed) failed</title>"
            if done > 0 {
                shapes += String(format: "<rect class=\"completed\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", x, top + plot - ok, wide, ok)
            }
            if failed > 0 {
                shapes += String(format: "<rect class=\"failed\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", x, top + plot - ok - bad, wide, bad)
            }
            shapes += "</g>"
        }
        if !completedPath.isEmpty { shapes += "<path class=\"completed\" d=\"\(completedPath)\"/>" }
        if !failedPath.isEmpty { shapes += "<path class=\"failed\" d=\"\(failedPath)\"/>" }
        // The axis, and a tick with its time at each round time (every `tickEvery` buckets
        // since midnight UTC: every 10 minutes of the hour, every 4 hours of the day).
        let baseline = top + plot
        shapes += String(format: "<line class=\"axis\" x1=\"0\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", baseline + 0.5, width, baseline + 0.5)
        let first = Int(start.timeIntervalSince1970.rounded(.down)) / window.bucket
        for index in 0..<buckets where (first + index) % window.tickEvery == 0 {
            let x = Double(index) * bar
            let anchor = x < 20 ? "start" : x > width - 20 ? "end" : "middle"
            shapes += String(format: "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x + 0.5, baseline, x + 0.5, baseline + 6)
                + String(format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"\(anchor)\">", x, height - 4)
                + timeOfDay(start.addingTimeInterval(Double(index * window.bucket))) + "</text>"
        }
        shapes += "<text class=\"top\" x=\"2\" y=\"13\">\(most) a bar at most</text>"
        let completed = series.completed.reduce(0, +), failed = series.failed.reduce(0, +)
        let summary = "\(completed) completed, \(failed) failed" + (series.cancelled > 0 ? ", \(series.cancelled) cancelled" : "") + " in \(span)"
        let attributes = (id.map { " id=\"\(HTML.escape($0))\"" } ?? "") + " class=\"chart\""
        return Markup(raw: "<svg\(attributes) viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(HTML.escape(label)): \(HTML.escape(summary))\">"
                      + "<title>\(HTML.escape(label))</title>\(shapes)</svg>")
            + HTML.element("p", [("class", "legend")], .text(summary))
    }

    /// `14:05`, in UTC (the pages' times are UTC too).
    static func timeOfDay(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let minutes = ((seconds / 60) % 1440 + 1440) % 1440
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
