import { WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { execOnce } from "../container-exec";

// Chromium inside the sandbox: Debian's package in the browser image (infra/sandbox-image.sh browser),
// started as the sandbox user on the container's own loopback, where only the sandbox can reach its
// DevTools port (the container has no network, or its own fenced one). Its state lives in /tmp (tmpfs),
// so it is gone when the container stops, like every other process of the sandbox.

const DIR = "/tmp/.wl-browser";

/** Flags for a headless browser in a container: no GPU, no /dev/shm (64 MB in Docker), nothing phoning home. */
const FLAGS = [
  "--headless",
  // The container is the sandbox (no capabilities, no new privileges, seccomp): Chromium's own
  // namespace sandbox cannot be set up inside it.
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-extensions",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-crash-reporter",
  "--mute-audio",
  "--hide-scrollbars",
  "--window-size=1280,720",
  "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0",
  `--user-data-dir=${DIR}/profile`,
];

/**
 * Starts Chromium unless it already runs (a runner restart finds it running), and prints its process
 * id, DevTools port and browser path. Chromium leads its own process group so one signal stops it all;
 * it offers itself to the OOM killer first, so the sandbox's memory limit never takes the agent.
 */
const LAUNCH = `
set -u
dir=${DIR}
if [ -s "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && [ -n "$(sed -n 2p "$dir/profile/DevToolsActivePort" 2>/dev/null)" ]; then
  cat "$dir/pid"; cat "$dir/profile/DevToolsActivePort"; exit 0
fi
command -v chromium >/dev/null 2>&1 || { echo "this sandbox image has no chromium" >&2; exit 3; }
rm -rf "$dir"; mkdir -p "$dir/profile"
echo 1000 > /proc/self/oom_score_adj
setsid chromium ${FLAGS.join(" ")} about:blank </dev/null >"$dir/chromium.log" 2>&1 &
echo $! > "$dir/pid"
i=0
while [ $i -lt 600 ]; do
  # Two lines, port and path, with no final newline: complete once the second line is there.
  if [ -n "$(sed -n 2p "$dir/profile/DevToolsActivePort" 2>/dev/null)" ]; then
    cat "$dir/pid"; cat "$dir/profile/DevToolsActivePort"; exit 0
  fi
  if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "chromium exited: $(tail -c 2000 "$dir/chromium.log")" >&2; exit 1
  fi
  sleep 0.05; i=$((i + 1))
done
echo "chromium opened no DevTools port within 30 s" >&2; exit 1
`;

/** Stops the browser's whole process group, if one runs; prints "closed" when it stopped one. */
const STOP = `
dir=${DIR}
[ -s "$dir/pid" ] || exit 0
pid=$(cat "$dir/pid"); rm -f "$dir/pid"
kill -TERM -- "-$pid" 2>/dev/null && echo closed
i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL -- "-$pid" 2>/dev/null || true
`;

export type ChromiumEndpoint = { pid: number; port: number; path: string };

/** The running Chromium of the container, started when there is none. */
export async function startChromium(container: Docker.Container): Promise<ChromiumEndpoint> {
  const result = await execOnce(container, ["bash", "-c", LAUNCH]);
  if (result.exitCode !== 0) {
    const why = result.stderr.trim().slice(-2_000) || `exit code ${result.exitCode}`;
    throw new WakeloopError(
      "browser_unavailable",
      result.exitCode === 3
        ? "this sandbox's image has no browser; use a browser image (wakeloop-sandbox-browser:bookworm)"
        : `the browser could not start in the sandbox: ${why}`,
    );
  }
  const [pid, port, path] = result.stdout.trim().split("\n");
  const endpoint = { pid: Number(pid), port: Number(port), path: path ?? "" };
  if (
    !Number.isInteger(endpoint.pid) ||
    !Number.isInteger(endpoint.port) ||
    endpoint.port <= 0 ||
    endpoint.port > 65_535 ||
    !/^\/devtools\/browser\/[A-Za-z0-9-]{1,64}$/.test(endpoint.path)
  ) {
    throw new WakeloopError(
      "browser_unavailable",
      "the browser in the sandbox gave no usable DevTools address",
    );
  }
  return endpoint;
}

/** Stops the container's Chromium; true when one was running. */
export async function stopChromium(container: Docker.Container): Promise<boolean> {
  const result = await execOnce(container, ["bash", "-c", STOP]);
  return result.stdout.includes("closed");
}
