import { describeLocation } from './errors.ts';
import type { ErrorLocation } from './errors.ts';
import { parseExpression } from './expression.ts';
import type { Expr } from './expression.ts';
import type { InspectResult } from './inspect.ts';

/**
 * The data a template expects, inferred from its tags (`inspect`), as a JSON Schema (draft 2020-12),
 * and plausible sample data generated from that schema. Loops become arrays of objects whose
 * properties are the tags inside the loop, sections without data inside and inverted sections
 * booleans, comparisons and filters give types (`| currency` a number, `| date` a date string,
 * `| sum:"net"` an array of objects with a number `net`), images accept a data URL or
 * `{data, width, height}`. A name inside a loop that an enclosing scope already has is the enclosing
 * one (the engine looks names up outwards). Every property is required (a name the data lacks renders
 * empty, `missing_value`) except where the tag gives a fallback (`| default:x`, `??`) and in loop items:
 * a name an item lacks is read from the enclosing scopes, which a schema cannot say. The sample fills
 * every property, so it renders without a missing value.
 */

export type JsonSchema = { [key: string]: unknown };

type Evidence =
  | 'any'
  | 'string'
  | 'number'
  | 'boolean'
  | 'date'
  | 'currencyCode'
  | 'ean13'
  | 'image'
  | 'html'
  | 'htmlInline'
  | 'rawxml'
  | 'array'
  | 'object';

interface ObjectNode {
  kind: 'object';
  props: Map<string, Prop>;
  /** A loop's item: names it lacks are looked up in the enclosing scopes, so none is required. */
  scope?: true;
}
interface ArrayNode {
  kind: 'array';
  items: Node | undefined;
  /** Repeats slides (`{:items}`) rather than content. */
  slides?: true;
}
interface ScalarNode {
  kind: 'scalar';
  type: Evidence;
  examples: unknown[];
}
type Node = ObjectNode | ArrayNode | ScalarNode;

interface Prop {
  node: Node;
  optional: boolean;
  uses: string[];
}

interface Frame {
  /** Where names this scope does not know are added; undefined = a condition, names go outwards. */
  obj: ObjectNode | undefined;
  /** The array whose items this frame's scope is (for `{.}`). */
  list: ArrayNode | undefined;
  /** The loop or section expression this frame closes on. */
  value: string;
  /** `{:items}` slides: the part whose tags are in the scope. */
  part?: string;
  /** Data tags met inside (a section with none is a condition). */
  inner: number;
  /** The property the section created, so an empty one becomes a boolean. */
  created?: Prop;
}

type Segment = { name: string } | { index: number | undefined };
interface Ref {
  self: boolean;
  segments: Segment[];
}

const BOOLEAN_PREFIX = /^(is|has|have|show|hide|can|should|include|with|without|enable|display|use|allow|need|needs)([A-Z_\d]|$)/;
const BOOLEAN_SUFFIX = /(enabled|visible|active|paid)$/i;
const booleanName = (name: string): boolean => BOOLEAN_PREFIX.test(name) || BOOLEAN_SUFFIX.test(name);

function anyNode(): ScalarNode {
  return { kind: 'scalar', type: 'any', examples: [] };
}

/** The items of a list, as a property (for `{.}` and `a[0]`). */
class ItemSlot implements Prop {
  optional = false;
  uses: string[] = [];
  private readonly list: ArrayNode;
  constructor(list: ArrayNode) {
    this.list = list;
  }
  get node(): Node {
    this.list.items ??= anyNode();
    return this.list.items;
  }
  set node(n: Node) {
    this.list.items = n;
  }
}

function object(): ObjectNode {
  return { kind: 'object', props: new Map() };
}

/** The path an expression names (`a.b[0].c`, `.`), or undefined when it is not a plain path. */
function refOf(e: Expr): Ref | undefined {
  switch (e.t) {
    case 'id':
      return e.name === '$index' ? undefined : { self: false, segments: [{ name: e.name }] };
    case 'this':
      return { self: true, segments: [] };
    case 'member': {
      const base = refOf(e.obj);
      return base === undefined ? undefined : { self: base.self, segments: [...base.segments, { name: e.prop }] };
    }
    case 'index': {
      const base = refOf(e.obj);
      if (base === undefined) return undefined;
      if (e.index.t === 'lit' && typeof e.index.v === 'string')
        return { self: base.self, segments: [...base.segments, { name: e.index.v }] };
      return {
        self: base.self,
        segments: [...base.segments, { index: e.index.t === 'lit' && typeof e.index.v === 'number' ? e.index.v : undefined }],
      };
    }
    default:
      return undefined;
  }
}

