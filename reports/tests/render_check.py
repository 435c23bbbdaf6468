#!/usr/bin/env python3
"""Opens an HTML report in headless Chromium and checks it renders: charts decoded, nothing fetched,
no console errors; saves a full-page screenshot. Exit 0 when it passes, 1 when not, 2 on bad usage.

Talks to Chromium through the DevTools protocol over --remote-debugging-pipe (file descriptors 3
and 4, NUL-terminated JSON), so it needs nothing beyond Debian's chromium and the standard library.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

# Collected from the page: every image with its decoded size, inline SVGs, fetched resources.
PROBE = """JSON.stringify({
  title: document.title,
  images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete,
                                                 w: i.naturalWidth, h: i.naturalHeight})),
  svgs: Array.from(document.querySelectorAll('svg')).map(s => s.getBoundingClientRect().width),
  resources: performance.getEntriesByType('resource').map(r => r.name),
  height: document.documentElement.scrollHeight})"""


def find_chromium():
    """The Chromium executable: $CHROMIUM, else Debian's names on PATH."""
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class DevTools:
    """A Chromium process and a synchronous DevTools session over its debugging pipe."""

    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def wire_pipes():
            # Move both ends above any descriptor the renaming could clobber, then onto 3 and 4.
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
                "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=wire_pipes, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the debugging pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=30):
        """Sends a command and returns its result; events that arrive meanwhile are kept."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=30):
        """Waits until an event named `method` has arrived."""
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read_message(deadline))

    def settle(self, seconds):
        """Collects events for `seconds` (late console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def close(self):
        """Ends the browser (our child only)."""
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)


def console_errors(events):
    """Console errors, uncaught exceptions and browser log errors (CSP, failed loads) of the page."""
    errors = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                                  for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            errors.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", ""))
    return errors


def inspect(html_path, screenshot, width=1280, max_height=16000):
    """Loads the page and returns (probe dict, [errors]); writes the screenshot when asked."""
    chromium = find_chromium()
    if not chromium:
        raise FileNotFoundError("no chromium on PATH (Debian package: chromium)")
    with tempfile.TemporaryDirectory(prefix="ocltune-chromium-") as profile:
        dt = DevTools(chromium, profile)
        try:
            target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                dt.call(f"{domain}.enable", session=session)
            dt.call("Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
            dt.call("Page.navigate", {"url": "file://" + os.path.abspath(html_path)}, session)
            dt.wait_event("Page.loadEventFired", timeout=60)
            dt.settle(0.5)
            probe = json.loads(dt.call("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                                       session)["result"]["value"])
            if screenshot:
                height = min(max_height, int(probe["height"]))
                dt.call("Emulation.setDeviceMetricsOverride",
                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
                shot = dt.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                               session, timeout=60)
                with open(screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            return probe, console_errors(dt.events)
        finally:
            dt.close()


def check(probe, errors, min_charts, min_width=200, min_height=100):
    """Problems with a rendered report: too few decoded charts, fetched resources, console errors."""
    problems = list(errors)
    charts = [i for i in probe["images"] if i["complete"] and i["w"] >= min_width and i["h"] >= min_height]
    charts += [w for w in probe["svgs"] if w >= min_width]
    broken = [i["alt"] for i in probe["images"] if not i["complete"] or i["w"] == 0]
    if len(charts) < min_charts:
        problems.append(f"{len(charts)} chart(s) rendered, expected at least {min_charts}")
    if broken:
        problems.append(f"images that did not decode: {broken}")
    if probe["resources"]:
        problems.append(f"the page fetched resources (must be self-contained): {probe['resources']}")
    if not probe["title"]:
        problems.append("the page has no title")
    return problems


def main(argv):
    """Command line: render_check.py REPORT.html [--screenshot PNG] [--min-charts N]."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("html")
    p.add_argument("--screenshot", default="")
    p.add_argument("--min-charts", type=int, default=1)
    args = p.parse_args(argv)
    if not os.path.exists(args.html):
        print(f"render_check: no such file {args.html}", file=sys.stderr)
        return 2
    probe, errors = inspect(args.html, args.screenshot)
    problems = check(probe, errors, args.min_charts)
    print(f"render_check: {args.html}: {len(probe['images'])} image(s), {len(probe['svgs'])} svg(s), "
          f"page height {probe['height']} px" + (f"; screenshot {args.screenshot}" if args.screenshot else ""))
    for problem in problems:
        print(f"render_check: FAIL {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
