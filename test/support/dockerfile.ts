// The Dockerfile read as data, and the files of one of its targets laid out in a directory, without a Docker
// engine: each stage's WORKDIR tree is built from its base stage, its COPY instructions (the build context
// filtered by .dockerignore, or another stage's tree) and the RUN steps that work on that tree (npm ci and
// the like, run here); steps that set up the operating system (packages, system directories) are reported
// instead, for the caller to account for.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  name: string;
  /** A base image (`node:24-bookworm-slim`) or an earlier stage's name. */
  from: string;
  instructions: Instruction[];
}

/** The stages of a Dockerfile, in order, with ARG defaults substituted. Continuation lines are joined. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const value = rest.replace(/\$\{(\w+)\}/g, (_, k: string) => args[k] ?? '');
    if (op === 'ARG' && stages.length === 0) {
      const [k, v = ''] = rest.split('=');
      args[k!] = v;
    } else if (op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(value);
      if (!m) throw new Error(`FROM ${value}: not understood`);
      stages.push({ name: m[2] ?? String(stages.length), from: m[1]!, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${op} before FROM`);
      stage.instructions.push({ op, args: value });
    }
  }
  return stages;
}

/** The arguments of an instruction in exec form (`["a", "b"]`) or shell words. */
export function words(args: string): string[] {
  return args.trim().startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/).filter(Boolean);
}

