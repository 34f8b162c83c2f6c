// Incremental updates of a PDF, as an editor saving a change appends them (ISO 32000-1 7.5.6): the original
// bytes stay, the changed objects follow with a new cross-reference section whose /Prev points to the
// previous one. The file's objects are read with qpdf (`qpdf --json`); the update changes the page count
// (drops the last page, or adds a copy of the first) and is written as a classic xref table, or as an xref
// stream with the changed objects compressed into a new object stream.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** A value of qpdf's JSON (v2) in PDF syntax. */
function pdfValue(v: Json): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') {
    if (/^\d+ \d+ R$/.test(v) || v.startsWith('/')) return v;
    if (v.startsWith('u:')) return `(${v.slice(2).replace(/([()\\])/g, '\\$1')})`;
    if (v.startsWith('b:')) return `<${v.slice(2)}>`;
    throw new Error(`qpdf JSON value not handled: ${v}`);
  }
  if (Array.isArray(v)) return `[${v.map(pdfValue).join(' ')}]`;
  return `<<${Object.entries(v)
    .map(([k, x]) => `${k} ${pdfValue(x)}`)
    .join(' ')}>>`;
}

interface QpdfJson {
  qpdf: [unknown, Record<string, { value?: Record<string, Json>; stream?: { dict: Record<string, Json> } }>];
}

export interface PageUpdate {
  change: 'drop-last-page' | 'add-page';
  /** table: a classic xref table, the objects uncompressed; stream: an xref stream, the objects in a new
   *  object stream; hybrid: both, as in a file readable by pre-1.5 readers (ISO 32000-1 7.5.8.4): the
   *  table lists the object stream and the xref stream only, its trailer's /XRefStm names the xref stream,
   *  which places the changed objects in the object stream (a pre-1.5 reader keeps their old versions). */
  xref: 'table' | 'stream' | 'hybrid';
  /** The page tree's /Count as an indirect object (`/Count 40 0 R`, the number in object 40). */
  indirectCount?: boolean;
}

export function appendPageUpdate(bytes: Uint8Array, update: PageUpdate): Uint8Array {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-pdf-update-'));
  let objects: QpdfJson['qpdf'][1];
  try {
    const file = path.join(dir, 'in.pdf');
    fs.writeFileSync(file, bytes);
    objects = (
      JSON.parse(
        execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }),
      ) as QpdfJson
    ).qpdf[1];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const trailer = (objects.trailer?.value ?? objects.trailer?.stream?.dict)!;
  const num = (ref: Json) => Number(String(ref).split(' ')[0]);
  const catalog = objects[`obj:${String(trailer['/Root'])}`]!.value!;
  const pagesRef = String(catalog['/Pages']);
  const pages = { ...objects[`obj:${pagesRef}`]!.value! };
  const kids = [...(pages['/Kids'] as string[])];
  let size = Number(trailer['/Size']);
  const changed = new Map<number, string>();
  if (update.change === 'drop-last-page') {
    kids.pop();
  } else {
    const first = objects[`obj:${kids[0]!}`]!.value!;
    const added = size++;
    changed.set(added, pdfValue({ ...first, '/Parent': pagesRef }));
    kids.push(`${added} 0 R`);
  }
  let count: Json = kids.length;
  if (update.indirectCount) {
    const holder = size++;
    changed.set(holder, String(kids.length));
    count = `${holder} 0 R`;
  }
  changed.set(num(pagesRef), pdfValue({ ...pages, '/Kids': kids, '/Count': count }));

  const text = Buffer.from(bytes).toString('latin1');
  const prev = Number(/startxref\s+(\d+)\s*%%EOF\s*$/.exec(text)?.[1]);
  const keep = ['/Root', '/Info', '/ID']
    .filter((k) => trailer[k] !== undefined)
    .map((k) => `${k} ${pdfValue(trailer[k]!)}`)
    .join(' ');
  const parts: Buffer[] = [Buffer.from(bytes)];
  let at = bytes.byteLength;
  const push = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
    parts.push(b);
    at += b.byteLength;
  };
  if (!text.endsWith('\n')) push('\n');

  if (update.xref === 'table') {
    const offsets = new Map<number, number>();
    for (const [n, body] of changed) {
      offsets.set(n, at);
      push(`${n} 0 obj\n${body}\nendobj\n`);
    }
    const xrefAt = at;
    push('xref\n');
    for (const n of [...offsets.keys()].sort((a, b) => a - b)) push(`${n} 1\n${String(offsets.get(n)).padStart(10, '0')} 00000 n \n`);
    push(`trailer\n<< /Size ${size} ${keep} /Prev ${prev} >>\nstartxref\n${xrefAt}\n%%EOF\n`);
  } else {
    // The changed objects in one new object stream; then the xref stream: the object stream and itself
    // at byte offsets (type 1), the changed objects inside the object stream (type 2).
    const objStm = size++;
    const xrefNum = size++;
    const inside = [...changed.keys()];
    let header = '';
    let body = '';
    for (const n of inside) {
      header += `${n} ${body.length} `;
      body += `${changed.get(n)!}\n`;
    }
    const data = deflateSync(Buffer.from(header + body, 'latin1'));
    const objStmAt = at;
    push(
      `${objStm} 0 obj\n<< /Type /ObjStm /N ${inside.length} /First ${header.length} /Filter /FlateDecode /Length ${data.byteLength} >>\nstream\n`,
    );
    push(data);
    push('\nendstream\nendobj\n');
    const xrefAt = at;
    const hybrid = update.xref === 'hybrid';
    const rows: [number, number, number, number][] = [
      ...inside.map((n, i) => [n, 2, objStm, i] as [number, number, number, number]),
      ...(hybrid
        ? []
        : [[objStm, 1, objStmAt, 0] as [number, number, number, number], [xrefNum, 1, xrefAt, 0] as [number, number, number, number]]),
    ];
    rows.sort((a, b) => a[0] - b[0]);
    const entries = Buffer.alloc(rows.length * 7);
    rows.forEach(([, type, f2, f3], i) => {
      entries.writeUInt8(type, i * 7);
      entries.writeUInt32BE(f2, i * 7 + 1);
      entries.writeUInt16BE(f3, i * 7 + 5);
    });
    const index = rows.map(([n]) => `${n} 1`).join(' ');
    // A hybrid section's stream lists the compressed objects only, and has no /Prev of its own.
    push(
      `${xrefNum} 0 obj\n<< /Type /XRef /Size ${size} ${hybrid ? '' : `${keep} /Prev ${prev} `}/W [1 4 2] /Index [${index}] /Length ${entries.byteLength} >>\nstream\n`,
    );
    push(entries);
    push('\nendstream\nendobj\n');
    if (!hybrid) {
      push(`startxref\n${xrefAt}\n%%EOF\n`);
    } else {
      const tableAt = at;
      push('xref\n');
      for (const [n, offset] of [
        [objStm, objStmAt],
        [xrefNum, xrefAt],
      ] as const)
        push(`${n} 1\n${String(offset).padStart(10, '0')} 00000 n \n`);
      push(`trailer\n<< /Size ${size} ${keep} /Prev ${prev} /XRefStm ${xrefAt} >>\nstartxref\n${tableAt}\n%%EOF\n`);
    }
  }
  return new Uint8Array(Buffer.concat(parts));
}
