// The invoice as OASIS UBL 2.1 (Invoice-2) in XRechnung 3.0's form. Elements follow the XSD's sequence.
// A pdf of the same document may ride along as an additional supporting document (BG-24), base64.
import { type Dec, fixed, plain } from './decimal.ts';
import type { Invoice, Party, VatOf } from './model.ts';
import { PEPPOL_PROCESS, XRECHNUNG_GUIDELINE } from './profiles.ts';
import type { Computed } from './rules.ts';
import { el, wrap } from './xml.ts';

const NS =
  'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" ' +
  'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" ' +
  'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"';

export interface Attachment {
  id: string;
  filename: string;
  mimeCode: string;
  base64: string;
}

export function toUbl(inv: Invoice, c: Computed): string {
  const cur = { currencyID: inv.currency };
  const money = (d: Dec) => fixed(d, 2);
  const amount = (name: string, d: Dec) => el(name, money(d), cur);
  const taxScheme = '<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme>';
  const category = (tag: string, v: VatOf, reason?: string) =>
    wrap(
      tag,
      el('cbc:ID', v.category),
      v.category === 'O' ? '' : el('cbc:Percent', plain(v.rate ?? { units: 0n, scale: 0 })),
      el('cbc:TaxExemptionReason', reason),
      taxScheme,
    );
  const party = (tag: string, p: Party) => {
    const a = p.address;
    return wrap(
      tag,
      wrap(
        'cac:Party',
        p.electronicAddress ? el('cbc:EndpointID', p.electronicAddress.value, { schemeID: p.electronicAddress.scheme }) : '',
        wrap('cac:PartyIdentification', el('cbc:ID', p.id)),
        wrap('cac:PartyName', el('cbc:Name', p.tradingName)),
        a
          ? wrap(
              'cac:PostalAddress',
              el('cbc:StreetName', a.line1),
              el('cbc:AdditionalStreetName', a.line2),
              el('cbc:CityName', a.city),
              el('cbc:PostalZone', a.postcode),
              el('cbc:CountrySubentity', a.countrySubdivision),
              wrap('cac:Country', el('cbc:IdentificationCode', a.countryCode)),
            )
          : '',
        p.vatId ? wrap('cac:PartyTaxScheme', el('cbc:CompanyID', p.vatId), taxScheme) : '',
        p.taxNumber
          ? wrap('cac:PartyTaxScheme', el('cbc:CompanyID', p.taxNumber), '<cac:TaxScheme><cbc:ID>FC</cbc:ID></cac:TaxScheme>')
          : '',
        wrap('cac:PartyLegalEntity', el('cbc:RegistrationName', p.name), el('cbc:CompanyID', p.legalId)),
        p.contact
          ? wrap(
              'cac:Contact',
              el('cbc:Name', p.contact.name),
              el('cbc:Telephone', p.contact.phone),
              el('cbc:ElectronicMail', p.contact.email),
            )
          : '',
      ),
    );
  };
  const allowanceCharge = (charge: boolean) => (x: Invoice['allowances'][number]) =>
    wrap(
      'cac:AllowanceCharge',
      el('cbc:ChargeIndicator', String(charge)),
      el('cbc:AllowanceChargeReason', x.reason),
      amount('cbc:Amount', x.amount),
      category('cac:TaxCategory', x.vat),
    );
  const pm = inv.paymentMeans;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<Invoice ${NS}>` +
    el('cbc:CustomizationID', XRECHNUNG_GUIDELINE) +
    el('cbc:ProfileID', PEPPOL_PROCESS) +
    el('cbc:ID', inv.number) +
    el('cbc:IssueDate', inv.issueDate) +
    el('cbc:DueDate', inv.dueDate) +
    el('cbc:InvoiceTypeCode', inv.typeCode) +
    el('cbc:Note', inv.note) +
    el('cbc:DocumentCurrencyCode', inv.currency) +
    el('cbc:BuyerReference', inv.buyerReference) +
    wrap('cac:OrderReference', el('cbc:ID', inv.orderReference)) +
    party('cac:AccountingSupplierParty', inv.seller) +
    party('cac:AccountingCustomerParty', inv.buyer) +
    wrap('cac:Delivery', el('cbc:ActualDeliveryDate', inv.deliveryDate)) +
    (pm
      ? wrap(
          'cac:PaymentMeans',
          el('cbc:PaymentMeansCode', pm.typeCode),
          el('cbc:PaymentID', pm.reference),
          wrap(
            'cac:PayeeFinancialAccount',
            el('cbc:ID', pm.iban),
            el('cbc:Name', pm.accountName),
            wrap('cac:FinancialInstitutionBranch', el('cbc:ID', pm.bic)),
          ),
        )
      : '') +
    wrap('cac:PaymentTerms', el('cbc:Note', inv.paymentTerms)) +
    inv.allowances.map(allowanceCharge(false)).join('') +
    inv.charges.map(allowanceCharge(true)).join('') +
    wrap(
      'cac:TaxTotal',
      amount('cbc:TaxAmount', c.taxTotal),
      c.vat
        .map((g) =>
          wrap(
            'cac:TaxSubtotal',
            amount('cbc:TaxableAmount', g.taxableAmount),
            amount('cbc:TaxAmount', g.taxAmount),
            category('cac:TaxCategory', { category: g.category, rate: g.rate }, g.exemptionReason),
          ),
        )
        .join(''),
    ) +
    wrap(
      'cac:LegalMonetaryTotal',
      amount('cbc:LineExtensionAmount', c.lineTotal),
      amount('cbc:TaxExclusiveAmount', c.taxBasisTotal),
      amount('cbc:TaxInclusiveAmount', c.grandTotal),
      inv.allowances.length ? amount('cbc:AllowanceTotalAmount', c.allowanceTotal) : '',
      inv.charges.length ? amount('cbc:ChargeTotalAmount', c.chargeTotal) : '',
      inv.totals.prepaid ? amount('cbc:PrepaidAmount', c.prepaid) : '',
      amount('cbc:PayableAmount', c.duePayable),
    ) +
    inv.lines
      .map((l, i) =>
        wrap(
          'cac:InvoiceLine',
          el('cbc:ID', l.id),
          el('cbc:InvoicedQuantity', plain(l.quantity), { unitCode: l.unitCode }),
          amount('cbc:LineExtensionAmount', c.lineNet[i]!),
          wrap(
            'cac:Item',
            el('cbc:Description', l.description),
            el('cbc:Name', l.name),
            wrap('cac:SellersItemIdentification', el('cbc:ID', l.sellerItemId)),
            category('cac:ClassifiedTaxCategory', l.vat),
          ),
          wrap(
            'cac:Price',
            el('cbc:PriceAmount', plain(l.netPrice), cur),
            l.priceBaseQuantity ? el('cbc:BaseQuantity', plain(l.priceBaseQuantity), { unitCode: l.unitCode }) : '',
          ),
        ),
      )
      .join('') +
    '</Invoice>\n'
  );
}