/** The first names of the paths an expression reads (`a` of `a.b[0] + c`, and `c`). */
function rootNames(e: Expr, out: string[] = []): string[] {
  switch (e.t) {
    case 'id':
      if (e.name !== '$index') out.push(e.name);
      break;
    case 'member':
      rootNames(e.obj, out);
      break;
    case 'index':
      rootNames(e.obj, out);
      rootNames(e.index, out);
      break;
    case 'unary':
      rootNames(e.a, out);
      break;
    case 'binary':
      rootNames(e.a, out);
      rootNames(e.b, out);
      break;
    case 'cond':
      rootNames(e.c, out);
      rootNames(e.a, out);
      rootNames(e.b, out);
      break;
    case 'array':
      for (const x of e.items) rootNames(x, out);
      break;
    case 'filter':
      rootNames(e.input, out);
      for (const a of e.args) rootNames(a, out);
      break;
    default:
      break;
  }
  return out;
}

function literalEvidence(e: Expr): Evidence | undefined {
  if (e.t !== 'lit') return undefined;
  return typeof e.v === 'number' ? 'number' : typeof e.v === 'string' ? 'string' : typeof e.v === 'boolean' ? 'boolean' : undefined;
}

const FILTER_INPUT: Record<string, Evidence> = {
  currency: 'number',
  number: 'number',
  percent: 'number',
  round: 'number',
  abs: 'number',
  date: 'date',
  upper: 'string',
  lower: 'string',
  capitalize: 'string',
  trim: 'string',
  qrcode: 'string',
  code128: 'string',
  ean13: 'ean13',
  count: 'array',
  join: 'array',
  first: 'array',
  last: 'array',
  sum: 'array',
};

/** Rank of evidence: a stronger one replaces a weaker one on the same name. */
function strength(t: Evidence): number {
  switch (t) {
    case 'any':
      return 0;
    case 'string':
      return 1;
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'date':
      return 3;
    case 'currencyCode':
      return 3;
    case 'ean13':
      return 3;
    case 'html':
      return 3;
    case 'htmlInline':
      return 3;
    case 'rawxml':
      return 3;
    case 'image':
      return 4;
    default:
      return 5;
  }
}

class Inference {
  readonly root = object();
  private readonly frames: Frame[] = [{ obj: this.root, list: undefined, value: '', inner: 0 }];

  private readonly result: InspectResult;
  constructor(result: InspectResult) {
    this.result = result;
  }

  /** Names the template reads outside every loop: inside a loop they are the outer ones (filter
   *  arguments such as `| currency:currency` are usually settings of the whole document). */
  private readonly outside = new Set<string>();

  run(): JsonSchema {
    let depth = 0;
    let slidePart: string | undefined;
    for (const tag of this.result.tags) {
      if (slidePart !== undefined && tag.location.part !== slidePart) {
        slidePart = undefined;
        depth--;
      }
      const e = tag.kind === 'close' || tag.kind === 'include' ? undefined : this.parse(tag.value);
      const loop = e !== undefined && (tag.kind === 'open' || tag.kind === 'slide') && refOf(e)?.self === false;
      if (depth === 0 && e !== undefined) for (const name of rootNames(e)) this.outside.add(name);
      if (tag.kind === 'slide' && loop) {
        slidePart = tag.location.part;
        depth++;
      } else if (tag.kind === 'open' || tag.kind === 'inverted') depth++;
      else if (tag.kind === 'close') depth = Math.max(0, depth - 1);
    }
    for (const tag of this.result.tags) {
      const use = `{${tag.source.trim()}} (${describeLocation(tag.location)})`;
      this.leaveSlide(tag.location);
      switch (tag.kind) {
        case 'open':
        case 'inverted':
        case 'slide':
          this.section(tag.kind, tag.value, use, tag.location);
          break;
        case 'close':
          this.close(tag.value);
          break;
        case 'include':
          break;
        case 'image':
          this.tag(tag.value, 'image', use);
          break;
        case 'raw':
          this.tag(tag.value, 'rawxml', use);
          break;
        case 'html':
          this.tag(tag.value, 'htmlInline', use);
          break;
        case 'htmlBlock':
          this.tag(tag.value, 'html', use);
          break;
        case 'field':
          this.tag(tag.value, 'any', use);
          break;
      }
    }
    while (this.frames.length > 1) this.pop();
    const schema = toSchema(this.root);
    return {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Template data',
      description: `The data this ${this.result.format} template reads, inferred from its tags.`,
      ...schema,
    };
  }

