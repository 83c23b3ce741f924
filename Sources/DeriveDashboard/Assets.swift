/// The stylesheet and the script, served by Derive itself: no build step, no CDN, and the
/// Content-Security-Policy forbids inline code, so the script lives here.
enum Assets {
    static let style = """
        body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
        nav { background: #1d1d1f; color: #fff; padding: .6em 1.2em; }
        nav a { color: #cfe3ff; margin-left: 1.2em; text-decoration: none; }
        main { padding: 1em 1.6em; max-width: 1200px; }
        table { border-collapse: collapse; margin: .5em 0 1.5em; background: #fff; }
        th, td { border-bottom: 1px solid #e3e3e3; padding: .35em .7em; text-align: left; vertical-align: top; }
        th { font-weight: 600; background: #f0f0f0; }
        pre { background: #fff; border: 1px solid #e3e3e3; padding: .8em; overflow: auto; }
        form.filter label { margin-right: 1em; }
        #throughput { width: 100%; max-width: 600px; height: 120px; background: #fff; border: 1px solid #e3e3e3; }
        #throughput .completed { fill: #3a8f4b; } #throughput .failed { fill: #c33; }
        svg.bar { width: 300px; height: 10px; } svg.bar rect { fill: #4a78c2; }
        .state-live, .state-completed { color: #2d7a3e; } .state-failed, .state-gone { color: #b32020; }
        .state-suspect, .state-stopping, .state-cancelled { color: #a86400; }
        .legend { color: #666; margin-top: 0; }
        #outputs img { max-width: 240px; max-height: 180px; width: auto; height: auto; background: #eee; }
        .note { color: #666; } .error { color: #b32020; }
        form.action { display: inline-block; margin: 0 .6em .8em 0; }
        form.action button { padding: .3em .9em; }
        """

    /// Four squares, one smaller than the last: an image and its derivatives.
    static let favicon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d1d1f"/>\
        <rect x="2" y="2" width="8" height="8" fill="#4a78c2"/><rect x="10" y="10" width="4" height="4" fill="#3a8f4b"/></svg>
        """

    /// Refreshes the overview's live part every five seconds without reloading the page.
    static let script = """
        "use strict";
        document.addEventListener("DOMContentLoaded", () => {
          const live = document.querySelector("[data-refresh]");
          if (!live) return;
          const refresh = async () => {
            try {
              const response = await fetch(live.dataset.refresh, { cache: "no-store" });
              if (response.ok) live.innerHTML = await response.text();
            } catch (error) { /* the next tick tries again */ }
          };
          setInterval(refresh, 5000);
        });
        """
}
