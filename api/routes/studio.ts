// The template studio (/studio): a page served by the API that calls only the public /v1 routes. Its files
// are plain ES modules in studio/ (no build step) and pdf.js from node_modules (pdfjs-dist); nothing is
// loaded from elsewhere (Content-Security-Policy 'self'). GET /studio/dev-credentials hands the page the
// development credentials, and only on a `docgen start` on embedded defaults, to a loopback caller that
// named a loopback host (never through a proxy): a multi-tenant deployment never answers it.
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';

export const STUDIO_PATH = '/studio';

const STUDIO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'studio');
const PDFJS_DIR = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
};

/** The studio's own files and the pdf.js files it loads: names only, no paths, so nothing else is reachable. */
const STUDIO_FILE = /^[a-z0-9-]+\.(?:js|css|html|svg)$/;
const VENDOR: Record<string, string> = {
  'pdf.min.mjs': path.join(PDFJS_DIR, 'build', 'pdf.min.mjs'),
  'pdf.worker.min.mjs': path.join(PDFJS_DIR, 'build', 'pdf.worker.min.mjs'),
};
const FONT_FILE = /^[A-Za-z0-9_-]+\.(?:pfb|ttf)$/;

const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

export interface StudioOptions {
  /** Development credentials for the page: given only when the service runs as `docgen start` on embedded defaults. */
  devCredentials?: () => Promise<unknown>;
}

const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const studioRoutes: FastifyPluginAsyncTypebox<StudioOptions> = async (app, opts) => {
  const send = async (reply: FastifyReply, file: string, cache: string) => {
    let body: Buffer;
    try {
      body = await fs.readFile(file);
    } catch {
      throw new ApiError('NOT_FOUND_BY_ID', `no such studio file: ${path.basename(file)}`);
    }
    return reply
      .header('content-type', TYPES[path.extname(file)] ?? 'application/octet-stream')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', cache)
      .send(body);
  };
  const hidden = { schema: { hide: true } };

  app.get(STUDIO_PATH, hidden, async (_request, reply) => send(reply, path.join(STUDIO_DIR, 'index.html'), 'no-cache'));
  app.get(
    `${STUDIO_PATH}/:file`,
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const { file } = request.params;
      if (!STUDIO_FILE.test(file)) throw new ApiError('NOT_FOUND_BY_ID', `no such studio file: ${file}`);
      return send(reply, path.join(STUDIO_DIR, file), 'no-cache');
    },
  );
  app.get(
    `${STUDIO_PATH}/vendor/:file`,
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const file = VENDOR[request.params.file];
      if (file === undefined) throw new ApiError('NOT_FOUND_BY_ID', `no such studio file: ${request.params.file}`);
      return send(reply, file, 'public, max-age=86400');
    },
  );
  app.get(
    `${STUDIO_PATH}/vendor/standard_fonts/:file`,
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      if (!FONT_FILE.test(request.params.file)) throw new ApiError('NOT_FOUND_BY_ID', `no such studio file: ${request.params.file}`);
      return send(reply, path.join(PDFJS_DIR, 'standard_fonts', request.params.file), 'public, max-age=86400');
    },
  );
  app.get(`${STUDIO_PATH}/dev-credentials`, hidden, async (request, reply) => {
    const host = (request.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const local =
      opts.devCredentials !== undefined &&
      LOOPBACK_ADDRESSES.has(request.socket.remoteAddress ?? '') &&
      request.headers['x-forwarded-for'] === undefined &&
      request.headers.forwarded === undefined &&
      LOOPBACK_HOSTS.has(host);
    if (!local || opts.devCredentials === undefined)
      throw new ApiError('NOT_FOUND_BY_ID', 'no development credentials here: sign in with your API key and access token');
    return reply.header('cache-control', 'no-store').send(await opts.devCredentials());
  });
};

export default studioRoutes;