  private leaveSlide(loc: ErrorLocation): void {
    for (;;) {
      const top = this.frames[this.frames.length - 1];
      if (top?.part === undefined || top.part === loc.part) return;
      this.pop();
    }
  }

  private parse(src: string): Expr | undefined {
    try {
      return parseExpression(src);
    } catch {
      return undefined; // inspect reports it as a problem already
    }
  }

  private tag(src: string, evidence: Evidence, use: string): void {
    const e = this.parse(src);
    if (e === undefined) return;
    const top = this.frames[this.frames.length - 1];
    if (top !== undefined) top.inner++;
    // An image tag whose value is a barcode filter reads the text to encode, not an image.
    if (evidence === 'image' && e.t === 'filter' && ['qrcode', 'code128', 'ean13'].includes(e.name)) {
      this.walk(e, 'any', use, false);
      return;
    }
    this.walk(e, evidence, use, false);
  }

  private section(kind: 'open' | 'inverted' | 'slide', src: string, use: string, loc: ErrorLocation): void {
    const e = this.parse(src);
    const outer = this.frames[this.frames.length - 1];
    if (outer !== undefined) outer.inner++;
    const frame: Frame = { obj: undefined, list: undefined, value: src, inner: 0, ...(kind === 'slide' ? { part: loc.part } : {}) };
    const ref = e === undefined ? undefined : refOf(e);
    if (e !== undefined && (ref === undefined || ref.self)) {
      this.walk(e, 'boolean', use, false);
    } else if (ref !== undefined) {
      const last = ref.segments[ref.segments.length - 1];
      const name = last !== undefined && 'name' in last ? last.name : '';
      const existing = this.find(ref);
      const knownScalar = existing?.node.kind === 'scalar' && existing.node.type !== 'any';
      if (kind === 'inverted' || (kind === 'open' && (booleanName(name) || knownScalar))) {
        if (existing?.node.kind !== 'array')
          this.record(ref, kind === 'open' && knownScalar && existing?.node.kind === 'scalar' ? existing.node.type : 'boolean', use, false);
      } else {
        const before = existing;
        const prop = this.record(ref, 'array', use, false);
        if (prop.node.kind === 'array') {
          prop.node.items ??= object();
          if (prop.node.items.kind === 'object') prop.node.items.scope = true;
          frame.list = prop.node;
          if (kind === 'slide') prop.node.slides = true;
          frame.obj = prop.node.items.kind === 'object' ? prop.node.items : undefined;
          if (before === undefined) frame.created = prop;
        }
      }
    }
    this.frames.push(frame);
  }

  private close(src: string): void {
    // `{/}` closes the innermost; `{/items}` the innermost opened with that expression.
    const want = src.trim();
    let i = this.frames.length - 1;
    if (want !== '') while (i > 0 && this.frames[i]?.value.trim() !== want) i--;
    if (i <= 0) return;
    while (this.frames.length > i) this.pop();
  }

  private pop(): void {
    const f = this.frames.pop();
    if (f === undefined) return;
    // A section with no data inside is a condition: the value is a boolean.
    if (f.created !== undefined && f.list !== undefined && f.inner === 0 && f.part === undefined) {
      f.created.node = { kind: 'scalar', type: 'boolean', examples: [] };
    }
  }

