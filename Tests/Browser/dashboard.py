#!/usr/bin/env python3
"""Drives Debian's headless Chromium through a running `derive dashboard` and prints what it saw
as one JSON object; DashboardBrowserTests (Swift) starts the servers, the dashboard and the
worker, and decides what must hold. Nothing is downloaded: Chromium and chromedriver come from
Debian's packages (Scripts/test.sh installs them) and Selenium runs offline.

usage: dashboard.py URL TOKEN FAILED_JOB_ID [SCREENSHOT_DIR]

With DERIVE_BROWSER_HELD (four ids of waiting jobs in queue `held`, which no worker serves) and
DERIVE_BROWSER_NAMED (`ID:TEXT`: a job uploaded from a file whose name contains TEXT), it also
pauses and resumes the workers' queue, bulk-cancels two held jobs and searches, at 400 px and
at 1,400 px.
"""
import json
import os
import sys
import time

os.environ["SE_OFFLINE"] = "true"
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def counts(driver):
    """The overview's queue table as {queue: {"available": n, "running": n}}, read in one script
    run: the page's own script replaces the table every few seconds, and element handles taken
    before a refresh go stale."""
    return driver.execute_script(
        "const table = {};"
        "for (const row of document.querySelectorAll('#queues tbody tr')) {"
        "  const cells = Array.from(row.cells).map(cell => cell.textContent.trim());"
        "  table[cells[0]] = {available: parseInt(cells[1], 10), running: parseInt(cells[3], 10)};"
        "}"
        "return table;")


def wait_for_images(driver, selector, seconds=15):
    """The images the selector names, once all have loaded (or the time is up): whether each
    completed and its natural size (0 when it did not decode)."""
    deadline = time.time() + seconds
    while True:
        images = driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(i => "
            "({complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight, src: i.currentSrc}))", selector)
        if (images and all(image["complete"] for image in images)) or time.time() > deadline:
            return images
        time.sleep(0.1)


def widths(driver, url, pages, sizes=(400, 1400)):
    """Each page at each window width: the viewport's width and the page's own (a page wider
    than its viewport scrolls sideways)."""
    seen = []
    for width in sizes:
        driver.set_window_size(width, 1000)
        for page in pages:
            driver.get(url + page)
            seen.append(driver.execute_script(
                "return {page: arguments[0], width: arguments[1], innerWidth: window.innerWidth,"
                " scrollWidth: document.documentElement.scrollWidth}", page, width))
    driver.set_window_size(1280, 1000)
    return seen


