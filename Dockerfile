# The controller image for users with Docker/Podman/BuildKit:  docker build -t cloneset-controller:dev .
# Without a daemon, `npm run image` (hack/build-image.sh) builds the same layout (/app, the same entrypoint, user
# 65532) into an OCI archive from Debian packages and the npm registry.
#
# Runtime contract (what config/manager/deployment.yaml and charts/cloneset-controller rely on):
# - node is PID 1 and is the entrypoint itself (no shell in between), so SIGTERM reaches dist/main.js (src/main.ts,
#   compiled), which stops the work queues and releases the leader Lease before exiting;
# - nothing is written to the root filesystem (readOnlyRootFilesystem: true works; /tmp is an emptyDir in the chart);
# - runs as the unprivileged uid/gid 65532 (the distroless "nonroot" id), so runAsNonRoot can be verified.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
# src/ compiled to plain JavaScript (tsconfig.build.json): running the .ts sources through Node's type stripping
# would load a TypeScript transformer into the controller, ~30 MiB of RSS for its whole life (docs/performance.md).
RUN node_modules/.bin/tsc -p tsconfig.build.json

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
# JSON logs (one object a line, ISO-8601 time) even when run with a terminal; --log-format overrides it
ENV CLONESET_CONTROLLER_LOG_FORMAT=json
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# package.json: "type": "module", and the version the client reports in its user agent
COPY package.json ./
COPY --from=build /app/dist ./dist
USER 65532:65532
EXPOSE 8000 8080 9443
# bin/cloneset-controller's node flags: a small young generation and size-over-speed heap growth (docs/performance.md)
ENTRYPOINT ["node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/main.js"]
