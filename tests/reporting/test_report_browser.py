"""The HTML report in a real browser (headless Chromium): it loads, its images decode, and
the headline comes first. Skips with the reason where no Chromium is installed
(`.ci/run` installs Debian's `chromium` when it can)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import pysdcmicro

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = [pytest.mark.subprocess,
              pytest.mark.skipif(BROWSER is None, reason="no headless Chromium found (apt-get install chromium)")]


def _chromium(*args: str, timeout: int = 90) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    pytest.importorskip("matplotlib")
    df = pysdcmicro.datasets.make_demo_data(150, rng=0)
    res = pysdcmicro.microaggregate(df, 3, variables=["employees", "turnover", "wages", "assets", "profit"])
    path = tmp_path_factory.mktemp("html") / "report.html"
    pysdcmicro.report(res, df).to_html(path)
    return path


def test_headline_is_first_and_page_loads(page):
    # a script appended to the page records that every image decoded (naturalWidth > 0)
    html = page.read_text()
    probe = page.with_name("probe.html")
    probe.write_text(html.replace(
        "</body>", "<script>window.addEventListener('load', () => { const bad = [...document.images]"
                   ".filter(i => !i.complete || i.naturalWidth === 0).length; document.body.setAttribute("
                   "'data-images-broken', String(bad)); document.body.setAttribute('data-images', "
                   "String(document.images.length)); });</script></body>"))
    proc = _chromium("--virtual-time-budget=5000", "--dump-dom", probe.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "Uncaught" not in proc.stderr, proc.stderr[-2000:]
    assert 'data-images-broken="0"' in dom and 'data-images="3"' in dom, dom[:500]
    body = dom[dom.index("<body"):]
    first = re.search(r"<body[^>]*>\s*<(\w+)([^>]*)>", body)
    assert first.group(1) == "section" and "headline" in first.group(2), body[:300]
    headline = body[:body.index("</section>")]
    for phrase in ("3-anonymous", "information loss", "record-linkage risk", "interval disclosure risk"):
        assert phrase in headline, phrase
    assert body.index("</section>") < body.index("<img")    # the headline comes before every plot


def test_screenshot_is_drawn(page, tmp_path):
    shot = tmp_path / "shot.png"
    proc = _chromium("--window-size=1100,1400", f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    from matplotlib.image import imread

    img = imread(shot)
    assert img.shape[0] == 1400 and img.shape[1] == 1100
    assert (img[:, :, :3] < 0.5).mean() > 0.005   # text and plots drawn, not a blank page


def test_wide_tables_never_widen_the_page(tmp_path):
    # 11 long column names: the correlation matrices are wider than the page's column; they
    # scroll in their own box, and the page itself does not scroll sideways at 1280 px
    pytest.importorskip("matplotlib")
    import pandas as pd

    names = [f"REVENUE.SALES.{i}" for i in range(11)]
    X = pd.DataFrame(pysdcmicro.datasets.make_synthetic(60, 11, rng=0), columns=names)
    page = tmp_path / "wide.html"
    pysdcmicro.report(pysdcmicro.microaggregate(X, 3, method="mdav"), X).to_html(page, plots=False)
    page.write_text(page.read_text().replace(
        "</body>", "<script>window.addEventListener('load', () => { const d = document.documentElement; "
                   "const boxes = [...document.querySelectorAll('.wide')]; document.body.setAttribute('data-page', "
                   "String(d.scrollWidth - d.clientWidth)); document.body.setAttribute('data-boxes', boxes.map(b => "
                   "`${b.getBoundingClientRect().right <= d.clientWidth ? 1 : 0}:${b.scrollWidth > b.clientWidth ? 1 : 0}`"
                   ").join(',')); });</script></body>"))
    proc = _chromium("--window-size=1280,900", "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'data-page="0"' in proc.stdout, re.search(r"data-page=\"[^\"]*\"", proc.stdout)
    boxes = re.search(r'data-boxes="([^"]*)"', proc.stdout).group(1).split(",")
    assert all(b.startswith("1:") for b in boxes), boxes          # every box inside the page
    assert boxes[-2:] == ["1:1", "1:1"], boxes                    # the matrices scroll in their boxes
