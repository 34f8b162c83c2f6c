// The JSON invoice model (docs/einvoice.md): EN 16931's business terms under names a team already uses in
// the data it renders, read into a checked Invoice. Every problem names the business rule (BR-*, BR-CL-*
// for code lists, BR-DE-* for XRechnung) or the business term (BT-*) whose format is wrong, and the field.
import { type Dec, parseDec } from './decimal.ts';
import { COUNTRY_CODES, CURRENCY_CODES, INVOICE_TYPE_CODES, PAYMENT_MEANS_CODES, UNIT_CODES, VAT_CATEGORIES } from './codes.ts';

export interface Problem {
  /** The rule: an EN 16931 business rule (BR-CO-15), a code list rule (BR-CL-23), an XRechnung rule (BR-DE-15), or
   *  the business term whose value has the wrong form (BT-2). */
  rule: string;
  /** The field of the invoice data, from the request's einvoice.data path (invoice.lines[0].unitCode). */
  field: string;
  message: string;
  level: 'error' | 'warning';
}

export interface Address {
  line1?: string;
  line2?: string;
  city?: string;
  postcode?: string;
  countrySubdivision?: string;
  countryCode: string;
}

export interface Party {
  name: string;
  tradingName?: string;
  /** BT-29 / BT-46: an identifier of the party (a supplier or customer number). */
  id?: string;
  /** BT-30 / BT-47: the legal registration identifier (SIRET, HRB...). */
  legalId?: string;
  /** BT-31 / BT-48: the VAT identifier, with its country prefix (DE123456789). */
  vatId?: string;
  /** BT-32: the seller's tax registration number (Steuernummer). */
  taxNumber?: string;
  /** BT-34 / BT-49: the electronic address (an e-mail address by default, scheme EM). */
  electronicAddress?: { value: string; scheme: string };
  address?: Address;
  contact?: { name?: string; phone?: string; email?: string };
}

export interface VatOf {
  category: string;
  rate?: Dec;
}

export interface Line {
  id: string;
  name: string;
  description?: string;
  sellerItemId?: string;
  quantity: Dec;
  unitCode: string;
  netPrice: Dec;
  priceBaseQuantity?: Dec;
  vat: VatOf;
  /** BT-131 as the data states it, checked against quantity × price. */
  netAmount?: Dec;
}

export interface AllowanceCharge {
  amount: Dec;
  reason?: string;
  vat: VatOf;
}

export interface StatedTotals {
  lineTotal?: Dec;
  allowanceTotal?: Dec;
  chargeTotal?: Dec;
  taxBasisTotal?: Dec;
  taxTotal?: Dec;
  grandTotal?: Dec;
  prepaid?: Dec;
  duePayable?: Dec;
}

export interface StatedVat {
  category: string;
  rate?: Dec;
  taxableAmount?: Dec;
  taxAmount?: Dec;
  exemptionReason?: string;
}

