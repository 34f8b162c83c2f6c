// EN 16931's calculation and VAT rules, computed with decimals (decimal.ts): line net amounts, the VAT
// breakdown and the document totals. What the data states is checked against what its lines give, and
// what it leaves out is computed. Each failed rule is a Problem naming it (BR-CO-15) and the field.
import { add, cmp, type Dec, div, eq, fixed, isZero, mul, plain, round, sub, sum, ZERO } from './decimal.ts';
import type { Invoice, Problem, VatOf } from './model.ts';

export interface VatGroup {
  category: string;
  rate: Dec;
  taxableAmount: Dec;
  taxAmount: Dec;
  exemptionReason?: string;
}

/** The amounts the XML carries, all rounded to two decimals (BR-DEC-*). */
export interface Computed {
  lineNet: Dec[];
  lineTotal: Dec;
  allowanceTotal: Dec;
  chargeTotal: Dec;
  taxBasisTotal: Dec;
  taxTotal: Dec;
  grandTotal: Dec;
  prepaid: Dec;
  duePayable: Dec;
  vat: VatGroup[];
}

const ONE: Dec = { units: 1n, scale: 0 };
const HUNDRED: Dec = { units: 100n, scale: 0 };

/** Categories whose rate is 0 and whose VAT amount is 0 (BR-Z-*, BR-E-*, BR-AE-*, BR-IC-*, BR-G-*, BR-O-*). */
const ZERO_RATED = new Set(['Z', 'E', 'AE', 'K', 'G', 'O']);
/** Categories that need an exemption reason (BT-120 or BT-121) in their VAT breakdown. */
const NEEDS_REASON: Record<string, string> = { E: 'BR-E-10', AE: 'BR-AE-10', K: 'BR-IC-10', G: 'BR-G-10', O: 'BR-O-10' };

