# The controller image for users with Docker/Podman/BuildKit:  docker build -t cloneset-controller:dev .
# Without a daemon, `npm run image` (hack/build-image.sh) builds the same layout (/app, the same entrypoint, user
# 65532) into an OCI archive from Debian packages and the npm registry.
#
# Runtime contract (what config/manager/deployment.yaml and charts/cloneset-controller rely on):
# - node is PID 1 and is the entrypoint itself (no shell in between), so SIGTERM reaches src/main.ts, which stops
#   the work queues and releases the leader Lease before exiting;
# - nothing is written to the root filesystem (readOnlyRootFilesystem: true works; /tmp is an emptyDir in the chart);
# - runs as the unprivileged uid/gid 65532 (the distroless "nonroot" id), so runAsNonRoot can be verified.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; the sources are TypeScript run by Node's type stripping, so nothing is compiled.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# src/ without tests and the local control plane launcher (.dockerignore)
COPY src ./src
USER 65532:65532
EXPOSE 8000 8080 9443
ENTRYPOINT ["node", "--disable-warning=ExperimentalWarning", "/app/src/main.ts"]
