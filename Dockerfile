# syntax=docker/dockerfile:1.7
# One image for every neon-stream process on Kubernetes (the Deployments pick the command:
# `pipeline --stages …`, `intake`, `es-api-keys`). Built from the same `npm run build` output as
# the npm package, with the embedding model baked in (verified against its pinned SHA-256), so a pod
# needs neither a download nor a writable cache. Runs as a non-root user on distroless Node.
#
#   docker build -t neon-stream:0.1.0 .
ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

# Compile the TypeScript and fetch the model.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY bin bin
COPY infra infra
COPY processors processors
COPY schemas schemas
COPY service service
COPY streams streams
RUN npm run build
RUN NEON_CACHE_DIR=/opt/neon/cache node dist/bin/neon.js infra prepare --model-only

# Production dependencies only, without the native binaries of other platforms.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts \
 && arch="$(node -p 'process.arch')" \
 && find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 1 -maxdepth 1 ! -name linux -exec rm -rf {} + \
 && find node_modules/onnxruntime-node/bin/napi-v6/linux -mindepth 1 -maxdepth 1 ! -name "$arch" -exec rm -rf {} +

FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production \
    HOME=/tmp \
    NEON_CACHE_DIR=/opt/neon/cache
COPY --from=dependencies /app/node_modules node_modules
COPY --from=build /app/package.json package.json
COPY --from=build /app/dist dist
# Read at run time: the Avro schemas (with their history, for evolution) and the dashboard's files.
COPY schemas/avro schemas/avro
COPY web web
# The bundled sample feed and the live-feed list, for `neon start` (embedded mode) in the image.
COPY samples samples
COPY --from=build /opt/neon/cache /opt/neon/cache
# The uid the Deployments run as (any non-root uid works: everything here is world-readable).
USER 10001:10001
EXPOSE 8080 8081 9464
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/bin/neon.js"]
CMD ["--help"]
