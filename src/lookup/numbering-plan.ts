// The default lookup provider: what the numbering plan alone tells of a number (valid or not, its country,
// its type), from libphonenumber's full metadata. No network is queried, so nothing is known of the
// operator, porting or roaming, and every answer says so.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { LookupProvider, LookupResult } from './lookup-result.ts';

const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });

const typeWords: Record<string, string> = {
  MOBILE: 'mobile',
  FIXED_LINE: 'fixed line',
  FIXED_LINE_OR_MOBILE: 'fixed line or mobile',
  TOLL_FREE: 'toll-free',
  PREMIUM_RATE: 'premium-rate',
  SHARED_COST: 'shared-cost',
  VOIP: 'VoIP',
  PERSONAL_NUMBER: 'personal',
  PAGER: 'pager',
  UAN: 'universal access',
  VOICEMAIL: 'voicemail',
};

const noNetwork = 'numbering plan only: no network was queried';

export function numberingPlanResult(digits: string): LookupResult {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  const country = parsed?.country;
  const valid = parsed?.isValid() ?? false;
  const type = valid ? parsed?.getType() : undefined;
  const kind = type ? (typeWords[type] ?? type.toLowerCase()) : 'unknown type';
  return {
    to: digits,
    mccMnc: '',
    imsi: '',
    originalNetwork: {
      networkName: '',
      networkPrefix: '',
      countryName: country ? (countryNames.of(country) ?? country) : '',
      countryPrefix: parsed?.countryCallingCode ?? '',
    },
    ported: null,
    roaming: null,
    countryCode: country ?? '',
    numberType: type ?? '',
    status: valid
      ? {
          name: 'VALID',
          description: `Valid ${kind} number`,
          detailed: `${noNetwork}; the number is in a ${country ?? 'known'} range for ${kind} numbers`,
        }
      : {
          name: 'INVALID',
          description: 'Invalid number',
          detailed: `${noNetwork}; the number is in no range of ${country ? `${country}'s` : 'any'} numbering plan`,
        },
    error: valid
      ? { id: 0, description: 'No error', permanent: false }
      : { id: 1, description: 'Invalid number', permanent: true },
  };
}

export const numberingPlanProvider: LookupProvider = {
  name: 'numbering-plan',
  lookup: async (numbers) => numbers.map(numberingPlanResult),
};
