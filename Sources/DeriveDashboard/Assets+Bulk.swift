extension Assets {
    /// The jobs list's selection: "select all" ticks every row of its form, and a bulk button
    /// asks first, saying what it does to how many (the question is the button's
    /// `data-confirm`, `{n}` standing for the count); with nothing ticked it says so and sends nothing.
    static let bulkScript = """
        "use strict";
        document.addEventListener("DOMContentLoaded", () => {
          for (const form of document.querySelectorAll("form[data-bulk]")) {
            const boxes = () => Array.from(form.querySelectorAll("input[type=checkbox][name=id]"));
            const all = form.querySelector("input[data-select-all]");
            if (all) all.addEventListener("change", () => { for (const box of boxes()) box.checked = all.checked; });
            form.addEventListener("submit", event => {
              const count = boxes().filter(box => box.checked).length;
              if (count === 0) {
                event.preventDefault();
                window.alert("Select at least one job first.");
                return;
              }
              const question = event.submitter && event.submitter.dataset.confirm;
              const selected = count === 1 ? "1 selected job" : count + " selected jobs";
              if (question && !window.confirm(question.replace("{n}", selected))) event.preventDefault();
            });
          }
        });
        """
}