def placeholders(driver, url):
    """The contact sheet with every derivative's request blocked, so no image ever loads: each
    picture's BlurHash canvas, and the size the page gives it and its image."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/derivatives/*"]})
    try:
        driver.get(url + "/assets")
        time.sleep(1)
        return driver.execute_script(
            "return Array.from(document.querySelectorAll('#assets [data-blurhash]')).map(holder => {"
            "  const image = holder.querySelector('img'), canvas = holder.querySelector('canvas');"
            "  const box = canvas ? canvas.getBoundingClientRect() : {width: 0, height: 0};"
            "  return {canvas: !!canvas, canvasWidth: box.width, canvasHeight: box.height,"
            "          width: image.getAttribute('width'), height: image.getAttribute('height'), loaded: image.naturalWidth};"
            "})")
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})


def follow_job(driver, url, seconds=30):
    """The second live job of the default queue (the one the worker serves, one slot), its page
    watched until it shows an end (or the time is up): each state and stage it showed, in order,
    and whether the page was ever loaded again. The second, not the first: the first is the one
    running, and on an idle machine it could end between the list's load and its page's."""
    driver.get(url + "/jobs?queue=default")
    links = driver.find_elements(By.CSS_SELECTOR, "#live-jobs tbody a")
    if not links:
        return {"job": None}
    href = links[min(1, len(links) - 1)].get_attribute("href")
    driver.get(href)
    driver.execute_script("window.loadedOnce = 'still the same page';")
    states, stages = [], []
    deadline = time.time() + seconds
    while time.time() < deadline:
        now = driver.execute_script(
            "const state = document.getElementById('job-state'), stage = document.getElementById('job-stage');"
            "return {state: state ? state.textContent : null, stage: stage ? stage.textContent : null,"
            "        following: document.querySelector('[data-refresh]') !== null,"
            "        control: document.querySelector('button.follow') !== null}")
        if not states or states[-1] != now["state"]:
            states.append(now["state"])
        if now["stage"] and (not stages or stages[-1] != now["stage"]):
            stages.append(now["stage"])
        if now["state"] in ("completed", "failed", "cancelled") and not now["following"]:
            break
        time.sleep(0.25)
    return {"job": href.replace(url, ""), "states": states, "stages": stages, "following": now["following"], "control": now["control"],
            "reloaded": driver.execute_script("return window.loadedOnce") != "still the same page",
            "text": driver.find_element(By.ID, "facts").text}


def wait_for_url(driver, text, seconds=20):
    deadline = time.time() + seconds
    while text not in driver.current_url and time.time() < deadline:
        time.sleep(0.05)
    notices = driver.find_elements(By.ID, "notice")
    return {"url": driver.current_url, "notice": notices[0].text if notices else None}


def press(driver, form_action, seconds=20):
    """Clicks the button of the form posting to form_action and waits for its redirect."""
    buttons = driver.find_elements(By.XPATH, f"//form[@action='{form_action}']//button")
    if not buttons:
        return {"url": driver.current_url, "notice": None, "missing": form_action}
    before = driver.current_url
    buttons[0].click()
    deadline = time.time() + seconds
    while driver.current_url == before and time.time() < deadline:
        time.sleep(0.05)
    return wait_for_url(driver, "done=", seconds)


def pause_queue(driver, url, queue, width):
    """Pauses `queue` from the queues page at `width` and returns what the pages said."""
    driver.set_window_size(width, 1000)
    driver.get(url + "/queues")
    if driver.find_elements(By.XPATH, f"//form[@action='/queues/{queue}/pause']"):
        paused = press(driver, f"/queues/{queue}/pause")
    else:
        # A queue with no waiting or running jobs has no row: paused by name.
        driver.find_element(By.CSS_SELECTOR, "form[action='/queues/pause'] input[name=queue]").send_keys(queue)
        paused = press(driver, "/queues/pause")
    paused["overviewMarked"] = False
    driver.get(url + "/")
    rows = driver.find_elements(By.XPATH, f"//table[@id='queues']//tr[td/a[text()='{queue}']]")
    paused["overviewMarked"] = bool(rows) and "paused" in rows[0].text
    return paused


def resume_queue(driver, url, queue, width):
    driver.set_window_size(width, 1000)
    driver.get(url + "/queues")
    return press(driver, f"/queues/{queue}/resume")


def bulk_cancel(driver, url, ids, width):
    """Ticks the jobs `ids` on the held queue's list, presses Cancel selected, answers the
    question yes, and returns the question, the notice and the sizes seen."""
    driver.set_window_size(width, 1000)
    driver.get(url + "/jobs?queue=held")
    seen = {"ticked": []}
    # The list's first page is read again by the page's script every 5 s and replaced: wait for
    # that once, so the form ticked and sent below is one the refresh brought in, which must
    # ask before it acts as the first one did.
    driver.execute_script("const f = document.getElementById('bulk-jobs'); if (f) f.dataset.original = 'yes';")
    seen["replacedBeforeTicking"] = False
    deadline = time.time() + 15
    while time.time() < deadline:
        if driver.execute_script("const f = document.getElementById('bulk-jobs'); return !!f && f.dataset.original !== 'yes';"):
            seen["replacedBeforeTicking"] = True
            break
        time.sleep(0.25)
    for job in ids:
        boxes = driver.find_elements(By.CSS_SELECTOR, f"input[type=checkbox][name=id][value='{job}']")
        if boxes:
            boxes[0].click()
            seen["ticked"].append(job)
    seen["scrollWidth"] = driver.execute_script("return document.documentElement.scrollWidth")
    seen["innerWidth"] = driver.execute_script("return window.innerWidth")
    button = driver.find_elements(By.CSS_SELECTOR, "#bulk-jobs button[value=cancel]")
    if not button:
        seen["missing"] = "no Cancel selected button"
        return seen
    button[0].click()
    try:
        alert = driver.switch_to.alert
        seen["confirm"] = alert.text
        alert.accept()
    except Exception as error:  # noqa: BLE001 - reported, and the Swift test fails on it
        seen["confirm"] = None
        seen["confirmError"] = str(error)
    seen.update(wait_for_url(driver, "done=bulk-cancel"))
    return seen


def search(driver, url, text, width):
    """Types `text` into the jobs list's search and returns the ids of the jobs listed."""
    driver.set_window_size(width, 1000)
    driver.get(url + "/jobs")
    field = driver.find_element(By.NAME, "source")
    field.clear()
    field.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "form.filter button").click()
    deadline = time.time() + 10
    while "source=" not in driver.current_url and time.time() < deadline:
        time.sleep(0.05)
    return [link.text.lstrip("#") for link in driver.find_elements(By.CSS_SELECTOR, "#live-jobs tbody a, #finished-jobs tbody a")]