export interface Invoice {
  number: string;
  typeCode: string;
  issueDate: string;
  dueDate?: string;
  deliveryDate?: string;
  currency: string;
  buyerReference?: string;
  orderReference?: string;
  note?: string;
  seller: Party;
  buyer: Party;
  paymentMeans?: { typeCode: string; iban?: string; bic?: string; accountName?: string; reference?: string };
  paymentTerms?: string;
  lines: Line[];
  allowances: AllowanceCharge[];
  charges: AllowanceCharge[];
  totals: StatedTotals;
  vatBreakdown?: StatedVat[];
  /** VAT exemption reasons (BT-120) by category, for categories E, AE, K, G, O. */
  exemptionReasons: Record<string, string>;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A calendar date YYYY-MM-DD (the form EN 16931's date type takes in JSON). */
export function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Reads the invoice at `root` (the request's einvoice.data path) into an Invoice and the problems of form:
 *  a missing mandatory term, a value of the wrong type or shape, a code outside its list. The calculation
 *  and VAT rules are rules.ts's. */
export function readInvoice(value: unknown, root: string): { invoice?: Invoice; problems: Problem[] } {
  const problems: Problem[] = [];
  const err = (rule: string, field: string, message: string) => problems.push({ rule, field: `${root}.${field}`, message, level: 'error' });
  if (!isObj(value)) {
    problems.push({ rule: 'BR-01', field: root, message: `${root} must be an object holding the invoice`, level: 'error' });
    return { problems };
  }
  const text = (o: Obj, key: string, field: string, rule?: string, what?: string): string | undefined => {
    const v = o[key];
    if (v === undefined || v === null || v === '') {
      if (rule) err(rule, field, `${what ?? field} is required`);
      return undefined;
    }
    if (typeof v === 'number') return String(v);
    if (typeof v !== 'string') {
      err(rule ?? 'BR-01', field, `${field} must be a string`);
      return undefined;
    }
    return v.trim() === '' ? (rule ? (err(rule, field, `${what ?? field} is required`), undefined) : undefined) : v.trim();
  };
  const amount = (o: Obj, key: string, field: string, rule: string, what: string, required: boolean): Dec | undefined => {
    const v = o[key];
    if (v === undefined || v === null || v === '') {
      if (required) err(rule, field, `${what} is required`);
      return undefined;
    }
    const d = parseDec(v);
    if (!d) err(rule, field, `${what} must be a decimal number such as "12.50" (got ${JSON.stringify(v)})`);
    return d;
  };
  const date = (o: Obj, key: string, field: string, bt: string, rule?: string, what?: string): string | undefined => {
    const v = text(o, key, field, rule, what);
    if (v !== undefined && !isDate(v)) {
      err(bt, field, `${what ?? field} must be a calendar date YYYY-MM-DD (got ${JSON.stringify(v)})`);
      return undefined;
    }
    return v;
  };

  const number = text(value, 'number', 'number', 'BR-02', 'the invoice number (BT-1)');
  const typeCode = text(value, 'typeCode', 'typeCode') ?? '380';
  if (!INVOICE_TYPE_CODES.has(typeCode))
    err(
      'BR-CL-01',
      'typeCode',
      `typeCode ${JSON.stringify(typeCode)} is not an invoice type code of UNTDID 1001 (380 invoice, 381 credit note, 384 corrected invoice, 389 self-billed invoice, 875, 876, 877 partial invoices)`,
    );
  const issueDate = date(value, 'issueDate', 'issueDate', 'BT-2', 'BR-03', 'the invoice issue date (BT-2)');
  const dueDate = date(value, 'dueDate', 'dueDate', 'BT-9');
  const deliveryDate = date(value, 'deliveryDate', 'deliveryDate', 'BT-72');
  const currency = text(value, 'currency', 'currency', 'BR-05', 'the invoice currency code (BT-5)');
  if (currency !== undefined && !CURRENCY_CODES.has(currency))
    err('BR-CL-04', 'currency', `currency ${JSON.stringify(currency)} is not an ISO 4217 currency code`);

  const party = (key: 'seller' | 'buyer'): Party | undefined => {
    const o = value[key];
    const nameRule = key === 'seller' ? 'BR-06' : 'BR-07';
    if (!isObj(o)) {
      err(nameRule, key, `${key} is required: an object with the ${key}'s name and address`);
      return undefined;
    }
    const name = text(o, 'name', `${key}.name`, nameRule, `the ${key}'s name (${key === 'seller' ? 'BT-27' : 'BT-44'})`);
    const p: Party = { name: name ?? '' };
    for (const k of ['tradingName', 'id', 'legalId', 'vatId', 'taxNumber'] as const) {
      const v = text(o, k, `${key}.${k}`);
      if (v !== undefined) p[k] = v;
    }
    if (p.vatId !== undefined && !/^[A-Z]{2}[0-9A-Za-z+*.]{2,12}$/.test(p.vatId))
      err(
        'BR-CO-09',
        `${key}.vatId`,
        `${key}.vatId ${JSON.stringify(p.vatId)} must start with its country's ISO 3166-1 alpha-2 prefix (DE123456789)`,
      );
    const ea = o.electronicAddress;
    if (typeof ea === 'string' && ea.trim()) p.electronicAddress = { value: ea.trim(), scheme: 'EM' };
    else if (isObj(ea)) {
      const v = text(ea, 'value', `${key}.electronicAddress.value`, key === 'seller' ? 'BR-62' : 'BR-63', `${key}.electronicAddress.value`);
      const scheme = text(ea, 'scheme', `${key}.electronicAddress.scheme`) ?? 'EM';
      if (v) p.electronicAddress = { value: v, scheme };
    }
    const a = o.address;
    const addressRule = key === 'seller' ? 'BR-08' : 'BR-10';
    if (!isObj(a))
      err(
        addressRule,
        `${key}.address`,
        `${key}.address is required (${key === 'seller' ? 'BG-5' : 'BG-8'}), with at least its countryCode`,
      );
    else {
      const country = text(
        a,
        'countryCode',
        `${key}.address.countryCode`,
        key === 'seller' ? 'BR-09' : 'BR-11',
        `the ${key}'s country code`,
      );
      if (country !== undefined && !COUNTRY_CODES.has(country))
        err(
          'BR-CL-14',
          `${key}.address.countryCode`,
          `${key}.address.countryCode ${JSON.stringify(country)} is not an ISO 3166-1 alpha-2 country code`,
        );
      p.address = { countryCode: country ?? '' };
      for (const k of ['line1', 'line2', 'city', 'postcode', 'countrySubdivision'] as const) {
        const v = text(a, k, `${key}.address.${k}`);
        if (v !== undefined) p.address[k] = v;
      }
    }
    const c = o.contact;
    if (isObj(c)) {
      p.contact = {};
      for (const k of ['name', 'phone', 'email'] as const) {
        const v = text(c, k, `${key}.contact.${k}`);
        if (v !== undefined) p.contact[k] = v;
      }
    }
    return p;
  };
  const seller = party('seller');
  const buyer = party('buyer');

  const vatOf = (o: Obj, field: string): VatOf => {
    const v = o.vat;
    if (!isObj(v)) {
      err('BR-CO-04', `${field}.vat`, `${field}.vat is required: { category: "S", rate: "19" } (BT-151, BT-152)`);
      return { category: '' };
    }
    const category = text(v, 'category', `${field}.vat.category`, 'BR-CO-04', `${field}.vat.category`) ?? '';
    if (category && !VAT_CATEGORIES.has(category))
      err(
        'BR-CL-17',
        `${field}.vat.category`,
        `${field}.vat.category ${JSON.stringify(category)} is not a VAT category code of UNTDID 5305 (S, Z, E, AE, K, G, O, L, M)`,
      );
    const rate = amount(v, 'rate', `${field}.vat.rate`, 'BT-152', `${field}.vat.rate`, false);
    return { category, ...(rate ? { rate } : {}) };
  };

  const lines: Line[] = [];
  if (!Array.isArray(value.lines) || value.lines.length === 0)
    err('BR-16', 'lines', 'lines is required: an invoice has at least one line (BG-25)');
  else
    value.lines.forEach((l, i) => {
      const field = `lines[${i}]`;
      if (!isObj(l)) {
        err('BR-16', field, `${field} must be an object`);
        return;
      }
      const id = text(l, 'id', `${field}.id`) ?? String(i + 1);
      const name = text(l, 'name', `${field}.name`, 'BR-25', `${field}.name, the item name (BT-153)`);
      const quantity = amount(l, 'quantity', `${field}.quantity`, 'BR-22', `${field}.quantity (BT-129)`, true);
      const unitCode = text(
        l,
        'unitCode',
        `${field}.unitCode`,
        'BR-23',
        `${field}.unitCode, the unit of measure of the quantity (BT-130, UN/ECE Rec 20: C62 one, HUR hour, KGM kilogram...)`,
      );
      if (unitCode !== undefined && !UNIT_CODES.has(unitCode))
        err(
          'BR-CL-23',
          `${field}.unitCode`,
          `${field}.unitCode ${JSON.stringify(unitCode)} is not a unit code of UN/ECE Recommendation 20 or 21 (C62, H87, HUR, DAY, KGM, MTR, LTR...)`,
        );
      const netPrice = amount(l, 'netPrice', `${field}.netPrice`, 'BR-26', `${field}.netPrice, the item net price (BT-146)`, true);
      if (netPrice && netPrice.units < 0n) err('BR-27', `${field}.netPrice`, `${field}.netPrice must not be negative`);
      const priceBaseQuantity = amount(l, 'priceBaseQuantity', `${field}.priceBaseQuantity`, 'BT-149', `${field}.priceBaseQuantity`, false);
      if (priceBaseQuantity && priceBaseQuantity.units <= 0n)
        err('BT-149', `${field}.priceBaseQuantity`, `${field}.priceBaseQuantity must be positive`);
      const netAmount = amount(l, 'netAmount', `${field}.netAmount`, 'BT-131', `${field}.netAmount`, false);
      const vat = vatOf(l, field);
      const description = text(l, 'description', `${field}.description`);
      const sellerItemId = text(l, 'sellerItemId', `${field}.sellerItemId`);
      lines.push({
        id,
        name: name ?? '',
        quantity: quantity ?? { units: 0n, scale: 0 },
        unitCode: unitCode ?? '',
        netPrice: netPrice ?? { units: 0n, scale: 0 },
        vat,
        ...(priceBaseQuantity ? { priceBaseQuantity } : {}),
        ...(netAmount ? { netAmount } : {}),
        ...(description ? { description } : {}),
        ...(sellerItemId ? { sellerItemId } : {}),
      });
    });

  const allowanceCharges = (key: 'allowances' | 'charges'): AllowanceCharge[] => {
    const v = value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      err(key === 'allowances' ? 'BR-31' : 'BR-36', key, `${key} must be a list`);
      return [];
    }
    return v.flatMap((a, i) => {
      const field = `${key}[${i}]`;
      if (!isObj(a)) {
        err(key === 'allowances' ? 'BR-31' : 'BR-36', field, `${field} must be an object`);
        return [];
      }
      const amt = amount(a, 'amount', `${field}.amount`, key === 'allowances' ? 'BR-31' : 'BR-36', `${field}.amount`, true);
      const reason = text(a, 'reason', `${field}.reason`, key === 'allowances' ? 'BR-33' : 'BR-38', `${field}.reason`);
      return [{ amount: amt ?? { units: 0n, scale: 0 }, vat: vatOf(a, field), ...(reason ? { reason } : {}) }];
    });
  };
  const allowances = allowanceCharges('allowances');
  const charges = allowanceCharges('charges');

  const totals: StatedTotals = {};
  const t = value.totals;
  if (t !== undefined && !isObj(t)) err('BR-CO-15', 'totals', 'totals must be an object');
  if (isObj(t)) {
    const terms = {
      lineTotal: 'BT-106',
      allowanceTotal: 'BT-107',
      chargeTotal: 'BT-108',
      taxBasisTotal: 'BT-109',
      taxTotal: 'BT-110',
      grandTotal: 'BT-112',
      prepaid: 'BT-113',
      duePayable: 'BT-115',
    } as const;
    for (const [k, bt] of Object.entries(terms) as [keyof StatedTotals, string][]) {
      const v = amount(t, k, `totals.${k}`, bt, `totals.${k} (${bt})`, false);
      if (v) totals[k] = v;
    }
  }

  let vatBreakdown: StatedVat[] | undefined;
  const exemptionReasons: Record<string, string> = {};
  if (Array.isArray(value.vatBreakdown)) {
    vatBreakdown = [];
    value.vatBreakdown.forEach((b, i) => {
      const field = `vatBreakdown[${i}]`;
      if (!isObj(b)) return err('BR-CO-18', field, `${field} must be an object`);
      const category = text(b, 'category', `${field}.category`, 'BR-47', `${field}.category (BT-118)`) ?? '';
      if (category && !VAT_CATEGORIES.has(category))
        err('BR-CL-17', `${field}.category`, `${field}.category ${JSON.stringify(category)} is not a VAT category code`);
      const rate = amount(b, 'rate', `${field}.rate`, 'BT-119', `${field}.rate`, false);
      const taxableAmount = amount(b, 'taxableAmount', `${field}.taxableAmount`, 'BR-45', `${field}.taxableAmount (BT-116)`, false);
      const taxAmount = amount(b, 'taxAmount', `${field}.taxAmount`, 'BR-46', `${field}.taxAmount (BT-117)`, false);
      const exemptionReason = text(b, 'exemptionReason', `${field}.exemptionReason`);
      if (exemptionReason) exemptionReasons[category] = exemptionReason;
      vatBreakdown!.push({
        category,
        ...(rate ? { rate } : {}),
        ...(taxableAmount ? { taxableAmount } : {}),
        ...(taxAmount ? { taxAmount } : {}),
        ...(exemptionReason ? { exemptionReason } : {}),
      });
    });
  } else if (value.vatBreakdown !== undefined) err('BR-CO-18', 'vatBreakdown', 'vatBreakdown must be a list');
  if (isObj(value.exemptionReasons))
    for (const [k, v] of Object.entries(value.exemptionReasons)) if (typeof v === 'string' && v.trim()) exemptionReasons[k] = v.trim();

  let paymentMeans: Invoice['paymentMeans'];
  const pm = value.paymentMeans;
  if (isObj(pm)) {
    const typeCode =
      text(
        pm,
        'typeCode',
        'paymentMeans.typeCode',
        'BR-49',
        'paymentMeans.typeCode (BT-81: 58 SEPA credit transfer, 30 credit transfer, 59 SEPA direct debit, 48 card...)',
      ) ?? '';
    if (typeCode && !PAYMENT_MEANS_CODES.has(typeCode))
      err(
        'BR-CL-16',
        'paymentMeans.typeCode',
        `paymentMeans.typeCode ${JSON.stringify(typeCode)} is not a payment means code of UNTDID 4461`,
      );
    paymentMeans = { typeCode };
    for (const k of ['iban', 'bic', 'accountName', 'reference'] as const) {
      const v = text(pm, k, `paymentMeans.${k}`);
      if (v !== undefined) paymentMeans[k] = k === 'iban' ? v.replace(/\s+/g, '') : v;
    }
  } else if (pm !== undefined && pm !== null) err('BR-49', 'paymentMeans', 'paymentMeans must be an object');

  if (!seller || !buyer || problems.some((p) => p.level === 'error')) return { problems };
  const opt = (k: string) => text(value, k, k);
  const buyerReference = opt('buyerReference');
  const orderReference = opt('orderReference');
  const note = opt('note');
  const paymentTerms = opt('paymentTerms');
  return {
    invoice: {
      number: number!,
      typeCode,
      issueDate: issueDate!,
      currency: currency!,
      seller,
      buyer,
      lines,
      allowances,
      charges,
      totals,
      exemptionReasons,
      ...(dueDate ? { dueDate } : {}),
      ...(deliveryDate ? { deliveryDate } : {}),
      ...(buyerReference ? { buyerReference } : {}),
      ...(orderReference ? { orderReference } : {}),
      ...(note ? { note } : {}),
      ...(paymentMeans ? { paymentMeans } : {}),
      ...(paymentTerms ? { paymentTerms } : {}),
      ...(vatBreakdown ? { vatBreakdown } : {}),
    },
    problems,
  };
}
