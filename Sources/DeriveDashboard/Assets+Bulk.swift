extension Assets {
    /// The jobs list's selection: "select all" ticks every row of its form, and a bulk button
    /// asks first, saying what it does to how many (the question is the button's
    /// `data-confirm`, `{n}` standing for the count); with nothing ticked it says so and sends nothing.
    /// Listeners on the document, not on the form: the jobs list's first page is replaced by
    /// the page's own script as the queue changes (`dashboard.js`), and a form brought in that
    /// way must ask as the first one did.
    static let bulkScript = """
        "use strict";
        const bulkBoxes = form => Array.from(form.querySelectorAll("input[type=checkbox][name=id]"));
        document.addEventListener("change", event => {
          const all = event.target.closest && event.target.closest("form[data-bulk] input[data-select-all]");
          if (!all) return;
          for (const box of bulkBoxes(all.form)) box.checked = all.checked;
        });
        document.addEventListener("submit", event => {
          const form = event.target.closest && event.target.closest("form[data-bulk]");
          if (!form) return;
          const count = bulkBoxes(form).filter(box => box.checked).length;
          if (count === 0) {
            event.preventDefault();
            window.alert("Select at least one job first.");
            return;
          }
          const question = event.submitter && event.submitter.dataset.confirm;
          const selected = count === 1 ? "1 selected job" : count + " selected jobs";
          if (question && !window.confirm(question.replace("{n}", selected))) event.preventDefault();
        });
        """
}
