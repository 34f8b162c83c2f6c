// What the Temporal UI and error messages show of a template URL: never its user-info, query or fragment.
import { expect, it } from 'vitest';
import { displayUrl } from '../../core/display-url.ts';

it('drops credentials, queries and fragments, keeps the rest', () => {
  expect(displayUrl('https://user:pa55@files.example/a/b.docx?X-Amz-Signature=abc#x')).toBe('https://files.example/a/b.docx?…');
  expect(displayUrl('https://files.example/t.docx')).toBe('https://files.example/t.docx');
  expect(displayUrl('http://token@127.0.0.1:8080/t.docx#frag')).toBe('http://127.0.0.1:8080/t.docx');
  expect(displayUrl('https://files.example/t.docx?sig=1').includes('sig')).toBe(false);
});
