// `{%logo}` with an http(s) URL: the engine never fetches; render() asks the injected fetchImage, once
// per distinct URL, and a failed fetch is a template error at the tag. The network side (guarded client,
// allow-list, content type) is tested end to end in test/integration/graphql.
import { describe, expect, it } from 'vitest';
import { render, renderSync, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, PNG_2x1, unzipText } from './helpers.ts';

const dataUrl = `data:image/png;base64,${PNG_2x1.toString('base64')}`;

function recordingFetcher(answers: Record<string, Uint8Array | Error>) {
  const calls: string[] = [];
  const fetchImage = async (url: string) => {
    calls.push(url);
    const a = answers[url];
    if (a === undefined) throw new Error(`no such image ${url}`);
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, fetchImage };
}

describe('images from URLs', () => {
  it('fetches each distinct URL once through the injected fetcher and embeds the bytes', async () => {
    const { calls, fetchImage } = recordingFetcher({ 'https://img.example/logo.png': PNG_2x1 });
    const data = {
      logo: 'https://img.example/logo.png',
      items: [{ pic: { data: 'https://img.example/logo.png', width: 10 } }, { pic: dataUrl }],
      name: 'Ada',
    };
    const out = await render(docx(p('Hi {name} {%logo}') + p('{#items}{%pic}{/items}')), data, { fetchImage });
    expect(calls).toEqual(['https://img.example/logo.png']);
    const files = unzipText(out);
    const doc = files.get('word/document.xml') ?? '';
    expect(doc.match(/<w:drawing>/g)?.length).toBe(3);
    // The {data, width} form keeps the aspect ratio: 2:1 in a 10 px wide box -> 10x5 px.
    expect(doc).toContain(`<wp:extent cx="${10 * 9525}" cy="${5 * 9525}"/>`);
    expect([...files.keys()].some((k) => k.startsWith('word/media/'))).toBe(true);
    expect(docText(out)[0]).toBe('Hi Ada ');
  });

  it('does not call the fetcher when there is no URL image', async () => {
    const { calls, fetchImage } = recordingFetcher({});
    const out = await render(docx(p('{%logo}')), { logo: dataUrl }, { fetchImage });
    expect(calls).toEqual([]);
    expect(unzipText(out).get('word/document.xml')).toContain('<w:drawing>');
  });

  it('turns a failed fetch or a non-image answer into a template error at the tag', async () => {
    const { fetchImage } = recordingFetcher({
      'http://10.0.0.1/x.png': new Error('10.0.0.1 is not reachable from this service (private (10/8))'),
      'https://img.example/page': new TextEncoder().encode('<html>'),
    });
    const err = await render(
      docx(p('{%a}') + p('{%b}') + p('{%c}')),
      { a: 'http://10.0.0.1/x.png', b: 'https://img.example/page', c: dataUrl },
      { fetchImage },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    const errors = (err as TemplateError).errors;
    expect(errors.map((e) => e.id)).toEqual(['image_fetch_failed', 'image_invalid']);
    expect(errors[0]?.message).toMatch(/http:\/\/10\.0\.0\.1\/x\.png could not be fetched: .*private/);
    expect(errors[0]?.location).toBeDefined();
  });

  it('refuses URLs without a fetcher, as before', async () => {
    const err = await render(docx(p('{%a}')), { a: 'https://img.example/logo.png' }).catch((e: unknown) => e);
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['image_url_unsupported']);
    expect(() => renderSync(docx(p('{%a}')), { a: 'https://img.example/logo.png' }, { fetchImage: async () => PNG_2x1 })).toThrow(
      TemplateError,
    );
  });

  it('reports other template errors without fetching anything', async () => {
    const { calls, fetchImage } = recordingFetcher({ 'https://img.example/logo.png': PNG_2x1 });
    const err = await render(docx(p('{%logo} {name | nosuchfilter}')), { logo: 'https://img.example/logo.png' }, { fetchImage }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TemplateError);
    expect(calls).toEqual([]);
  });
});