/** ENV of a stage and the stages it is built on, in order (later wins). */
export function stageEnv(stages: Stage[], name: string): Record<string, string> {
  const stage = stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage ${name}`);
  const base = stages.some((s) => s.name === stage.from) ? stageEnv(stages, stage.from) : {};
  const env = { ...base };
  for (const i of stage.instructions.filter((x) => x.op === 'ENV')) {
    for (const m of i.args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S*)/g)) env[m[1]!] = m[2]!;
  }
  return env;
}

/** The last instruction `op` of a stage or the stages it is built on (CMD, HEALTHCHECK, WORKDIR...). */
export function lastOf(stages: Stage[], name: string, op: string): string | undefined {
  const stage = stages.find((s) => s.name === name);
  if (!stage) return undefined;
  return stage.instructions.filter((i) => i.op === op).at(-1)?.args ?? lastOf(stages, stage.from, op);
}

/** .dockerignore as a predicate on context-relative paths (`*` within a path segment, `**` across, `!` re-includes; a
 *  pattern that matches a directory excludes what is under it). */
export function dockerignore(text: string): (rel: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      const re = pattern
        .split('/')
        .map((seg) =>
          seg === '**'
            ? '.*'
            : seg
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/');
      return { negate, re: new RegExp(`^${re}(/.*)?$`) };
    });
  return (rel) => {
    let ignored = false;
    for (const r of rules) if (r.re.test(rel)) ignored = !r.negate;
    return ignored;
  };
}

export interface Materialised {
  /** The stage's WORKDIR tree. */
  dir: string;
  /** Steps of this target and its bases not run here (RUN steps classified `skip`, COPY outside WORKDIR):
   *  they set up the system, not the tree, or would change this machine. */
  skipped: string[];
  /** Files copied from the build context, relative to the context. */
  contextFiles: string[];
}

export interface MaterialiseOptions {
  /** The build context (the repository). */
  context: string;
  /** A fresh directory to build in; each stage gets a subdirectory. */
  workDir: string;
  /** Decides what each `&&`-separated command of a RUN step is: `run` in the tree (with the shell command to
   *  use), or `skip` (system set-up; or something that must not run on this machine, such as emptying its
   *  npm cache). */
  classifyRun(command: string): { run: string } | 'skip';
  /** Environment of the RUN steps that are run. */
  runEnv: NodeJS.ProcessEnv;
}

/** Lays out each target's WORKDIR tree (and, first, the trees of the stages they copy from or are built on;
 *  each stage once). */
export function materialise(text: string, targets: string[], opts: MaterialiseOptions): Map<string, Materialised> {
  const stages = parseDockerfile(text);
  const ignored = dockerignore(
    fs.existsSync(path.join(opts.context, '.dockerignore')) ? fs.readFileSync(path.join(opts.context, '.dockerignore'), 'utf8') : '',
  );
  const done = new Map<string, Materialised>();
  const build = (name: string): Materialised => {
    const cached = done.get(name);
    if (cached) return cached;
    const stage = stages.find((s) => s.name === name);
    if (!stage) throw new Error(`no stage ${name}`);
    const dir = path.join(opts.workDir, name);
    const result: Materialised = { dir, skipped: [], contextFiles: [] };
    if (stages.some((s) => s.name === stage.from)) {
      const base = build(stage.from);
      linkTree(base.dir, dir);
      result.skipped.push(...base.skipped);
      result.contextFiles.push(...base.contextFiles);
    } else fs.mkdirSync(dir, { recursive: true });
    let workdir = lastOf(stages, stage.from, 'WORKDIR') ?? '/';
    for (const { op, args } of stage.instructions) {
      if (op === 'WORKDIR') workdir = path.posix.resolve(workdir, args);
      else if (op === 'COPY') {
        const parts = words(args);
        const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
        const [dest, ...sources] = parts.filter((p) => !p.startsWith('--')).reverse();
        sources.reverse();
        const target = path.posix.resolve(workdir, dest!);
        if (target !== workdir && !target.startsWith(`${workdir}/`)) {
          result.skipped.push(`COPY ${args}`);
          continue;
        }
        const destDir = path.join(dir, path.posix.relative(workdir, target));
        for (const source of sources) {
          if (from) {
            const src = path.join(build(from).dir, path.posix.relative(lastOf(stages, from, 'WORKDIR') ?? '/', source));
            linkTree(src, sources.length > 1 || dest!.endsWith('/') ? path.join(destDir, path.basename(source)) : destDir);
          } else {
            const copied = copyContext(
              opts.context,
              source,
              sources.length > 1 || dest!.endsWith('/') ? path.join(destDir, path.basename(source)) : destDir,
              ignored,
            );
            result.contextFiles.push(...copied);
          }
        }
      } else if (op === 'RUN') {
        const steps = args.split(/\s*&&\s*/);
        const kind = steps.map((s) => opts.classifyRun(s));
        if (kind.every((k) => k === 'skip')) {
          result.skipped.push(`RUN ${args}`);
          continue;
        }
        for (const [i, k] of kind.entries()) {
          if (k === 'skip') {
            result.skipped.push(`RUN ${steps[i]}`);
            continue;
          }
          execFileSync('sh', ['-c', k.run], { cwd: dir, env: opts.runEnv, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
        }
      }
    }
    done.set(name, result);
    return result;
  };
  return new Map(targets.map((t) => [t, build(t)]));
}

/** Copies a context path (file or directory) to `dest`, leaving out what .dockerignore excludes. */
function copyContext(context: string, source: string, dest: string, ignored: (rel: string) => boolean): string[] {
  const copied: string[] = [];
  const walk = (rel: string, to: string) => {
    if (ignored(rel)) return;
    const abs = path.join(context, rel);
    const st = fs.statSync(abs);
    if (st.isDirectory()) {
      fs.mkdirSync(to, { recursive: true });
      for (const e of fs.readdirSync(abs)) walk(path.posix.join(rel, e), path.join(to, e));
    } else {
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(abs, to);
      fs.chmodSync(to, st.mode);
      copied.push(rel);
    }
  };
  const rel = path.posix
    .normalize(source)
    .replace(/^\.\/?/, '')
    .replace(/\/$/, '');
  if (!fs.existsSync(path.join(context, rel))) throw new Error(`COPY ${source}: not in the build context`);
  walk(rel, dest);
  return copied;
}

/** A tree copied as hard links (a stage's tree reused by a later stage costs no space or time). */
function linkTree(src: string, dest: string): void {
  const st = fs.lstatSync(src);
  if (st.isDirectory()) {
    fs.mkdirSync(dest, { recursive: true });
    for (const e of fs.readdirSync(src)) linkTree(path.join(src, e), path.join(dest, e));
  } else if (st.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(src), dest);
  } else {
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.linkSync(src, dest);
  }
}
