// The standards and profiles docgen writes, and the guideline identifier (BT-24) each puts into the XML.

export const EINVOICE_STANDARDS = ['facturx', 'zugferd', 'xrechnung-cii', 'xrechnung-ubl'] as const;
export type EInvoiceStandard = (typeof EINVOICE_STANDARDS)[number];
export const CII_PROFILES = ['MINIMUM', 'BASIC WL', 'BASIC', 'EN16931', 'EXTENDED'] as const;
export type CiiProfile = (typeof CII_PROFILES)[number];
export const XRECHNUNG_PROFILES = ['XRECHNUNG'] as const;

/** BT-24 for each Factur-X / ZUGFeRD 2.x profile (Factur-X 1.07 / ZUGFeRD 2.3, which share the identifiers). */
export const GUIDELINES: Record<CiiProfile, string> = {
  MINIMUM: 'urn:factur-x.eu:1p0:minimum',
  'BASIC WL': 'urn:factur-x.eu:1p0:basicwl',
  BASIC: 'urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic',
  EN16931: 'urn:cen.eu:en16931:2017',
  EXTENDED: 'urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended',
};
/** XRechnung 3.0's CIUS identifier (BT-24) and the PEPPOL business process (BT-23) it names. */
export const XRECHNUNG_GUIDELINE = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
export const PEPPOL_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/** The XMP ConformanceLevel of the Factur-X extension schema for a profile. */
export const CONFORMANCE_LEVEL: Record<CiiProfile, string> = {
  MINIMUM: 'MINIMUM',
  'BASIC WL': 'BASIC WL',
  BASIC: 'BASIC',
  EN16931: 'EN 16931',
  EXTENDED: 'EXTENDED',
};

/** Profiles with invoice lines (the others carry the document-level terms only). */
export const hasLines = (profile: string): boolean => !['MINIMUM', 'BASIC WL'].includes(profile);