def main():
    url, token, failed_job = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
    shots = sys.argv[4] if len(sys.argv) > 4 else None
    seen = {}
    driver = browser()
    try:
        # A waiting or running job's page, followed without reloading until it ends: the page's
        # script reads it again every 2 s and replaces its state, stage and run time.
        seen["followedJob"] = follow_job(driver, url)

        # The overview, watched without reloading while the worker drains the queue.
        driver.get(url + "/")
        driver.execute_script("window.loadedOnce = 'still the same page';")
        seen["overviewFirst"] = counts(driver)
        deadline = time.time() + 90
        history = [seen["overviewFirst"]]
        while time.time() < deadline:
            time.sleep(1)
            now = counts(driver)
            if now != history[-1]:
                history.append(now)
            if not now or all(q["available"] == 0 and q["running"] == 0 for q in now.values()):
                break
        seen["overviewHistory"] = history
        seen["overviewReloaded"] = driver.execute_script("return window.loadedOnce") != "still the same page"
        seen["overviewText"] = driver.find_element(By.TAG_NAME, "main").text
        if shots:
            driver.save_screenshot(os.path.join(shots, "overview.png"))

        # Before any picture has been loaded (and cached): the placeholders fill their boxes.
        seen["placeholders"] = placeholders(driver, url)

        # The failed job's page: its source and error hold markup, shown as text.
        driver.get(f"{url}/jobs/{failed_job}")
        seen["jobText"] = driver.find_element(By.TAG_NAME, "main").text
        seen["pwned"] = driver.execute_script("return window.pwned === undefined ? null : window.pwned")
        seen["scriptsOnJobPage"] = driver.execute_script("return document.scripts.length")
        if shots:
            driver.save_screenshot(os.path.join(shots, "job.png"))
        # A completed job's page: its outputs load (decoded, with a size).
        driver.get(url + "/jobs?outcome=completed")
        first = driver.find_elements(By.CSS_SELECTOR, "#finished-jobs tbody a")
        seen["completedJobImages"] = []
        if first:
            first[0].click()
            deadline = time.time() + 10
            while time.time() < deadline:
                images = driver.execute_script(
                    "return Array.from(document.querySelectorAll('#outputs img')).map(i => "
                    "({complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight}))")
                if images and all(image["complete"] for image in images):
                    break
                time.sleep(0.1)
            seen["completedJobImages"] = images
            if shots:
                driver.save_screenshot(os.path.join(shots, "completed-job.png"))
        # The contact sheet: every picture loads; each BlurHash placeholder, decoded by the
        # page's own script, has the colours of its picture (the Swift test compares them).
        driver.get(url + "/assets")
        seen["assetPictures"] = wait_for_images(driver, "#assets img")
        seen["blurhashMeans"] = driver.execute_script(
            "return Array.from(document.querySelectorAll('[data-blurhash]')).slice(0, 8).map(holder => {"
            "  const pixels = decodeBlurHash(holder.dataset.blurhash, 16, 16); const mean = [0, 0, 0];"
            "  for (let i = 0; i < pixels.length; i += 4) { mean[0] += pixels[i]; mean[1] += pixels[i + 1]; mean[2] += pixels[i + 2]; }"
            "  return {hash: holder.dataset.blurhash, mean: mean.map(v => Math.round(v / 256))};"
            "})")
        if shots:
            driver.save_screenshot(os.path.join(shots, "assets.png"))
        # The first asset page with a face drawn (or the last of the sheet's first eight).
        pages = [link.get_attribute("href") for link in driver.find_elements(By.CSS_SELECTOR, "#assets figcaption a")][:8]
        for page in pages:
            driver.get(page)
            seen["assetPageImages"] = wait_for_images(driver, "table img")
            seen["assetText"] = driver.find_element(By.TAG_NAME, "main").text
            seen["faceBoxes"] = len(driver.find_elements(By.CSS_SELECTOR, "#faces rect.face"))
            if seen["faceBoxes"]:
                break
        if pages and shots:
            driver.save_screenshot(os.path.join(shots, "asset.png"))
        for page in ["presets", "schedules"]:
            driver.get(f"{url}/{page}")
            seen[page + "Text"] = driver.find_element(By.TAG_NAME, "main").text
            links = driver.find_elements(By.CSS_SELECTOR, "#presets a") if page == "presets" else []
            if shots:
                driver.save_screenshot(os.path.join(shots, page + ".png"))
            if links:
                links[0].click()
                seen["presetText"] = driver.find_element(By.TAG_NAME, "main").text
                if shots:
                    driver.save_screenshot(os.path.join(shots, "preset.png"))

        # Before the refused request below, which the console reports: nothing so far may fail
        # (a script or style the Content-Security-Policy blocked would show here).
        seen["consoleErrors"] = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]

        # An action without logging in is refused.
        seen["unauthenticatedRetry"] = driver.execute_script(
            "const r = await fetch(arguments[0], {method: 'POST', body: 'csrf=x', "
            "headers: {'Content-Type': 'application/x-www-form-urlencoded'}, redirect: 'manual'}); return r.status;",
            f"/jobs/{failed_job}/retry")

        # Log in with the token, then retry the failure group from the failures page.
        driver.get(url + "/login")
        driver.find_element(By.NAME, "token").send_keys(token)
        driver.find_element(By.CSS_SELECTOR, "form button").click()
        # The login answers with a redirect to the overview: wait for it before going on, or
        # it lands after the next page was asked for.
        deadline = time.time() + 10
        while driver.current_url.rstrip("/") != url and time.time() < deadline:
            time.sleep(0.05)
        seen["afterLoginURL"] = driver.current_url
        seen["afterLoginText"] = driver.find_element(By.TAG_NAME, "body").text[:400]
        driver.get(url + "/failures")
        seen["failuresText"] = driver.find_element(By.TAG_NAME, "main").text
        if shots:
            driver.save_screenshot(os.path.join(shots, "failures.png"))
        buttons = driver.find_elements(By.CSS_SELECTOR, "form.action button")
        seen["retryButtons"] = [button.text for button in buttons]
        # The refused source's own group (on a loaded machine another group may come first),
        # and the browser kept open until the form's POST has been answered with its redirect
        # to the failed jobs of that code: quitting at once could drop the request unsent.
        held = [job for job in os.environ.get("DERIVE_BROWSER_HELD", "").split(",") if job]
        if held:
            # The workers' queue paused (at a phone's width) before the failures are retried:
            # the retried job waits, marked, until the queue is resumed (at a desktop's).
            seen["pause"] = pause_queue(driver, url, "default", 400)
            driver.set_window_size(1280, 1000)
            driver.get(url + "/failures")
        refused = driver.find_elements(By.XPATH, "//form[@class='action'][input[@name='code' and @value='source_refused']]/button")
        if refused:
            refused[0].click()
            # A bulk action asks first: the question, then yes.
            try:
                alert = driver.switch_to.alert
                seen["retryConfirm"] = alert.text
                alert.accept()
            except Exception as error:  # noqa: BLE001 - reported, and the Swift test fails on it
                seen["retryConfirm"] = None
                seen["retryConfirmError"] = str(error)
            deadline = time.time() + 20
            while "code=source_refused" not in driver.current_url and time.time() < deadline:
                time.sleep(0.05)
            seen["afterRetryURL"] = driver.current_url
            notices = driver.find_elements(By.ID, "notice")
            seen["afterRetryNotice"] = notices[0].text if notices else None

        if held:
            # While paused, the retried job waits: the list says so beside it.
            time.sleep(3)
            driver.get(url + "/jobs?queue=default")
            rows = driver.find_elements(By.CSS_SELECTOR, "#live-jobs tbody tr")
            seen["whilePaused"] = [row.text for row in rows]
            seen["resume"] = resume_queue(driver, url, "default", 1400)
            # The same, the other way round: paused at a desktop's width, resumed at a phone's.
            seen["pause1400"] = pause_queue(driver, url, "default", 1400)
            seen["resume400"] = resume_queue(driver, url, "default", 400)
            # Two held jobs cancelled at each width, in one request each.
            seen["bulkCancel400"] = bulk_cancel(driver, url, held[:2], 400)
            seen["bulkCancel1400"] = bulk_cancel(driver, url, held[2:4], 1400)
        named = os.environ.get("DERIVE_BROWSER_NAMED", "")
        if ":" in named:
            _, text = named.split(":", 1)
            seen["searchByName"] = {str(width): search(driver, url, text, width) for width in (400, 1400)}
            seen["searchBySource"] = {str(width): search(driver, url, "nonexistent", width) for width in (400, 1400)}
        driver.set_window_size(1280, 1000)

        # Every page, logged in (so with its forms), at a phone's width and a desktop's: none
        # scrolls sideways.
        driver.get(url + "/jobs?outcome=completed")
        finished = [link.get_attribute("href").replace(url, "") for link in driver.find_elements(By.CSS_SELECTOR, "#finished-jobs tbody a")][:1]
        driver.get(url + "/assets")
        assets = [link.get_attribute("href").replace(url, "") for link in driver.find_elements(By.CSS_SELECTOR, "#assets figcaption a")][:1]
        # The totals: a chart for all, one per queue and one per worker, each under a time
        # axis with its labels.
        driver.get(url + "/totals?hours=1")
        seen["totals"] = driver.execute_script(
            "return {charts: document.querySelectorAll('svg.chart').length,"
            "        labels: Array.from(document.querySelectorAll('#totals-all text:not(.top)')).map(t => t.textContent),"
            "        text: document.querySelector('main').innerText}")
        if shots:
            driver.save_screenshot(os.path.join(shots, "totals.png"))
        seen["widths"] = widths(driver, url, ["/", "/totals", "/totals?hours=1", "/jobs", "/jobs?outcome=failed", f"/jobs/{failed_job}", "/failures", "/assets",
                                              "/presets", "/presets/cards", "/presets/cards/reprocess?which=all", "/schedules", "/login", "/queues",
                                              "/jobs?queue=held", "/jobs?outcome=cancelled"] + finished + assets)
    finally:
        driver.quit()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
