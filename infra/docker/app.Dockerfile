# syntax=docker/dockerfile:1
# One image for every Wakeloop service; the APP build argument picks which one it runs. Services run
# their TypeScript source with tsx, as in development (internal packages resolve to source; there is
# no build step). Build from the repository root:
#   docker build -f infra/docker/app.Dockerfile --build-arg APP=gateway -t wakeloop-gateway .

# Only the manifests, so the dependency layer below is rebuilt when they change and not on every edit.
FROM node:20-bookworm-slim AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete \
 && find . -type d -empty -delete

FROM node:20-bookworm-slim AS deps
WORKDIR /srv/wakeloop
COPY --from=manifests /src ./
# Dev dependencies included: tsx, the runtime, is one of them.
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /srv/wakeloop
COPY --from=deps /srv/wakeloop ./
COPY . .
ARG APP=gateway
ENV WL_APP=${APP}
# The sandbox-runner makes and loop-mounts each session's workspace filesystem (mkfs.ext4, mount).
RUN if [ "$APP" = "sandbox-runner" ]; then \
      apt-get update -q && apt-get install -y -q --no-install-recommends e2fsprogs mount \
      && rm -rf /var/lib/apt/lists/*; \
    fi
USER node
# node itself is PID 1 (no npx or shell in between), so SIGTERM from `docker stop` reaches the
# service's own handler: readiness off, drain, flush, exit 0.
CMD ["sh", "-c", "exec node --import tsx \"apps/${WL_APP}/src/main.ts\""]
