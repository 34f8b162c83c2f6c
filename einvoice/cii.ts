// The invoice as UN/CEFACT Cross Industry Invoice (D16B), the syntax of Factur-X / ZUGFeRD 2.x and of
// XRechnung's CII form. Elements follow the XSD's sequence; each profile writes the terms its XSD admits:
// MINIMUM the document level's essentials, BASIC WL the document level, BASIC the lines too, EN16931 and
// EXTENDED all the model's terms.
import { type Dec, fixed, plain } from './decimal.ts';
import type { Invoice, Party } from './model.ts';
import { type CiiProfile, GUIDELINES, hasLines, PEPPOL_PROCESS, XRECHNUNG_GUIDELINE } from './profiles.ts';
import type { Computed } from './rules.ts';
import { el, wrap } from './xml.ts';

const NS =
  'xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" ' +
  'xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100" ' +
  'xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" ' +
  'xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"';

const date102 = (d: string | undefined) =>
  d === undefined ? '' : `<udt:DateTimeString format="102">${d.replaceAll('-', '')}</udt:DateTimeString>`;

export function toCii(inv: Invoice, c: Computed, profile: CiiProfile | 'XRECHNUNG'): string {
  const xr = profile === 'XRECHNUNG';
  const level = xr ? 'EN16931' : profile;
  const min = level === 'MINIMUM';
  const full = level === 'EN16931' || level === 'EXTENDED';
  const money = (d: Dec) => fixed(d, 2);
  const taxReg = (p: Party, withFc: boolean) =>
    wrap('ram:SpecifiedTaxRegistration', el('ram:ID', p.vatId, { schemeID: 'VA' })) +
    (withFc ? wrap('ram:SpecifiedTaxRegistration', el('ram:ID', p.taxNumber, { schemeID: 'FC' })) : '');
  const party = (tag: string, p: Party, seller: boolean) => {
    if (min)
      return wrap(
        tag,
        el('ram:Name', p.name),
        wrap('ram:SpecifiedLegalOrganization', el('ram:ID', p.legalId)),
        seller ? wrap('ram:PostalTradeAddress', el('ram:CountryID', p.address?.countryCode)) : '',
        seller ? taxReg(p, false) : '',
      );
    const a = p.address;
    return wrap(
      tag,
      el('ram:ID', p.id),
      el('ram:Name', p.name),
      wrap('ram:SpecifiedLegalOrganization', el('ram:ID', p.legalId), full ? el('ram:TradingBusinessName', p.tradingName) : ''),
      full && p.contact
        ? wrap(
            'ram:DefinedTradeContact',
            el('ram:PersonName', p.contact.name),
            wrap('ram:TelephoneUniversalCommunication', el('ram:CompleteNumber', p.contact.phone)),
            wrap('ram:EmailURIUniversalCommunication', el('ram:URIID', p.contact.email)),
          )
        : '',
      a
        ? wrap(
            'ram:PostalTradeAddress',
            el('ram:PostcodeCode', a.postcode),
            el('ram:LineOne', a.line1),
            el('ram:LineTwo', a.line2),
            el('ram:CityName', a.city),
            el('ram:CountryID', a.countryCode),
            el('ram:CountrySubDivisionName', a.countrySubdivision),
          )
        : '',
      p.electronicAddress
        ? wrap('ram:URIUniversalCommunication', el('ram:URIID', p.electronicAddress.value, { schemeID: p.electronicAddress.scheme }))
        : '',
      taxReg(p, seller),
    );
  };
  const tradeTax = (category: string, rate: Dec | undefined) =>
    el('ram:TypeCode', 'VAT') +
    el('ram:CategoryCode', category) +
    (rate !== undefined && category !== 'O' ? el('ram:RateApplicablePercent', plain(rate)) : '');

  const lines = hasLines(level)
    ? inv.lines
        .map((l, i) =>
          wrap(
            'ram:IncludedSupplyChainTradeLineItem',
            wrap('ram:AssociatedDocumentLineDocument', el('ram:LineID', l.id)),
            wrap(
              'ram:SpecifiedTradeProduct',
              full ? el('ram:SellerAssignedID', l.sellerItemId) : '',
              el('ram:Name', l.name),
              full ? el('ram:Description', l.description) : '',
            ),
            wrap(
              'ram:SpecifiedLineTradeAgreement',
              wrap(
                'ram:NetPriceProductTradePrice',
                el('ram:ChargeAmount', plain(l.netPrice)),
                l.priceBaseQuantity ? el('ram:BasisQuantity', plain(l.priceBaseQuantity), { unitCode: l.unitCode }) : '',
              ),
            ),
            wrap('ram:SpecifiedLineTradeDelivery', el('ram:BilledQuantity', plain(l.quantity), { unitCode: l.unitCode })),
            wrap(
              'ram:SpecifiedLineTradeSettlement',
              wrap('ram:ApplicableTradeTax', tradeTax(l.vat.category, l.vat.rate ?? { units: 0n, scale: 0 })),
              wrap('ram:SpecifiedTradeSettlementLineMonetarySummation', el('ram:LineTotalAmount', money(c.lineNet[i]!))),
            ),
          ),
        )
        .join('')
    : '';

  const agreement = wrap(
    'ram:ApplicableHeaderTradeAgreement',
    el('ram:BuyerReference', inv.buyerReference),
    party('ram:SellerTradeParty', inv.seller, true),
    party('ram:BuyerTradeParty', inv.buyer, false),
    wrap('ram:BuyerOrderReferencedDocument', el('ram:IssuerAssignedID', inv.orderReference)),
  );
  const delivery =
    min || !inv.deliveryDate
      ? '<ram:ApplicableHeaderTradeDelivery/>'
      : wrap(
          'ram:ApplicableHeaderTradeDelivery',
          wrap('ram:ActualDeliverySupplyChainEvent', wrap('ram:OccurrenceDateTime', date102(inv.deliveryDate))),
        );

  const pm = inv.paymentMeans;
  const allowanceCharge = (charge: boolean) => (x: Invoice['allowances'][number]) =>
    wrap(
      'ram:SpecifiedTradeAllowanceCharge',
      `<ram:ChargeIndicator><udt:Indicator>${charge}</udt:Indicator></ram:ChargeIndicator>`,
      el('ram:ActualAmount', money(x.amount)),
      el('ram:Reason', x.reason),
      wrap('ram:CategoryTradeTax', tradeTax(x.vat.category, x.vat.rate ?? { units: 0n, scale: 0 })),
    );
  const summation = min
    ? wrap(
        'ram:SpecifiedTradeSettlementHeaderMonetarySummation',
        el('ram:TaxBasisTotalAmount', money(c.taxBasisTotal)),
        el('ram:TaxTotalAmount', money(c.taxTotal), { currencyID: inv.currency }),
        el('ram:GrandTotalAmount', money(c.grandTotal)),
        el('ram:DuePayableAmount', money(c.duePayable)),
      )
    : wrap(
        'ram:SpecifiedTradeSettlementHeaderMonetarySummation',
        el('ram:LineTotalAmount', money(c.lineTotal)),
        inv.charges.length ? el('ram:ChargeTotalAmount', money(c.chargeTotal)) : '',
        inv.allowances.length ? el('ram:AllowanceTotalAmount', money(c.allowanceTotal)) : '',
        el('ram:TaxBasisTotalAmount', money(c.taxBasisTotal)),
        el('ram:TaxTotalAmount', money(c.taxTotal), { currencyID: inv.currency }),
        el('ram:GrandTotalAmount', money(c.grandTotal)),
        inv.totals.prepaid ? el('ram:TotalPrepaidAmount', money(c.prepaid)) : '',
        el('ram:DuePayableAmount', money(c.duePayable)),
      );
  const settlement = min
    ? wrap('ram:ApplicableHeaderTradeSettlement', el('ram:InvoiceCurrencyCode', inv.currency), summation)
    : wrap(
        'ram:ApplicableHeaderTradeSettlement',
        el('ram:PaymentReference', pm?.reference),
        el('ram:InvoiceCurrencyCode', inv.currency),
        pm
          ? wrap(
              'ram:SpecifiedTradeSettlementPaymentMeans',
              el('ram:TypeCode', pm.typeCode),
              wrap('ram:PayeePartyCreditorFinancialAccount', el('ram:IBANID', pm.iban), full ? el('ram:AccountName', pm.accountName) : ''),
              full ? wrap('ram:PayeeSpecifiedCreditorFinancialInstitution', el('ram:BICID', pm.bic)) : '',
            )
          : '',
        c.vat
          .map((g) =>
            wrap(
              'ram:ApplicableTradeTax',
              el('ram:CalculatedAmount', money(g.taxAmount)),
              el('ram:TypeCode', 'VAT'),
              el('ram:ExemptionReason', g.exemptionReason),
              el('ram:BasisAmount', money(g.taxableAmount)),
              el('ram:CategoryCode', g.category),
              g.category === 'O' ? '' : el('ram:RateApplicablePercent', plain(g.rate)),
            ),
          )
          .join(''),
        inv.allowances.map(allowanceCharge(false)).join(''),
        inv.charges.map(allowanceCharge(true)).join(''),
        wrap('ram:SpecifiedTradePaymentTerms', el('ram:Description', inv.paymentTerms), wrap('ram:DueDateDateTime', date102(inv.dueDate))),
        summation,
      );

  const guideline = xr ? XRECHNUNG_GUIDELINE : GUIDELINES[profile];
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<rsm:CrossIndustryInvoice ${NS}>` +
    wrap(
      'rsm:ExchangedDocumentContext',
      xr ? wrap('ram:BusinessProcessSpecifiedDocumentContextParameter', el('ram:ID', PEPPOL_PROCESS)) : '',
      wrap('ram:GuidelineSpecifiedDocumentContextParameter', el('ram:ID', guideline)),
    ) +
    wrap(
      'rsm:ExchangedDocument',
      el('ram:ID', inv.number),
      el('ram:TypeCode', inv.typeCode),
      wrap('ram:IssueDateTime', date102(inv.issueDate)),
      min ? '' : wrap('ram:IncludedNote', el('ram:Content', inv.note)),
    ) +
    wrap('rsm:SupplyChainTradeTransaction', lines, agreement, delivery, settlement) +
    '</rsm:CrossIndustryInvoice>\n'
  );
}
