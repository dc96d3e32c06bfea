import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/**
 * Chromium for browser tests: Debian's `chromium` package (infra/chromium.sh installs it), driven by
 * playwright-core, which downloads no browser of its own. `CHROMIUM_PATH` names another binary.
 */
export function chromiumPath(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
    return configured;
  }
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error(
      "chromium is not installed: run `bash infra/chromium.sh` (apt-get install chromium) or set CHROMIUM_PATH",
    );
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespace for Chromium's sandbox; the pages are our own console.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
}
