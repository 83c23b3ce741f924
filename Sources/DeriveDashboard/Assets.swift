/// The stylesheet and the script, served by Derive itself: no build step, no CDN, and the
/// Content-Security-Policy forbids inline code, so the script lives here.
enum Assets {
    static let style = """
        body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; -webkit-text-size-adjust: 100%; }
        nav { background: #1d1d1f; color: #fff; padding: .6em 1.2em; display: flex; flex-wrap: wrap; gap: .3em 1.2em; align-items: baseline; }
        nav a { color: #cfe3ff; text-decoration: none; }
        main { padding: 1em 1.6em; max-width: 1200px; }
        h1, h2, h3, p, li, figcaption, label { overflow-wrap: anywhere; }
        div.scroll { max-width: 100%; overflow-x: auto; margin: .5em 0 1.5em; }
        div.scroll > table { margin: 0; }
        table { border-collapse: collapse; margin: .5em 0 1.5em; background: #fff; }
        th, td { border-bottom: 1px solid #e3e3e3; padding: .35em .7em; text-align: left; vertical-align: top; }
        th { font-weight: 600; background: #f0f0f0; }
        pre { background: #fff; border: 1px solid #e3e3e3; padding: .8em; overflow: auto; max-width: 100%; box-sizing: border-box; }
        form.filter label { margin-right: 1em; display: inline-block; }
        input, select, button { font: inherit; max-width: 100%; }
        svg.chart { display: block; width: 100%; max-width: 600px; height: auto; background: #fff; border: 1px solid #e3e3e3; box-sizing: border-box; }
        svg.chart .completed { fill: #3a8f4b; } svg.chart .failed { fill: #c33; }
        svg.chart .axis, svg.chart .tick { stroke: #888; stroke-width: 1; }
        svg.chart text { font: 16px system-ui, sans-serif; fill: #555; } svg.chart text.top { fill: #888; font-size: 14px; }
        /* Two side by side where the window has room for both, else one under another; the
           padding, not a margin, keeps them apart, so a chart never overflows its window. */
        section.totals { display: inline-block; box-sizing: border-box; width: 100%; vertical-align: top; }
        @media (min-width: 1100px) { section.totals { width: 50%; max-width: calc(600px + 1.5em); padding-right: 1.5em; } }
        section.totals h3 { margin: .6em 0 .2em; font-size: 1em; overflow-wrap: anywhere; }
        svg.bar { width: 300px; height: 10px; } svg.bar rect { fill: #4a78c2; } svg.bar .encode { fill: #a86400; }
        .state-live, .state-completed { color: #2d7a3e; } .state-failed, .state-gone { color: #b32020; }
        .state-suspect, .state-stopping, .state-cancelled { color: #a86400; }
        .legend { color: #666; margin-top: 0; }
        button.follow { float: right; margin: 0 0 .5em .5em; font-size: .9em; }
        #outputs img { display: block; max-width: 100%; height: auto; background: #eee; }
        .note { color: #666; } .error { color: #b32020; }
        .notice { background: #eef4ff; border: 1px solid #b9cdf2; padding: .5em .8em; }
        .notice.warning { background: #fff6e5; border-color: #e8c98a; }
        form.action { display: inline-block; margin: 0 .6em .8em 0; }
        form.action button { padding: .3em .9em; }
        .sheet { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(270px, 100%), 1fr)); gap: 1em; }
        figure.asset { margin: 0; background: #fff; border: 1px solid #e3e3e3; padding: .5em; min-width: 0; }
        figure.asset .pictures { display: flex; flex-wrap: wrap; gap: 4px; align-items: flex-end; }
        figure.asset figcaption { margin-top: .4em; overflow-wrap: anywhere; }
        /* A picture's box is its width and height attributes (the size it is shown at, worked out
           on the server), kept while the image loads: the BlurHash canvas fills it until then. */
        .picture { position: relative; display: inline-block; background: #eee; line-height: 0; max-width: 100%; vertical-align: bottom; }
        .picture canvas { position: absolute; inset: 0; width: 100%; height: 100%; }
        .picture img { position: relative; display: block; max-width: 100%; height: auto; }
        #faces { max-width: 480px; max-height: 480px; width: 100%; height: auto; background: #eee; display: block; }
        #faces .face { fill: none; stroke: #ffd400; } #faces .frame { fill: #ddd; }
        figure.faces { margin: 0 0 1.5em; }
        .state-stale { color: #a86400; }
        .state-paused { color: #a86400; font-weight: 600; }
        div.bulk { display: flex; flex-wrap: wrap; gap: .4em .8em; align-items: center; margin: .4em 0; }
        pre.diff del { color: #b32020; text-decoration: none; background: #fdecec; display: block; }
        pre.diff ins { color: #2d7a3e; text-decoration: none; background: #e9f6ec; display: block; }
        pre.diff span { display: block; } pre.diff .gap { color: #999; }
        section.version h2 { font-size: 1.1em; }
        @media (max-width: 600px) {
          nav { padding: .5em .8em; }
          main { padding: .6em .7em; }
          h1 { font-size: 1.5em; }
          th, td { padding: .3em .45em; }
          svg.bar { width: 140px; }
          form.filter label { display: block; margin: 0 0 .4em; }
        }
        """

