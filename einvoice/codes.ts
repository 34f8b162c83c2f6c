// The code lists EN 16931 checks (BR-CL-*), as far as docgen checks them before delivery. Currencies and
// countries come from the runtime's CLDR data (Intl); the others are the subsets invoices use, listed
// here. The official validator in CI (tools/mustang) checks the full lists.

interface CodeList {
  has(code: string): boolean;
}

/** ISO 4217 (BR-CL-03, BR-CL-04): the currencies Intl knows (CLDR), minus the funds and test codes. */
const currencies = new Set([
  ...Intl.supportedValuesOf('currency'),
  // ISO 4217 codes CLDR does not list as currencies of use (funds, metals, new codes).
  ...['VED', 'ZWG', 'CLF', 'BOV', 'CHE', 'CHW', 'COU', 'MXV', 'USN', 'UYI', 'UYW', 'XAU', 'XAG', 'XPT', 'XPD', 'XSU', 'XUA', 'XBA', 'XBB', 'XBC', 'XBD'],
]);
export const CURRENCY_CODES: CodeList = { has: (c) => /^[A-Z]{3}$/.test(c) && currencies.has(c) && !['XTS', 'XXX'].includes(c) };

const regions = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
/** ISO 3166-1 alpha-2 (BR-CL-14): a two-letter region CLDR names; the EU's VAT prefix EL (Greece) is no country code. */
export const COUNTRY_CODES: CodeList = {
  has: (c) => /^[A-Z]{2}$/.test(c) && !/^(?:AA|Q[M-Z]|X[A-Z]|ZZ|EU|UN|EZ)$/.test(c) && regions.of(c) !== undefined,
};

/** UNTDID 1001, the invoice type codes EN 16931 allows for invoices and credit notes (BR-CL-01), the common ones. */
export const INVOICE_TYPE_CODES = new Set(['380', '381', '383', '384', '386', '389', '393', '395', '396', '875', '876', '877', '751']);

/** UNTDID 5305 as EN 16931 uses it (BR-CL-17): S standard, Z zero, E exempt, AE reverse charge, K intra-community,
 *  G export, O outside the scope, L Canary Islands (IGIC), M Ceuta and Melilla (IPSI). */
export const VAT_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M']);

/** UNTDID 4461 (BR-CL-16), the payment means invoices use. */
export const PAYMENT_MEANS_CODES = new Set(['1', '10', '20', '30', '31', '42', '48', '49', '54', '55', '57', '58', '59', '68', '97', 'ZZZ']);

/** UN/ECE Recommendation 20 and 21 (BR-CL-23): the units of measure invoices use most (the list has ~2,000). */
export const UNIT_CODES = new Set([
  'C62', 'H87', 'EA', 'XPP', 'XBX', 'XPK', 'XPA', 'XCT', 'XBG', 'XRO', 'SET', 'PR', 'NAR', 'NPR', 'LS', 'ZZ', 'P1',
  'SEC', 'MIN', 'HUR', 'DAY', 'WEE', 'MON', 'ANN', 'QAN', 'E48',
  'MMT', 'CMT', 'DMT', 'MTR', 'KMT', 'INH', 'FOT', 'YRD', 'SMI',
  'MTK', 'CMK', 'KMK', 'HAR', 'MTQ', 'LTR', 'MLT', 'CLT', 'HLT', 'DLT', 'GLL',
  'GRM', 'KGM', 'MGM', 'TNE', 'LBR', 'ONZ',
  'KWH', 'MWH', 'GWH', 'KWT', 'WTT', 'MAW', 'KVA', 'KJO', 'JOU',
  'A9', 'D64', 'E49', 'E50', 'E51', 'E52', 'E53', 'E54', 'E55', 'E56', 'E57', 'B8', 'MQH', 'KTM', 'TKM', 'KMQ', 'TAH', 'PTN',
  'X1A', 'X4G', 'XAM', 'XBA', 'XBE', 'XBO', 'XCR', 'XCS', 'XEN', 'XPL', 'XPX', 'XSA', 'XTU', 'XCY', 'XRL',
  'MTS', 'KMH', 'KTN', 'GB', 'MBY', 'GBY', 'TBY', 'AD', '2P', '4L', 'E34', 'E35',
]);
