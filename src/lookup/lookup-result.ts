// One number's lookup answer, in SMSFactor's shape, and the seam a lookup provider plugs into.

export interface LookupResult {
  to: string;
  mccMnc: string;
  imsi: string;
  originalNetwork: {
    networkName: string;
    networkPrefix: string;
    countryName: string;
    countryPrefix: string;
  };
  /** null when the provider cannot tell (the numbering plan never can). */
  ported: boolean | null;
  roaming: boolean | null;
  /** Pigeon's additions: the ISO country and the numbering plan's type (MOBILE, FIXED_LINE…). */
  countryCode: string;
  numberType: string;
  status: { name: string; description: string; detailed: string };
  error: { id: number; description: string; permanent: boolean };
}

/**
 * Looks numbers up (normalized digits, country code first), one answer per number in the same order. A
 * provider that queries a network (an HLR service) implements this; it is called outside any transaction.
 */
export interface LookupProvider {
  readonly name: string;
  lookup(numbers: readonly string[]): Promise<LookupResult[]>;
}
