import { startFakeModelServer } from "@wakeloop/fake-model";
import { benchScript } from "./bench-script";

/*
 * The fake model in a process of its own, so a bench can read its CPU apart from the client's: sends
 * `{ url }` to the parent once listening, and closes when the parent says `close` or goes away.
 */

const fake = await startFakeModelServer({ script: benchScript() });
process.send?.({ url: fake.url });
const close = () => {
  fake.close().then(() => process.exit(0));
};
process.on("message", close);
process.on("disconnect", close);
