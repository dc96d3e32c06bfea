import { WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { BROWSER_LAUNCHER, execOnce } from "../container-exec";
import { BROWSER_HOME, BROWSER_RECORD_DIR, BROWSER_UID } from "../container-spec";

// Chromium inside the sandbox: Debian's package in the browser image (infra/sandbox-image.sh browser),
// on the container's own loopback, where only the sandbox can reach its DevTools port (the container
// has no network, or its own fenced one). It runs as its own uid (BROWSER_UID), its profile in a
// tmpfs HOME only that uid can open, so the sandbox user's commands can neither signal it nor read
// or plant its files. The launcher runs as the container's root and keeps the record of the process
// and its endpoint in a root-owned tmpfs: neither the sandbox user nor a page that took Chromium over
// can point the runner at another port. All of it is gone when the container stops.

const PROFILE = `${BROWSER_HOME}/profile`;

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
  `--user-data-dir=${PROFILE}`,
];

/** Runs the rest of the line as the browser's uid (the launcher keeps CAP_SETUID/SETGID for it). */
const AS_BROWSER = `setpriv --reuid=${BROWSER_UID} --regid=${BROWSER_UID} --clear-groups --`;

/** Shell functions of the launcher and the stopper: the recorded process, when it still is Chromium's. */
const RECORD = `
rec=${BROWSER_RECORD_DIR}
running() { pid=$(cat "$rec/pid" 2>/dev/null) && [ -n "$pid" ] && [ "$(stat -c %u "/proc/$pid" 2>/dev/null)" = ${BROWSER_UID} ]; }
`;

/**
 * Starts Chromium unless it already runs (a runner restart finds it running), and prints its process
 * id, DevTools port and browser path from the root-owned record. Chromium leads its own process group
 * so one signal stops it all; it offers itself to the OOM killer first, so the sandbox's memory limit
 * never takes the agent.
 */
const LAUNCH = `
set -u
${RECORD}
if running && [ -s "$rec/endpoint" ]; then cat "$rec/pid" "$rec/endpoint"; exit 0; fi
command -v chromium >/dev/null 2>&1 || { echo "this sandbox image has no chromium" >&2; exit 3; }
rm -f "$rec/pid" "$rec/endpoint"
${AS_BROWSER} rm -rf ${PROFILE} ${BROWSER_HOME}/chromium.log
echo 1000 > /proc/self/oom_score_adj
${AS_BROWSER} sh -c 'exec setsid chromium "$@" </dev/null >${BROWSER_HOME}/chromium.log 2>&1' sh ${FLAGS.join(" ")} about:blank &
echo $! > "$rec/pid"
i=0
while [ $i -lt 600 ]; do
  # Two lines, port and path, with no final newline: complete once the second line is there.
  port=$(${AS_BROWSER} cat ${PROFILE}/DevToolsActivePort 2>/dev/null)
  if [ -n "$(printf '%s' "$port" | sed -n 2p)" ]; then
    printf '%s' "$port" > "$rec/endpoint"
    cat "$rec/pid" "$rec/endpoint"; exit 0
  fi
  if ! running; then echo "chromium exited: $(${AS_BROWSER} tail -c 2000 ${BROWSER_HOME}/chromium.log)" >&2; exit 1; fi
  sleep 0.05; i=$((i + 1))
done
echo "chromium opened no DevTools port within 30 s" >&2; exit 1
`;

/** Stops the browser's whole process group, if one runs; prints "closed" when it stopped one. */
const STOP = `
${RECORD}
running || exit 0
rm -f "$rec/pid" "$rec/endpoint"
${AS_BROWSER} kill -TERM -- "-$pid" 2>/dev/null && echo closed
i=0; while [ -d "/proc/$pid" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
${AS_BROWSER} kill -KILL -- "-$pid" 2>/dev/null || true
`;

export type ChromiumEndpoint = { pid: number; port: number; path: string };

/** The running Chromium of the container, started when there is none. */
export async function startChromium(container: Docker.Container): Promise<ChromiumEndpoint> {
  const result = await execOnce(container, ["bash", "-c", LAUNCH], { as: BROWSER_LAUNCHER });
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
  const result = await execOnce(container, ["bash", "-c", STOP], { as: BROWSER_LAUNCHER });
  return result.stdout.includes("closed");
}
