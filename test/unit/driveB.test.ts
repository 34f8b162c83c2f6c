// DriveB's pure parts: the connection body's shapes, native-merge planning (what merges in place and what
// is refused, naming the tag), and a Sheet's rows as data.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTOR_SETTINGS } from '../../connectors/connections.ts';
import { driveBConnection } from '../../connectors/driveB/connection.ts';
import { sheetRowsToData } from '../../connectors/driveB/location.ts';
import { nativeRequests, planNativeMerge } from '../../connectors/driveB/native-merge.ts';

const privateKey = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const key = { type: 'service_account', client_email: 'sa@p.iam.gserviceaccount.com', private_key: privateKey };

describe('driveB connection body', () => {
  const messages = (r: ReturnType<typeof driveBConnection.parse>) => ('errors' in r ? r.errors.map((e) => e.message).join('\n') : '');

  it('OAuth: clientId and secrets split; the secrets never land in settings', () => {
    const r = driveBConnection.parse({ clientId: 'cid', clientSecret: 'cs', refreshToken: 'rt' }, DEFAULT_CONNECTOR_SETTINGS);
    expect(r).toEqual({ settings: { mode: 'oauth', clientId: 'cid' }, secrets: { clientSecret: 'cs', refreshToken: 'rt' } });
    expect(messages(driveBConnection.parse({ clientId: 'cid', clientSecret: 'cs' }, DEFAULT_CONNECTOR_SETTINGS))).toMatch(
      /connection\.refreshToken is required/,
    );
  });

  it('service account: needs subject or sharedDriveId (no storage of its own); the key text or object', () => {
    expect(messages(driveBConnection.parse({ serviceAccountKey: key }, DEFAULT_CONNECTOR_SETTINGS))).toMatch(
      /connection\.subject or connection\.sharedDriveId is required.*no storage quota/,
    );
    const r = driveBConnection.parse({ serviceAccountKey: JSON.stringify(key), subject: 'ada@example.com' }, DEFAULT_CONNECTOR_SETTINGS);
    expect(r).toEqual({
      settings: { mode: 'serviceAccount', clientEmail: key.client_email, subject: 'ada@example.com' },
      secrets: { privateKey },
    });
    const shared = driveBConnection.parse({ serviceAccountKey: key, sharedDriveId: '0AbcDEF' }, DEFAULT_CONNECTOR_SETTINGS);
    expect('settings' in shared && shared.settings).toEqual({
      mode: 'serviceAccount',
      clientEmail: key.client_email,
      sharedDriveId: '0AbcDEF',
    });
    expect(
      messages(driveBConnection.parse({ serviceAccountKey: '{"client_email":"x"}', subject: 'a@b.co' }, DEFAULT_CONNECTOR_SETTINGS)),
    ).toMatch(/connection\.serviceAccountKey must be the JSON key file/);
    expect(messages(driveBConnection.parse({ serviceAccountKey: key, subject: 'not-an-email' }, DEFAULT_CONNECTOR_SETTINGS))).toMatch(
      /connection\.subject must be the e-mail/,
    );
    expect(
      messages(driveBConnection.parse({ serviceAccountKey: key, clientId: 'x', sharedDriveId: 'd' }, DEFAULT_CONNECTOR_SETTINGS)),
    ).toMatch(/either clientId.*or serviceAccountKey, not both/);
    expect(messages(driveBConnection.parse({}, DEFAULT_CONNECTOR_SETTINGS))).toMatch(/give clientId, clientSecret and refreshToken/);
  });
});

describe('native merge planning', () => {
  const data = { name: 'Ada', n: 3, customer: { city: 'Paris' }, items: [{ sku: 'A1' }], logo: 'https://img.example/logo.png' };

  it('plain fields become replaceAllText (Docs, Slides) or findReplace (Sheets) with their values', () => {
    const plan = planNativeMerge('gdoc', ['Dear {name}, {n} items to {customer.city}', '{items[0].sku} {missing} {name}'], data, {
      images: false,
    });
    expect(plan.refused).toEqual([]);
    expect(plan.fields).toEqual([
      { tag: '{name}', value: 'Ada' },
      { tag: '{n}', value: '3' },
      { tag: '{customer.city}', value: 'Paris' },
      { tag: '{items[0].sku}', value: 'A1' },
      { tag: '{missing}', value: '' },
    ]);
    expect(nativeRequests('gdoc', plan, new Map())[0]).toEqual({
      replaceAllText: { containsText: { text: '{name}', matchCase: true }, replaceText: 'Ada' },
    });
    expect(nativeRequests('gsheet', plan, new Map())[0]).toEqual({
      findReplace: { find: '{name}', replacement: 'Ada', allSheets: true, matchCase: true },
    });
  });

  it('loops, conditions, expressions and filters are refused, each named', () => {
    const plan = planNativeMerge('gdoc', ['{#items}{sku}{/items}', '{total | currency:"EUR"}', '{#n > 2}big{/}', '{@raw}'], data, {
      images: false,
    });
    expect(plan.refused.map((r) => r.tag)).toEqual(['{#items}', '{/items}', '{total | currency:"EUR"}', '{#n > 2}', '{/}', '{@raw}']);
    expect(plan.refused[0]!.why).toMatch(/loop or condition/);
    expect(plan.refused[2]!.why).toMatch(/expressions and filters/);
  });

  it('image tags: Slides with nativeImageMergeEnabled only', () => {
    expect(planNativeMerge('gslide', ['{%logo}'], data, { images: false }).refused[0]!.why).toMatch(/nativeImageMergeEnabled/);
    expect(planNativeMerge('gdoc', ['{%logo}'], data, { images: true }).refused[0]!.why).toMatch(/Google Slides only/);
    const plan = planNativeMerge('gslide', ['{%logo}', '{name}'], data, { images: true });
    expect(plan.images).toEqual([{ tag: '{%logo}', value: data.logo }]);
    expect(nativeRequests('gslide', plan, new Map([['{%logo}', data.logo]]))[0]).toEqual({
      replaceAllShapesWithImage: {
        containsText: { text: '{%logo}', matchCase: true },
        imageUrl: data.logo,
        imageReplaceMethod: 'CENTER_INSIDE',
      },
    });
  });
});

describe('a Google Sheet as data', () => {
  it('the first row names the fields; blank rows and blank headers are skipped; values keep their types', () => {
    expect(
      sheetRowsToData([
        ['Name', 'Amount', '', 'Paid'],
        ['Ada', 12.5, 'x', true],
        ['', '', '', ''],
        ['Bob', 3],
      ]),
    ).toEqual({
      rows: [
        { Name: 'Ada', Amount: 12.5, Paid: true },
        { Name: 'Bob', Amount: 3, Paid: '' },
      ],
    });
    expect(sheetRowsToData([])).toEqual({ rows: [] });
  });
});