  /** The existing property a path starts at, looking outwards like the engine. */
  private find(ref: Ref): Prop | undefined {
    const first = ref.segments[0];
    if (ref.self || first === undefined || !('name' in first)) return undefined;
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const obj = this.frames[i]?.obj;
      const p = obj?.props.get(first.name);
      if (p !== undefined) return ref.segments.length === 1 ? p : this.descend(p, ref.segments.slice(1), false);
    }
    return undefined;
  }

  private descend(p: Prop, rest: Segment[], create: boolean): Prop | undefined {
    let cur = p;
    for (const seg of rest) {
      if ('index' in seg) {
        // An index reads one item: the item is the next property.
        if (cur.node.kind !== 'array') {
          if (!create) return undefined;
          cur.node = { kind: 'array', items: cur.node.kind === 'object' ? cur.node : undefined };
        }
        cur = new ItemSlot(cur.node as ArrayNode);
        continue;
      }
      let container: ObjectNode;
      if (cur.node.kind === 'object') container = cur.node;
      else if (cur.node.kind === 'array' && cur.node.items?.kind === 'object') container = cur.node.items;
      else {
        if (!create) return undefined;
        container = object();
        if (cur.node.kind === 'array') cur.node.items = container;
        else cur.node = container;
      }
      let next = container.props.get(seg.name);
      if (next === undefined) {
        if (!create) return undefined;
        next = { node: anyNode(), optional: false, uses: [] };
        container.props.set(seg.name, next);
      }
      cur = next;
    }
    return cur;
  }

  /** Adds what a tag says about a path to the tree; returns the path's property. */
  private record(ref: Ref, evidence: Evidence, use: string, optional: boolean, example?: unknown): Prop {
    let prop: Prop | undefined;
    if (ref.self) {
      // `{.}`: the current item of the innermost list.
      const frame = [...this.frames].reverse().find((f) => f.list !== undefined);
      if (frame?.list === undefined) return { node: anyNode(), optional, uses: [] };
      const list = frame.list;
      if (list.items === undefined || (list.items.kind === 'object' && list.items.props.size === 0)) {
        list.items = anyNode();
        if (frame.obj !== undefined) frame.obj = undefined;
      }
      const holder = new ItemSlot(list);
      prop = ref.segments.length === 0 ? holder : this.descend(holder, ref.segments, true);
    } else {
      const first = ref.segments[0];
      if (first === undefined || !('name' in first)) return { node: anyNode(), optional, uses: [] };
      let owner: ObjectNode | undefined;
      for (let i = this.frames.length - 1; i >= 0 && owner === undefined; i--) {
        const obj = this.frames[i]?.obj;
        if (obj?.props.has(first.name)) owner = obj;
      }
      if (owner === undefined && this.outside.has(first.name)) owner = this.root;
      owner ??= [...this.frames].reverse().find((f) => f.obj !== undefined)?.obj ?? this.root;
      let head = owner.props.get(first.name);
      if (head === undefined) {
        head = { node: anyNode(), optional, uses: [] };
        owner.props.set(first.name, head);
      }
      prop = this.descend(head, ref.segments.slice(1), true);
    }
    if (prop === undefined) return { node: anyNode(), optional, uses: [] };
    if (!optional) prop.optional = false;
    if (prop.uses.length < 3 && !prop.uses.includes(use)) prop.uses.push(use);
    apply(prop, evidence, example);
    return prop;
  }

  /** Walks an expression, recording each path it reads with what the expression says of its type. */
  private walk(e: Expr, evidence: Evidence, use: string, optional: boolean, example?: unknown): void {
    const ref = refOf(e);
    if (ref !== undefined) {
      this.record(ref, evidence, use, optional, example);
      if (e.t === 'index' && !(e.index.t === 'lit')) this.walk(e.index, 'any', use, optional);
      return;
    }
    switch (e.t) {
      case 'lit':
      case 'id':
        return;
      case 'member':
        this.walk(e.obj, 'object', use, optional);
        return;
      case 'index':
        this.walk(e.obj, 'any', use, optional);
        this.walk(e.index, 'any', use, optional);
        return;
      case 'array':
        for (const x of e.items) this.walk(x, 'any', use, optional);
        return;
      case 'unary':
        this.walk(e.a, e.op === '!' ? 'boolean' : 'number', use, optional);
        return;
      case 'cond':
        this.walk(e.c, 'boolean', use, optional);
        this.walk(e.a, evidence, use, optional);
        this.walk(e.b, evidence, use, optional);
        return;
      case 'filter': {
        const input = FILTER_INPUT[e.name] ?? (e.name === 'default' ? evidence : 'any');
        if (e.name === 'sum' && e.args[0]?.t === 'lit' && typeof e.args[0].v === 'string') {
          const ref2 = refOf(e.input);
          if (ref2 !== undefined) {
            const p = this.record(ref2, 'array', use, optional);
            if (p.node.kind === 'array') {
              if (p.node.items?.kind !== 'object') p.node.items = object();
              const items = p.node.items;
              const field = items.props.get(e.args[0].v) ?? {
                node: { kind: 'scalar', type: 'number', examples: [] } as Node,
                optional: false,
                uses: [],
              };
              apply(field, 'number');
              if (!field.uses.includes(use)) field.uses.push(use);
              items.props.set(e.args[0].v, field);
            }
          } else this.walk(e.input, 'array', use, optional);
        } else if (e.name === 'sum' && refOf(e.input) !== undefined) {
          const p = this.record(refOf(e.input) as Ref, 'array', use, optional);
          if (p.node.kind === 'array' && p.node.items === undefined) p.node.items = { kind: 'scalar', type: 'number', examples: [] };
        } else {
          this.walk(e.input, input, use, optional || e.name === 'default');
        }
        e.args.forEach((a, i) => this.walk(a, e.name === 'currency' && i === 0 ? 'currencyCode' : 'any', use, optional));
        return;
      }
      case 'binary': {
        const { op, a, b } = e;
        if (op === '&&' || op === '||') {
          this.walk(a, evidence === 'boolean' ? 'boolean' : evidence, use, optional);
          this.walk(b, evidence === 'boolean' ? 'boolean' : evidence, use, optional || op === '||');
        } else if (op === '??') {
          this.walk(a, evidence, use, true);
          this.walk(b, evidence, use, optional);
        } else if (['==', '!=', '===', '!=='].includes(op)) {
          const la = literalEvidence(a);
          const lb = literalEvidence(b);
          this.walk(a, lb ?? 'any', use, optional, b.t === 'lit' && op.startsWith('=') ? b.v : undefined);
          this.walk(b, la ?? 'any', use, optional, a.t === 'lit' && op.startsWith('=') ? a.v : undefined);
        } else if (['<', '>', '<=', '>='].includes(op)) {
          const str = literalEvidence(a) === 'string' || literalEvidence(b) === 'string';
          this.walk(a, str ? 'string' : 'number', use, optional);
          this.walk(b, str ? 'string' : 'number', use, optional);
        } else if (op === '+') {
          const str = literalEvidence(a) === 'string' || literalEvidence(b) === 'string';
          this.walk(a, str ? 'any' : 'number', use, optional);
          this.walk(b, str ? 'any' : 'number', use, optional);
        } else {
          this.walk(a, 'number', use, optional);
          this.walk(b, 'number', use, optional);
        }
        return;
      }
      default:
        return;
    }
  }
}