    /// Four squares, one smaller than the last: an image and its derivatives.
    static let favicon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d1d1f"/>\
        <rect x="2" y="2" width="8" height="8" fill="#4a78c2"/><rect x="10" y="10" width="4" height="4" fill="#3a8f4b"/></svg>
        """

    /// Refreshes the live parts (the overview's, a job's page, the jobs list) without reloading
    /// the page, and draws each picture's BlurHash (the worker records one per output) behind
    /// it while the image loads: the decoder is BlurHash's published algorithm, on a 32-pixel
    /// canvas.
    static let script = """
        "use strict";
        const BLURHASH_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";
        function base83(text) {
          let value = 0;
          for (const character of text) {
            const digit = BLURHASH_DIGITS.indexOf(character);
            if (digit < 0) throw new Error("not base 83");
            value = value * 83 + digit;
          }
          return value;
        }
        const toLinear = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
        const toSRGB = v => {
          v = Math.max(0, Math.min(1, v));
          return Math.round((v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(v, 1 / 2.4) - 0.055) * 255);
        };
        const signedSquare = v => Math.sign(v) * v * v;
        function decodeBlurHash(hash, width, height) {
          const size = base83(hash[0]), columns = size % 9 + 1, rows = Math.floor(size / 9) + 1;
          if (hash.length !== 4 + 2 * columns * rows) throw new Error("wrong length");
          const maximum = (base83(hash[1]) + 1) / 166;
          const colours = [];
          const dc = base83(hash.substring(2, 6));
          colours.push([toLinear(dc >> 16), toLinear((dc >> 8) & 255), toLinear(dc & 255)]);
          for (let i = 1; i < columns * rows; i++) {
            const ac = base83(hash.substring(4 + i * 2, 6 + i * 2));
            colours.push([Math.floor(ac / 361), Math.floor(ac / 19) % 19, ac % 19].map(q => signedSquare((q - 9) / 9) * maximum));
          }
          const pixels = new Uint8ClampedArray(width * height * 4);
          for (let y = 0; y < height; y++) {
            for (let x = 0; x < width; x++) {
              let r = 0, g = 0, b = 0;
              for (let j = 0; j < rows; j++) {
                for (let i = 0; i < columns; i++) {
                  const basis = Math.cos(Math.PI * x * i / width) * Math.cos(Math.PI * y * j / height);
                  const colour = colours[i + j * columns];
                  r += colour[0] * basis; g += colour[1] * basis; b += colour[2] * basis;
                }
              }
              const at = 4 * (x + y * width);
              pixels[at] = toSRGB(r); pixels[at + 1] = toSRGB(g); pixels[at + 2] = toSRGB(b); pixels[at + 3] = 255;
            }
          }
          return pixels;
        }
        function drawPlaceholders() {
          for (const holder of document.querySelectorAll("[data-blurhash]")) {
            const image = holder.querySelector("img");
            // Loaded already (from the cache): no placeholder. A lazy image not yet asked for
            // may also say it is complete, with no pixels: it gets one.
            if (!image || (image.complete && image.naturalWidth > 0)) continue;
            try {
              const canvas = document.createElement("canvas");
              canvas.width = 32; canvas.height = 32;
              canvas.getContext("2d").putImageData(new ImageData(decodeBlurHash(holder.dataset.blurhash, 32, 32), 32, 32), 0, 0);
              holder.insertBefore(canvas, image);
              const done = () => canvas.remove();
              image.addEventListener("load", done, { once: true });
            } catch (error) { /* a malformed hash: no placeholder */ }
          }
        }
        document.addEventListener("DOMContentLoaded", () => {
          drawPlaceholders();
          // Bulk actions ask first (the question is in the form's data-confirm); one listener
          // on the document, so forms a refresh brought in ask too.
          document.addEventListener("submit", event => {
            const form = event.target.closest("form[data-confirm]");
            if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
          });
          followLive();
        });
        // A part of the page marked data-refresh is read again every data-every seconds (5 when
        // not said) from that address (the page's own when empty), and replaced by the element with its id in the answer
        // (a whole page) or by the answer itself (a fragment, as /live is). Not while the
        // visitor pauses it (the button), types in a field of it or has ticked a box in it, nor
        // while the tab is hidden. An answer whose element has no data-refresh (a job that
        // ended) is the last.
        function followLive() {
          const live = document.querySelector("[data-refresh]");
          if (!live) return;
          let paused = false, timer = 0;
          const control = document.createElement("button");
          control.type = "button";
          control.className = "follow";
          control.setAttribute("aria-pressed", "false");
          control.textContent = "Pause live updates";
          control.addEventListener("click", () => {
            paused = !paused;
            control.setAttribute("aria-pressed", String(paused));
            control.textContent = paused ? "Resume live updates" : "Pause live updates";
          });
          live.before(control);
          const busy = () => paused || document.hidden || live.querySelector("input[type=checkbox]:checked") !== null
            || (live.contains(document.activeElement) && document.activeElement.matches("input, select, textarea"));
          const refresh = async () => {
            if (busy()) return;
            try {
              const response = await fetch(live.dataset.refresh || location.href, { cache: "no-store" });
              if (!response.ok) return;
              const answer = new DOMParser().parseFromString(await response.text(), "text/html");
              const fresh = live.id ? answer.getElementById(live.id) : null;
              if (busy()) return;
              live.innerHTML = (fresh || answer.body).innerHTML;
              drawPlaceholders();
              if (fresh && !fresh.hasAttribute("data-refresh")) {
                clearInterval(timer);
                live.removeAttribute("data-refresh");
                control.remove();
              }
            } catch (error) { /* the next tick tries again */ }
          };
          timer = setInterval(refresh, (Number(live.dataset.every) || 5) * 1000);
        }
        """
}
