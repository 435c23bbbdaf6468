"""The Chromium render check itself: a broken page must fail it (so a passing report means something)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))

import render_check  # noqa: E402

# A 1x1 PNG is decoded but too small to count as a chart; the external image is blocked by the
# policy, and the inline script throws.
BROKEN = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; script-src 'unsafe-inline'">
</head><body><img alt="tiny" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==">
<img alt="external" src="http://203.0.113.1/chart.png"><script>console.error("boom"); undefined_call();</script>
</body></html>"""


class RenderCheckTest(unittest.TestCase):
    def test_broken_page_fails_with_every_reason(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "broken.html")
            with open(path, "w", encoding="utf-8") as f:
                f.write(BROKEN)
            probe, errors = render_check.inspect(path, "")
            problems = "\n".join(render_check.check(probe, errors, min_charts=1))
        self.assertIn("console.error: boom", problems)
        self.assertIn("exception", problems)
        self.assertIn("Content Security Policy", problems)
        self.assertIn("0 chart(s) rendered", problems)
        self.assertIn("external", problems)


if __name__ == "__main__":
    unittest.main()