function apply(prop: Prop, evidence: Evidence, example?: unknown): void {
  const node = prop.node;
  if (evidence === 'array') {
    if (node.kind !== 'array') prop.node = { kind: 'array', items: node.kind === 'object' ? node : undefined };
    return;
  }
  if (evidence === 'object') {
    if (node.kind === 'scalar') prop.node = object();
    return;
  }
  if (node.kind !== 'scalar') return; // a list or an object stays one; the tag reads it as a whole
  if (strength(evidence) > strength(node.type)) node.type = evidence;
  if (example !== undefined && !node.examples.includes(example) && node.examples.length < 5) node.examples.push(example);
}

function toSchema(node: Node): JsonSchema {
  switch (node.kind) {
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [name, p] of node.props) {
        const s = toSchema(p.node);
        if (p.uses.length > 0) s.description = `${describeKind(p.node)}, used by ${p.uses.join(', ')}.`;
        properties[name] = s;
        if (!p.optional && node.scope !== true) required.push(name);
      }
      return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
    }
    case 'array':
      return { type: 'array', items: node.items === undefined ? { type: ['string', 'number'] } : toSchema(node.items) };
    case 'scalar':
      return scalarSchema(node);
  }
}

function describeKind(node: Node): string {
  if (node.kind === 'array')
    return node.slides === true ? 'A list (the slide is repeated for each item)' : 'A list (a loop repeats for each item)';
  if (node.kind === 'object') return 'An object';
  switch (node.type) {
    case 'boolean':
      return 'A condition (true shows the section)';
    case 'number':
      return 'A number';
    case 'date':
      return 'A date (2026-01-15) or date-time with a zone (2026-01-15T08:30:00Z)';
    case 'currencyCode':
      return 'An ISO 4217 currency code';
    case 'ean13':
      return 'The 12 or 13 digits of an EAN-13 barcode';
    case 'image':
      return 'An image: a data URL (data:image/png;base64,...), base64 bytes, an http(s) URL, or {data, width, height, alt, decorative}';
    case 'html':
      return 'HTML replacing the paragraph';
    case 'htmlInline':
      return 'HTML inserted in the paragraph';
    case 'rawxml':
      return 'Office XML replacing the paragraph or shape';
    case 'string':
      return 'Text';
    default:
      return 'A value (text or number)';
  }
}

