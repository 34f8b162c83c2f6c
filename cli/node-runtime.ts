// Process-wide V8 settings for the runtime docgen runs on, applied on import, before anything compiles
// WebAssembly. cli/docgen.mjs imports this first; the test configs pass the same flag to their processes.
import v8 from 'node:v8';

/**
 * Node 24's V8 (13.6) can free a WebAssembly import wrapper twice when its wasm code GC marks the wrapper
 * dying while a tier-up takes a new reference to it: the whole process aborts with `Check failed:
 * jit_page_->allocations_.erase(addr) == 1` (SIGTRAP) or a SIGSEGV (nodejs/node#66366; fixed in V8
 * 9b8ca54d5a, not yet in a 24.x release; Node 22 and 26 were not seen to hit it). docgen runs wasm in
 * PGlite (the embedded database), resvg (SVG images, inside merge threads that are ended on a timeout or
 * when idle) and undici, so one tenant's template could take the process down. Without wasm code GC, dead
 * wasm code stays until its whole module goes (16 PGlite instances opened and closed in one process:
 * the same RSS with and without). The flag is refused in NODE_OPTIONS, hence set here.
 */
export const WASM_CODE_GC_OFF = '--no-wasm-code-gc';

export function wasmCodeGcAffected(version = process.versions.node): boolean {
  return Number(version.split('.')[0]) === 24;
}

if (wasmCodeGcAffected()) v8.setFlagsFromString(WASM_CODE_GC_OFF);
