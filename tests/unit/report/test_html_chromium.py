"""index.html as a person sees it: a small report's page rendered by headless Chromium (Debian's package
`chromium`), its DOM read back, and a screenshot checked for the tables' text colour and the figures' colours."""

import shutil
import subprocess

import numpy as np
import pytest

from dlm_bench.report import build_report

from .test_compare import write_sweep

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium: apt-get install -y chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--hide-scrollbars", "--allow-file-access-from-files"]


def render(page, *args, timeout=120):
    return subprocess.run([CHROMIUM, *FLAGS, *args, page.as_uri()], capture_output=True, text=True, timeout=timeout)


def screenshot(page, png, size="1280,5000"):
    done = render(page, f"--screenshot={png}", f"--window-size={size}")
    assert png.is_file(), done.stderr[-2000:]
    import matplotlib.image

    return matplotlib.image.imread(png)[..., :3]


def test_index_html_shows_every_table_and_figure_in_chromium(tmp_path):
    write_sweep(tmp_path / "runs")
    made = build_report([tmp_path / "runs"], tmp_path / "rep")
    page = made["html"]
    dom = render(page, "--dump-dom").stdout
    # the tables, rendered as tables, the selected and paired ones first
    # selected, paired, and the summary's two: every beta, then the selected rows beside them
    assert sum(p.suffix == ".md" for p in made["tables"]) == 3 and dom.count("<table>") == 4
    assert dom.index("mine_selected") < dom.index("mine_paired") < dom.index("mine_summary")
    assert "svgp-dlm (beta selected)" in dom and "Wilcoxon signed-rank" in dom and "paired t" in dom
    assert dom.count("<img") == sum(p.suffix == ".png" for p in made["figures"]) >= 2
    img = screenshot(page, tmp_path / "page.png")
    dark = (img.max(axis=2) < 0.3).mean()  # text and table rules
    # matplotlib's first colour (#1f77b4): the figures' markers and lines, nowhere else on the page
    blue = (np.abs(img - np.array([0x1F, 0x77, 0xB4]) / 255).max(axis=2) < 0.08).sum()
    assert dark > 0.001 and blue > 200, (dark, blue)
