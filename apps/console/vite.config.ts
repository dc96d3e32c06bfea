import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Built once (`npm run build`) into dist/, which the gateway serves at /console on the API's origin.
// `npm run dev -w @wakeloop/console` serves it with hot reload and sends /v1 to a local gateway.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  server: { proxy: { "/v1": "http://127.0.0.1:8080" } },
});
