# One image for every Wakeloop service; the APP build argument picks which one it runs. The services
# run compiled: a build stage bundles them to plain JavaScript (`npm run build`, infra/build.mjs), and
# the final stage holds that output and the production dependencies of APP only (no tsx, no
# TypeScript, no dev dependencies). Build from the repository root:
#   docker build -f infra/docker/app.Dockerfile --build-arg APP=gateway -t wakeloop-gateway .
# On a machine that cannot pull, `bash infra/node-image.sh` makes the node:20-bookworm-slim base locally.

# Only the manifests, so the dependency layers below are rebuilt when they change and not on every edit.
FROM node:20-bookworm-slim AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete \
 && find . -type d -empty -delete

# Every dependency (esbuild among them), then the sources, compiled.
FROM node:20-bookworm-slim AS build
WORKDIR /srv/wakeloop
COPY --from=manifests /src ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# What APP needs at run time: the third-party packages its bundle imports (internal packages are
# inlined in it), from the same lock file.
FROM node:20-bookworm-slim AS production-deps
WORKDIR /srv/wakeloop
COPY --from=manifests /src ./
ARG APP=gateway
RUN npm ci --omit=dev --no-audit --no-fund --workspace "apps/${APP}"

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /srv/wakeloop
ARG APP=gateway
ENV WL_APP=${APP}
# The sandbox-runner makes and loop-mounts each session's workspace filesystem (mkfs.ext4, mount).
RUN if [ "$APP" = "sandbox-runner" ]; then \
      apt-get update -q && apt-get install -y -q --no-install-recommends e2fsprogs mount \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=production-deps /srv/wakeloop ./
# The service (and, for the gateway, the create-tenant CLI), plus the migrate CLI that every image
# carries: `node packages/db/dist/migrate-cli.js --app-role wakeloop_app` (every app depends on the db).
COPY --from=build /srv/wakeloop/apps/${APP}/dist apps/${APP}/dist
COPY --from=build /srv/wakeloop/packages/db/dist packages/db/dist
# The web console's static files, served by the gateway at /console (a few hundred kB in every image).
COPY --from=build /srv/wakeloop/apps/console/dist apps/console/dist
USER node
# node itself is PID 1 (no npx or shell in between), so SIGTERM from `docker stop` reaches the
# service's own handler: readiness off, drain, flush, exit 0.
CMD ["sh", "-c", "exec node --enable-source-maps \"apps/${WL_APP}/dist/main.js\""]