function scalarSchema(node: ScalarNode): JsonSchema {
  const examples = node.examples.length > 0 ? { examples: node.examples } : {};
  switch (node.type) {
    case 'boolean':
      return { type: 'boolean', ...examples };
    case 'number':
      return { type: 'number', ...examples };
    case 'date':
      return { type: 'string', ...examples };
    case 'currencyCode':
      return { type: 'string', pattern: '^[A-Z]{3}$', ...examples };
    case 'ean13':
      return { type: 'string', pattern: '^[0-9]{12,13}$', ...examples };
    case 'image':
      return {
        anyOf: [
          { type: 'string', contentMediaType: 'image/*' },
          {
            type: 'object',
            properties: {
              data: { type: 'string' },
              width: { type: 'number' },
              height: { type: 'number' },
              alt: { type: 'string', description: 'Alternative text, read out by screen readers' },
              decorative: { type: 'boolean', description: 'true: a picture that carries no meaning (Office marks it decorative)' },
            },
            required: ['data'],
          },
        ],
      };
    case 'html':
    case 'htmlInline':
      return { type: 'string', contentMediaType: 'text/html', ...examples };
    case 'rawxml':
      return { type: 'string', contentMediaType: 'application/xml', ...examples };
    case 'string':
      return { type: 'string', ...examples };
    default:
      return { type: ['string', 'number'], ...examples };
  }
}

/** The JSON Schema (draft 2020-12) of the data a template reads, from `inspect(template)`. */
export function inferSchema(result: InspectResult): JsonSchema {
  return new Inference(result).run();
}

// ---- sample data ----

/** A 160 x 48 placeholder picture (a grey box with a cross, as layout tools draw an image's place). */
const PNG_SAMPLE =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAKAAAAAwCAIAAAAZy+Y5AAABMUlEQVR42u3cwQ3CMAxG4ezJCMzAqJy4MQVI3BAqpaTN75cn+Rikxp8U2sRxO50vBjiaKZgC+Hq7P2N56GuMERJfsT4Ar/+xEev6NrItmyldC/VnYLHLuW4HVrqEawdgpWNROwOLnZy0zsBKp6VoL2ClQ7KxO7DYYyd+KPBs0gnTHAMMlk6b0WBgDHbswwcBV5TOf9RE4PD01VppooGj0lr0H6QM8KhEV38NrAd8QOpJ7/aFgbuTIL/OIcD/ILF3XWjAK9nm2TTFAm/ABs9dYIFdogX2JUtgP5MEdqPDrUq3Kj1s8LDB40KPC82gB/6ugZbsWHQ3YdGdZbPMslkL34GF715dYV5d0ZV5+UzXtKR5ARwubQsHOLZNWODStlGCS9sIDY5tK0O4tM1I7TZr1I8HkYS5XeoicdwAAAAASUVORK5CYII=';

function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
}

const PERSON = /customer|client|person|contact|author|owner|recipient|employee|user|member|buyer|student|patient|signer|^to$|^from$/i;
const COMPANY = /company|organi[sz]ation|employer|seller|vendor|supplier|business|firm/i;

