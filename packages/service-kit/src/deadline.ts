export type DeadlineOutcome =
  | { status: "done" }
  | { status: "timed_out" }
  | { status: "failed"; error: unknown };

/**
 * Runs `work` for at most `ms`. At the deadline the signal aborts (so the work can cut its losses) and
 * the outcome is `timed_out` without waiting further: shutdown must end even when a step hangs.
 */
export async function withDeadline(
  ms: number,
  work: (signal: AbortSignal) => Promise<unknown>,
): Promise<DeadlineOutcome> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<DeadlineOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`deadline of ${ms} ms passed`));
      resolve({ status: "timed_out" });
    }, ms);
  });
  const finished = work(controller.signal).then(
    (): DeadlineOutcome => ({ status: "done" }),
    (error: unknown): DeadlineOutcome => ({ status: "failed", error }),
  );
  try {
    return await Promise.race([finished, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
