/** XML text escaping for element content and attribute values. */
export function esc(s: string): string {
  return s
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

/** An element with text, or nothing when the value is absent. */
export function el(name: string, value: string | undefined, attrs: Record<string, string | undefined> = {}): string {
  if (value === undefined || value === '') return '';
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => ` ${k}="${esc(v!)}"`)
    .join('');
  return `<${name}${a}>${esc(value)}</${name}>`;
}

/** An element wrapping children, or nothing when they are all empty. */
export function wrap(name: string, ...children: string[]): string {
  const inner = children.join('');
  return inner === '' ? '' : `<${name}>${inner}</${name}>`;
}
