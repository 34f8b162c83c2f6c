// The fonts a LibreOffice instance sees: the system's (.ci/install-converter.sh installs faces metric-
// compatible with Office's defaults, Noto for every script, emoji), docgen's substitutions for Office font
// names (converter/fonts/substitutions.conf), and a deployment's own fonts (CONVERTER_FONTS_DIR, mounted
// read-only into the sandbox). Each instance gets a fontconfig file of its own (FONTCONFIG_FILE) that
// puts these together ahead of the system configuration.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SUBSTITUTIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fonts', 'substitutions.conf');
const SYSTEM_CONF = '/etc/fonts/fonts.conf';

let rules: string | undefined;

/** The rules of substitutions.conf (what is inside its <fontconfig> element). */
function substitutionRules(): string {
  if (rules === undefined) {
    const xml = fs.readFileSync(SUBSTITUTIONS, 'utf8');
    rules = /<fontconfig>([\s\S]*)<\/fontconfig>/.exec(xml)?.[1] ?? '';
  }
  return rules;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The fontconfig file of an instance: the deployment's font directory (when set and present), a cache
 * directory the instance may write (fonts there are not in the system cache), docgen's substitutions,
 * then the system configuration (fonts, caches and its own aliases).
 */
export function fontConfigXml(opts: { fontsDir?: string | undefined; cacheDir: string }): string {
  const dir = opts.fontsDir !== undefined && opts.fontsDir !== '' ? `  <dir>${esc(opts.fontsDir)}</dir>\n` : '';
  // LibreOffice before 7.5 writes a colour (bitmap) font into a pdf as a TrueType font without outlines:
  // emoji come out invisible. Hidden from it, emoji fall back to Symbola's outlines (Unicode 9 emoji). With a
  // LibreOffice that exports colour fonts, drop this rule.
  const reject =
    '  <selectfont><rejectfont><pattern><patelt name="family"><string>Noto Color Emoji</string></patelt></pattern></rejectfont></selectfont>\n';
  return (
    '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n' +
    `${dir}  <cachedir>${esc(opts.cacheDir)}</cachedir>\n${reject}${substitutionRules()}\n` +
    `  <include ignore_missing="yes">${SYSTEM_CONF}</include>\n</fontconfig>\n`
  );
}

/** A deployment font directory that exists, else undefined (a missing one is reported by the caller). */
export function fontsDirOf(setting: string | undefined): string | undefined {
  if (setting === undefined || setting === '') return undefined;
  try {
    return fs.statSync(setting).isDirectory() ? path.resolve(setting) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes an instance's fontconfig file into its temporary directory (which the sandbox mounts) and returns
 * the environment that points LibreOffice at it and the deployment's font directory (to mount read-only).
 */
export async function instanceFonts(
  tmp: string,
  profile: string,
  fontsDirSetting: string | undefined,
): Promise<{ env: Record<string, string>; fontsDir: string | undefined }> {
  const fontsDir = fontsDirOf(fontsDirSetting);
  const file = path.join(tmp, 'fonts.conf');
  await fsp.writeFile(file, fontConfigXml({ fontsDir, cacheDir: path.join(profile, 'fontconfig-cache') }));
  return { env: { FONTCONFIG_FILE: file }, fontsDir };
}