export function computeAndCheck(
  inv: Invoice,
  root: string,
  options: { standard: string; profile: string },
): { computed: Computed; problems: Problem[] } {
  const problems: Problem[] = [];
  const err = (rule: string, field: string, message: string) => problems.push({ rule, field: `${root}.${field}`, message, level: 'error' });
  const warn = (rule: string, field: string, message: string) =>
    problems.push({ rule, field: `${root}.${field}`, message, level: 'warning' });
  const money = (d: Dec) => fixed(d, 2);

  // BR-DEC: amounts have at most two decimals.
  const twoDecimals = (d: Dec | undefined, field: string, rule: string) => {
    if (d && !eq(d, round(d, 2))) err(rule, field, `${field} has more than two decimals (${plain(d)})`);
  };

  // Line net amounts: quantity × (net price / price base quantity), rounded to two decimals (BR-LIN / BT-131).
  const lineNet = inv.lines.map((l, i) => {
    const unit = l.priceBaseQuantity ? div(l.netPrice, l.priceBaseQuantity, 10) : l.netPrice;
    const computed = round(mul(l.quantity, unit), 2);
    if (l.netAmount) {
      twoDecimals(l.netAmount, `lines[${i}].netAmount`, 'BR-DEC-23');
      if (!eq(l.netAmount, computed))
        err(
          'BR-LIN-04',
          `lines[${i}].netAmount`,
          `lines[${i}].netAmount is ${plain(l.netAmount)} but quantity ${plain(l.quantity)} × net price ${plain(l.netPrice)}${l.priceBaseQuantity ? ` / ${plain(l.priceBaseQuantity)}` : ''} is ${money(computed)}`,
        );
      return l.netAmount;
    }
    return computed;
  });
  inv.allowances.forEach((a, i) => twoDecimals(a.amount, `allowances[${i}].amount`, 'BR-DEC-01'));
  inv.charges.forEach((c, i) => twoDecimals(c.amount, `charges[${i}].amount`, 'BR-DEC-05'));

  // VAT rules per category, on lines, allowances and charges.
  const checkVat = (v: VatOf, field: string) => {
    const rate = v.rate;
    if (v.category === 'S' && (!rate || cmp(rate, ZERO) <= 0))
      err('BR-S-05', `${field}.vat.rate`, `${field}.vat.rate must be greater than zero for VAT category S (standard rate)`);
    if (ZERO_RATED.has(v.category) && rate && !isZero(rate))
      err(
        `BR-${v.category === 'K' ? 'IC' : v.category}-05`,
        `${field}.vat.rate`,
        `${field}.vat.rate must be 0 for VAT category ${v.category}`,
      );
    if ((v.category === 'L' || v.category === 'M') && !rate)
      err(`BR-AF-05`, `${field}.vat.rate`, `${field}.vat.rate is required for VAT category ${v.category}`);
  };
  inv.lines.forEach((l, i) => checkVat(l.vat, `lines[${i}]`));
  inv.allowances.forEach((a, i) => checkVat(a.vat, `allowances[${i}]`));
  inv.charges.forEach((c, i) => checkVat(c.vat, `charges[${i}]`));

  const categories = new Set([...inv.lines, ...inv.allowances, ...inv.charges].map((x) => x.vat.category));
  const seller = inv.seller;
  const sellerTaxId = Boolean(seller.vatId || seller.taxNumber);
  for (const [cat, rule] of [
    ['S', 'BR-S-02'],
    ['Z', 'BR-Z-02'],
    ['E', 'BR-E-02'],
    ['L', 'BR-AF-02'],
    ['M', 'BR-AG-02'],
  ] as const) {
    if (categories.has(cat) && !sellerTaxId)
      err(rule, 'seller.vatId', `seller.vatId (BT-31) or seller.taxNumber (BT-32) is required when the invoice has VAT category ${cat}`);
  }
  for (const [cat, rule] of [
    ['AE', 'BR-AE-02'],
    ['K', 'BR-IC-02'],
    ['G', 'BR-G-02'],
  ] as const) {
    if (categories.has(cat) && !seller.vatId)
      err(rule, 'seller.vatId', `seller.vatId (BT-31) is required when the invoice has VAT category ${cat}`);
  }
  if (categories.has('AE') && !inv.buyer.vatId && !inv.buyer.legalId)
    err('BR-AE-02', 'buyer.vatId', 'buyer.vatId (BT-48) or buyer.legalId (BT-47) is required for reverse charge (VAT category AE)');
  if (categories.has('K') && !inv.buyer.vatId)
    err('BR-IC-02', 'buyer.vatId', 'buyer.vatId (BT-48) is required for an intra-community supply (VAT category K)');
  if (categories.has('O') && (seller.vatId || inv.buyer.vatId))
    err(
      'BR-O-02',
      seller.vatId ? 'seller.vatId' : 'buyer.vatId',
      'an invoice with VAT category O (outside the scope of VAT) carries no VAT identifiers (BT-31, BT-48)',
    );

  // The VAT breakdown: one group per category and rate (BR-CO-18), taxable = lines + charges - allowances
  // (BR-S-08 and its siblings), VAT = taxable × rate, rounded (BR-CO-17).
  const groups = new Map<string, VatGroup>();
  const groupOf = (v: VatOf) => {
    const rate = ZERO_RATED.has(v.category) ? ZERO : (v.rate ?? ZERO);
    const key = `${v.category}|${plain(rate)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { category: v.category, rate, taxableAmount: ZERO, taxAmount: ZERO }));
    return g;
  };
  inv.lines.forEach((l, i) => (groupOf(l.vat).taxableAmount = add(groupOf(l.vat).taxableAmount, lineNet[i]!)));
  for (const c of inv.charges) groupOf(c.vat).taxableAmount = add(groupOf(c.vat).taxableAmount, c.amount);
  for (const a of inv.allowances) groupOf(a.vat).taxableAmount = sub(groupOf(a.vat).taxableAmount, a.amount);
  for (const g of groups.values()) {
    g.taxableAmount = round(g.taxableAmount, 2);
    g.taxAmount = ZERO_RATED.has(g.category) ? ZERO : round(div(mul(g.taxableAmount, g.rate), HUNDRED, 4), 2);
    const reason = inv.exemptionReasons[g.category];
    if (reason) g.exemptionReason = reason;
    else if (NEEDS_REASON[g.category])
      err(
        NEEDS_REASON[g.category]!,
        'vatBreakdown',
        `a VAT exemption reason (BT-120) is required for VAT category ${g.category}: vatBreakdown[].exemptionReason or exemptionReasons.${g.category}`,
      );
  }
  const vat = [...groups.values()];

  // The stated breakdown, when the data has one, must be the computed one.
  inv.vatBreakdown?.forEach((b, i) => {
    const rate = ZERO_RATED.has(b.category) ? ZERO : (b.rate ?? ZERO);
    const g = groups.get(`${b.category}|${plain(rate)}`);
    const field = `vatBreakdown[${i}]`;
    if (!g) {
      err('BR-CO-18', field, `${field} (category ${b.category}, rate ${plain(rate)}) matches no line, allowance or charge`);
      return;
    }
    if (b.taxableAmount && !eq(b.taxableAmount, g.taxableAmount))
      err(
        `BR-${b.category === 'K' ? 'IC' : b.category}-08`,
        `${field}.taxableAmount`,
        `${field}.taxableAmount is ${plain(b.taxableAmount)} but the lines, charges and allowances of category ${b.category} at ${plain(rate)}% sum to ${money(g.taxableAmount)}`,
      );
    if (b.taxAmount && !eq(b.taxAmount, g.taxAmount))
      err(
        'BR-CO-17',
        `${field}.taxAmount`,
        `${field}.taxAmount is ${plain(b.taxAmount)} but ${money(g.taxableAmount)} × ${plain(rate)}% is ${money(g.taxAmount)}`,
      );
  });
  if (inv.vatBreakdown && inv.vatBreakdown.length !== groups.size && problems.every((p) => p.rule !== 'BR-CO-18'))
    err(
      'BR-CO-18',
      'vatBreakdown',
      `vatBreakdown has ${inv.vatBreakdown.length} groups but the lines have ${groups.size} VAT category and rate pairs`,
    );

  const lineTotal = sum(lineNet);
  const allowanceTotal = sum(inv.allowances.map((a) => a.amount));
  const chargeTotal = sum(inv.charges.map((c) => c.amount));
  const taxBasisTotal = add(sub(lineTotal, allowanceTotal), chargeTotal);
  const taxTotal = sum(vat.map((g) => g.taxAmount));
  const grandTotal = add(taxBasisTotal, taxTotal);
  const prepaid = inv.totals.prepaid ?? ZERO;
  const duePayable = sub(grandTotal, prepaid);
  const computed: Computed = {
    lineNet,
    lineTotal,
    allowanceTotal,
    chargeTotal,
    taxBasisTotal,
    taxTotal,
    grandTotal,
    prepaid,
    duePayable,
    vat,
  };

  const stated: [keyof Computed & keyof Invoice['totals'], string, string, string][] = [
    ['lineTotal', 'BR-CO-10', 'BT-106', "the sum of the lines' net amounts"],
    ['allowanceTotal', 'BR-CO-11', 'BT-107', 'the sum of the document allowances'],
    ['chargeTotal', 'BR-CO-12', 'BT-108', 'the sum of the document charges'],
    ['taxBasisTotal', 'BR-CO-13', 'BT-109', 'line total - allowances + charges'],
    ['taxTotal', 'BR-CO-14', 'BT-110', "the sum of the VAT breakdown's amounts"],
    ['grandTotal', 'BR-CO-15', 'BT-112', 'the total without VAT + the VAT total'],
    ['duePayable', 'BR-CO-16', 'BT-115', 'the total with VAT - the paid amount'],
  ];
  for (const [key, rule, bt, what] of stated) {
    const s = inv.totals[key];
    if (!s) continue;
    twoDecimals(s, `totals.${key}`, 'BR-DEC-12');
    if (!eq(s, computed[key] as Dec))
      err(rule, `totals.${key}`, `totals.${key} (${bt}) is ${plain(s)} but ${what} is ${money(computed[key] as Dec)}`);
  }
  twoDecimals(inv.totals.prepaid, 'totals.prepaid', 'BR-DEC-16');

  if (cmp(duePayable, ZERO) > 0 && !inv.dueDate && !inv.paymentTerms)
    err(
      'BR-CO-25',
      'dueDate',
      'a positive amount due (BT-115) needs a payment due date (dueDate, BT-9) or payment terms (paymentTerms, BT-20)',
    );
  if (inv.dueDate && inv.dueDate < inv.issueDate) warn('BT-9', 'dueDate', `dueDate ${inv.dueDate} is before issueDate ${inv.issueDate}`);
  if (!seller.vatId && !seller.legalId && !seller.taxNumber)
    err(
      'BR-CO-26',
      'seller.vatId',
      'the seller needs a VAT identifier (seller.vatId, BT-31), a legal registration identifier (seller.legalId, BT-30) or a tax number (seller.taxNumber, BT-32)',
    );
  if (inv.paymentMeans && ['58', '30'].includes(inv.paymentMeans.typeCode) && !inv.paymentMeans.iban)
    err(
      'BR-61',
      'paymentMeans.iban',
      `paymentMeans.iban (BT-84) is required for a credit transfer (payment means ${inv.paymentMeans.typeCode})`,
    );
  if (inv.paymentMeans?.iban && !/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(inv.paymentMeans.iban))
    err('BT-84', 'paymentMeans.iban', `paymentMeans.iban ${JSON.stringify(inv.paymentMeans.iban)} is not an IBAN`);

  if (options.standard.startsWith('xrechnung')) xrechnungRules(inv, err);
  if (!inv.paymentMeans && !options.standard.startsWith('xrechnung') && options.profile !== 'MINIMUM')
    warn('BG-16', 'paymentMeans', 'no paymentMeans: the buyer learns how to pay only from the pdf');
  void ONE;
  return { computed, problems };
}

/** XRechnung 3.0's CIUS (the KoSIT rules BR-DE-*, and the PEPPOL rules XRechnung 3.0 took over). */
function xrechnungRules(inv: Invoice, err: (rule: string, field: string, message: string) => void): void {
  if (!inv.paymentMeans) err('BR-DE-1', 'paymentMeans', 'XRechnung requires paymentMeans (BG-16, payment instructions)');
  const c = inv.seller.contact;
  if (!c) err('BR-DE-2', 'seller.contact', 'XRechnung requires seller.contact (BG-6) with name, phone and email');
  else {
    if (!c.name) err('BR-DE-5', 'seller.contact.name', 'XRechnung requires seller.contact.name (BT-41)');
    if (!c.phone) err('BR-DE-6', 'seller.contact.phone', 'XRechnung requires seller.contact.phone (BT-42)');
    if (!c.email) err('BR-DE-7', 'seller.contact.email', 'XRechnung requires seller.contact.email (BT-43)');
  }
  if (!inv.seller.address?.city) err('BR-DE-3', 'seller.address.city', 'XRechnung requires seller.address.city (BT-37)');
  if (!inv.seller.address?.postcode) err('BR-DE-4', 'seller.address.postcode', 'XRechnung requires seller.address.postcode (BT-38)');
  if (!inv.buyer.address?.city) err('BR-DE-8', 'buyer.address.city', 'XRechnung requires buyer.address.city (BT-52)');
  if (!inv.buyer.address?.postcode) err('BR-DE-9', 'buyer.address.postcode', 'XRechnung requires buyer.address.postcode (BT-53)');
  if (!inv.buyerReference)
    err('BR-DE-15', 'buyerReference', 'XRechnung requires buyerReference (BT-10: the Leitweg-ID of a public buyer, or another reference)');
  if (!inv.seller.vatId && !inv.seller.taxNumber)
    err('BR-DE-16', 'seller.vatId', 'XRechnung requires seller.vatId (BT-31) or seller.taxNumber (BT-32)');
  if (inv.paymentMeans?.typeCode === '58' && !inv.paymentMeans.iban)
    err('BR-DE-19', 'paymentMeans.iban', 'XRechnung requires an IBAN for SEPA credit transfer');
  if (!inv.seller.electronicAddress)
    err('PEPPOL-EN16931-R020', 'seller.electronicAddress', 'XRechnung requires seller.electronicAddress (BT-34)');
  if (!inv.buyer.electronicAddress)
    err('PEPPOL-EN16931-R010', 'buyer.electronicAddress', 'XRechnung requires buyer.electronicAddress (BT-49)');
}
