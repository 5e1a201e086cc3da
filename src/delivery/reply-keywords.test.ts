import { describe, expect, it } from 'vitest';
import { answerSender, keywordMatcher, normalizeKeyword, parseKeywords } from './reply-keywords.ts';

const match = keywordMatcher({
  stop: parseKeywords('STOP,STOP SMS,ARRET,UNSUBSCRIBE'),
  start: parseKeywords('START,UNSTOP,DEMARRER'),
  help: parseKeywords('HELP,AIDE,INFO'),
});

describe('reply keywords', () => {
  it.each([
    'STOP',
    'Stop.',
    'stop !',
    ' STOP ',
    'stop!!!',
    'Stop…',
    'STOP ?!',
    'ARRÊT',
    'Arrêt!',
    'arret',
    'stop   sms',
    'Stop\u00a0SMS.',
    'Stop\tsms',
    'unsubscribe;',
  ])('"%s" is a STOP: case, accents, spacing and ending punctuation do not count', (text) => {
    expect(match(text)).toBe('STOP');
  });

  it.each(['please stop sending', 'stop sending me this', 'STOP STOP', 'S T O P', '.STOP', 'stopp', ''])(
    '"%s" is no keyword: a keyword is the whole reply, not a word inside it',
    (text) => {
      expect(match(text)).toBeUndefined();
    },
  );

  it('START and HELP synonyms match with the same folding', () => {
    expect(match('Start!')).toBe('START');
    expect(match('démarrer')).toBe('START');
    expect(match(' unstop. ')).toBe('START');
    expect(match('Aide ?')).toBe('HELP');
    expect(match('help')).toBe('HELP');
    expect(match('help me')).toBeUndefined();
  });

  it('a keyword in several lists counts as STOP before START before HELP: an opt-out is never lost', () => {
    const both = keywordMatcher({ stop: ['ARRET'], start: ['arrêt', 'GO'], help: ['go', 'AIDE'] });
    expect(both('Arrêt')).toBe('STOP');
    expect(both('go')).toBe('START');
    expect(both('aide')).toBe('HELP');
  });

  it('keywords themselves are normalised, and empty entries of a list are dropped', () => {
    expect(parseKeywords(' Stop ,, ,Arrêt !,')).toEqual(['Stop', 'Arrêt !']);
    const m = keywordMatcher({ stop: parseKeywords('Arrêt !'), start: [], help: [] });
    expect(m('ARRET')).toBe('STOP');
    expect(normalizeKeyword('  Ça   va ?  ')).toBe('CA VA');
  });

  it('the HELP answer comes from the address replied to when a carrier takes it as a sender, else the fallback', () => {
    expect(answerSender('36180', 'Pigeon')).toBe('36180');
    expect(answerSender('+33757000001', 'Pigeon')).toBe('33757000001');
    expect(answerSender('0033757000001', 'Pigeon')).toBe('33757000001');
    expect(answerSender('MyShop', 'Pigeon')).toBe('MyShop');
    expect(answerSender('', 'Pigeon')).toBe('Pigeon');
    expect(answerSender('SIMULATOR', 'Pigeon')).toBe('SIMULATOR');
    expect(answerSender('my shop!', 'Pigeon')).toBe('Pigeon');
    expect(answerSender('1234567890123456', 'Pigeon')).toBe('Pigeon');
  });
});