function sampleString(name: string, n: number, parent: string): string {
  const k = name.toLowerCase();
  const nth = n > 0 ? ` ${n + 1}` : '';
  if (/^(name|full.?name|title|label)$/.test(k) && parent !== '' && !PERSON.test(parent)) {
    if (COMPANY.test(parent)) return `Northwind Ltd${nth}`;
    const p = words(singular(parent));
    return `${p.charAt(0).toUpperCase()}${p.slice(1)} ${n + 1}`;
  }
  if (/e-?mail/.test(k)) return n > 0 ? `grace.hopper${n}@example.com` : 'ada.lovelace@example.com';
  if (/phone|mobile|tel$|fax/.test(k)) return '+44 20 7946 0958';
  if (/url|link|website|href|site/.test(k)) return 'https://example.com/';
  if (/date|day$|birth|since|until|deadline/.test(k) || /[a-z](On|At)$/.test(name)) return '2026-01-15';
  if (/first.?name|given/.test(k)) return n > 0 ? 'Grace' : 'Ada';
  if (/last.?name|surname|family/.test(k)) return n > 0 ? 'Hopper' : 'Lovelace';
  if (COMPANY.test(k)) return `Northwind Ltd${nth}`;
  if (PERSON.test(k) || /^name$|full.?name/.test(k)) return n > 0 ? 'Grace Hopper' : 'Ada Lovelace';
  if (/street|address|^line\d/.test(k)) return '221B Baker Street';
  if (/city|town/.test(k)) return 'London';
  if (/post.?code|zip/.test(k)) return 'NW1 6XE';
  if (/country/.test(k)) return 'United Kingdom';
  if (/iban/.test(k)) return 'GB33 BUKB 2020 1555 5555 55';
  if (/currency/.test(k)) return 'EUR';
  if (/month/.test(k)) return 'January 2026';
  if (/year/.test(k)) return '2026';
  if (/^id$|number$|^ref|code$|^no$/.test(k) || /[a-z](Id|No)$/.test(name)) return `A-${1001 + n}`;
  const w = words(name);
  return `${w.charAt(0).toUpperCase()}${w.slice(1)}${nth}`;
}

function sampleNumber(name: string, n: number): number {
  const k = name.toLowerCase();
  if (/rate|percent|ratio|share|vat$|tax$/.test(k)) return 0.2;
  if (/qty|quantity|count|orders|units|pieces|returns|age|year/.test(k)) return /year/.test(k) ? 2026 : 3 + n * 2;
  if (/price|amount|total|net|gross|cost|revenue|balance|fee|sum|salary|value/.test(k)) return Math.round((120.5 + n * 37.25) * 100) / 100;
  return 42 + n;
}

function numberHint(name: string): boolean {
  return /(rate|percent|ratio|qty|quantity|count|orders|returns|units|pieces|price|amount|total|net|gross|cost|revenue|balance|fee|sum|salary)$/i.test(
    name,
  );
}

function sampleOf(schema: JsonSchema, name: string, n: number, parent = ''): unknown {
  const examples = schema.examples;
  if (Array.isArray(examples) && examples.length > 0) return examples[0];
  const anyOf = schema.anyOf;
  if (Array.isArray(anyOf) && anyOf.length > 0) {
    const first = anyOf[0] as JsonSchema;
    if (first.contentMediaType === 'image/*') return PNG_SAMPLE;
    return sampleOf(first, name, n, parent);
  }
  const type = schema.type;
  if (type === 'object') {
    const out: Record<string, unknown> = {};
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [k, s] of Object.entries(props)) out[k] = sampleOf(s, k, n, name);
    return out;
  }
  if (type === 'array') {
    const items = (schema.items ?? {}) as JsonSchema;
    return [0, 1].map((i) => sampleOf(items, singular(name), i, parent));
  }
  if (type === 'boolean') return true;
  if (type === 'number') return sampleNumber(name, n);
  if (Array.isArray(type)) return numberHint(name) ? sampleNumber(name, n) : sampleString(name, n, parent);
  if (schema.pattern === '^[A-Z]{3}$') return 'EUR';
  if (schema.pattern === '^[0-9]{12,13}$') return '4006381333931';
  if (schema.contentMediaType === 'text/html') return '<p>Some <b>bold</b> and <i>italic</i> text.</p>';
  if (schema.contentMediaType === 'application/xml') return '';
  if (typeof schema.description === 'string' && schema.description.startsWith('A date')) return '2026-01-15';
  return sampleString(name, n, parent);
}

function singular(name: string): string {
  return name.replace(/ies$/, 'y').replace(/s$/, '');
}

/** Plausible data for a schema from `inferSchema`: values named after their fields, two items per list. */
export function sampleData(schema: JsonSchema): unknown {
  return sampleOf(schema, '', 0);
}
