"""The timeline page in a real headless Chromium (selenium + chromedriver).

CI installs Debian's ``chromium`` and ``chromium-driver`` (see ``.ci/run``); elsewhere the
tests skip when they are missing.
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pytest

from retrograd import memory
from retrograd.memory import viz
from test_viz import torch_like_snapshot, training_snapshot

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1800", "--force-device-scale-factor=1")


@pytest.fixture(scope="module")
def browser():
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("chromium / chromedriver are not installed "
                    "(apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="retrograd-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, path):
    """Load ``path``, wait for the page to finish drawing; its load time in ms."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    return float(driver.execute_script("return document.body.dataset.loadMs"))


def severe(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_two_snapshots_page(browser, tmp_path):
    snaps = [("usual loop", training_snapshot(steps=3, layers=4, hidden=512, batch=64)),
             ("optimizer fused into backward",
              training_snapshot(steps=3, layers=4, hidden=512, batch=64, fused=True))]
    page = tmp_path / "timeline.html"
    viz.write_html(page, snaps)
    open_page(browser, page)
    assert severe(browser) == []
    for pid, (_, snap) in zip(("peak", "peak-1"), snaps, strict=True):
        tl = viz.timeline(snap)
        el = browser.find_element("id", pid)
        assert el.text == "Peak " + viz.format_bytes(tl["peak"]["bytes"])
        assert el.get_attribute("data-bytes") == str(tl["peak"]["bytes"])
    # the page rebuilt the same series as Python
    tl = viz.timeline(snaps[0][1])
    total = browser.execute_script("return Array.from(memoryViz.panels[0].total)")
    np.testing.assert_array_equal(total, tl["total"])
    # the chart was drawn: many coloured pixels on the first canvas
    painted = browser.execute_script("""
        const c = document.querySelector('canvas');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]) n++;
        return n / (c.width * c.height);""")
    assert painted > 0.3
    rows = browser.find_elements("css selector", "table.largest tr.row")
    assert len(rows) == 2 * 20
    text = browser.find_element("css selector", "table.breakdown").text
    assert "optimizer_state" in text and "100%" in text
    shot = tmp_path / "timeline.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_js_formats_bytes_as_python(browser, tmp_path):
    page = tmp_path / "t.html"
    viz.write_html(page, [("t", torch_like_snapshot())])
    open_page(browser, page)
    values = [0, 1, 1023, 1024, 1536, 10 * 2**10 - 1, 1152 * 2**20, 99_999_999, 2**40 + 1,
              1_234_567_890, 3 * 2**50, *(int(v) for v in np.geomspace(1, 2**52, 200))]
    got = browser.execute_script("return arguments[0].map(memoryViz.fmtBytes)", values)
    assert got == [viz.format_bytes(v) for v in values]
    assert severe(browser) == []


def test_hover_zoom_and_reset(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains

    page = tmp_path / "t.html"
    viz.write_html(page, [("zoom", training_snapshot(steps=2, layers=3, hidden=256, batch=32))])
    open_page(browser, page)
    canvas = browser.find_element("css selector", "canvas.overlay")
    w, h = canvas.rect["width"], canvas.rect["height"]
    # hover just above the x axis (offsets are from the centre): the parameters are at the
    # bottom of the stack
    ActionChains(browser).move_to_element_with_offset(canvas, int(w * 0.1),
                                                      int(h / 2) - 36 - 4).perform()
    tip = browser.find_element("css selector", ".tip")
    for _ in range(50):
        if tip.is_displayed():
            break
        time.sleep(0.02)
    assert "total" in tip.text and "allocation:" in tip.text and "parameter" in tip.text
    reset = browser.find_element("css selector", ".reset")
    assert not reset.is_displayed()
    # drag-select a range, then the reset button appears and restores the full view
    ActionChains(browser).move_to_element_with_offset(canvas, -int(w * 0.2), 0) \
        .click_and_hold().move_by_offset(int(w * 0.15), 0).release().perform()
    assert reset.is_displayed()
    assert browser.execute_script("return memoryViz.panels[0].view !== null")
    reset.click()
    assert browser.execute_script("return memoryViz.panels[0].view === null")
    browser.execute_script("""
        const c = document.querySelector('canvas.overlay'), r = c.getBoundingClientRect();
        c.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: r.left + r.width / 2,
            clientY: r.top + 50, bubbles: true, cancelable: true}));""")
    assert reset.is_displayed()
    # time axis
    browser.find_elements("css selector", "#xmode button")[1].click()
    assert browser.execute_script("return memoryViz.panels[0].mode()") == "time"
    assert severe(browser) == []


def test_torch_pickle_history_off_and_large_pages(browser, tmp_path):
    off = training_snapshot(steps=1, layers=2, hidden=64, batch=8)
    off["device_traces"], off["category_changes"] = [[]], [[]]
    page = tmp_path / "t.html"
    empty = {"segments": [], "device_traces": [[]]}
    viz.write_html(page, [("torch", torch_like_snapshot()), ("history off", off),
                          ("empty", empty)])
    open_page(browser, page)
    assert severe(browser) == []
    assert browser.find_element("id", "peak").text == "Peak 5.00 KiB"
    assert "not recorded" in browser.find_element("css selector", ".nohist").text
    assert browser.find_element("id", "peak-2").text == "Peak 0 B"
    # time axis (the torch trace has times) with the flat panels beside it
    browser.find_elements("css selector", "#xmode button")[1].click()
    assert severe(browser) == []

    big = training_snapshot(steps=500, layers=8, hidden=64, batch=8)
    t0 = time.perf_counter()
    viz.write_html(page, [("100k events", big)])
    t1 = time.perf_counter()
    load_ms = open_page(browser, page)
    assert severe(browser) == []
    print(f"\n{len(big['device_traces'][0])} events: HTML written in {t1 - t0:.2f} s, "
          f"{page.stat().st_size / 2**20:.1f} MiB, page ready {load_ms:.0f} ms after "
          "navigation", file=sys.stderr)
    assert browser.find_element("id", "peak").get_attribute("data-bytes") == str(
        viz.timeline(big)["peak"]["bytes"])


def test_module_tree(browser, tmp_path):
    from test_viz_modules import _training_snapshot

    snap = _training_snapshot()
    memory._record_memory_history(None)
    memory.stop_accounting()
    page = tmp_path / "t.html"
    viz.write_html(page, [("modules", snap)])
    open_page(browser, page)
    assert severe(browser) == []
    tl = viz.timeline(snap)
    rows = {r.get_attribute("data-path"): r
            for r in browser.find_elements("css selector", "table.mtree tbody tr")}
    assert {"TreeNet", "TreeNet.body", "TreeNet.body.0", "TreeNet.head", "Adam",
            "Adam.step"} <= set(rows)
    # a module's bytes are its own and its submodules'; the top rows add up to the peak
    by_path = {p: int(float(r.get_attribute("data-bytes"))) for p, r in rows.items()}
    assert by_path["TreeNet"] == sum(sum(row.values()) for path, row in tl["modules"].items()
                                     if path.startswith("TreeNet"))
    tops = [p for p in rows if "." not in p]
    assert sum(by_path[p] for p in tops) == tl["peak"]["bytes"]
    assert "100.0%" not in rows["TreeNet"].text and "%" in rows["TreeNet"].text
    # the first level is open, deeper ones open on a click
    assert rows["TreeNet.body"].is_displayed() and not rows["TreeNet.body.0"].is_displayed()
    rows["TreeNet.body"].click()
    assert rows["TreeNet.body.0"].is_displayed()
    rows["TreeNet"].click()
    assert not rows["TreeNet.body"].is_displayed() and not rows["TreeNet.body.0"].is_displayed()
    rows["TreeNet"].click()
    assert rows["TreeNet.body.0"].is_displayed()  # (body stayed open)
    assert severe(browser) == []
