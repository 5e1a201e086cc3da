import { describe, expect, it } from 'vitest';
import { parseReceipt } from './receipt.ts';

describe('parseReceipt: the id, stat and err of a receipt text, or its TLVs', () => {
  it('reads the fields of SMPP 3.4 Appendix B, in any case and white space', () => {
    expect(
      parseReceipt(
        'id:1234567890 sub:001 dlvrd:001 submit date:2311271200 done date:2311271201 stat:DELIVRD err:000 text:hello',
        {},
      ),
    ).toEqual({ smscId: '1234567890', stat: 'DELIVRD', err: '000' });
    expect(parseReceipt('ID:77 STAT:expired ERR:x', {})).toEqual({
      smscId: '77',
      stat: 'EXPIRED',
      err: null,
    });
    expect(parseReceipt('id:5\tstat:DELIVRD\nerr:12 text:', {})).toEqual({
      smscId: '5',
      stat: 'DELIVRD',
      err: '12',
    });
  });

  it('takes nothing from the free text at the end, whatever it holds', () => {
    expect(
      parseReceipt('id:abc123 sub:001 dlvrd:000 stat:UNDELIV err:001 text:stat:DELIVRD id:zzz err:000', {}),
    ).toEqual({ smscId: 'abc123', stat: 'UNDELIV', err: '001' });
  });

  it('a field counts only where a word starts: no id inside another field name', () => {
    expect(parseReceipt('msgid:9 stat:DELIVRD', {})).toBeUndefined();
    expect(parseReceipt('foo id:9 stat:REJECTD', {})).toEqual({ smscId: '9', stat: 'REJECTD', err: null });
  });

  it('the TLVs win over the text; without an id or a state there is no receipt', () => {
    expect(parseReceipt('id:1 stat:DELIVRD', { receiptedMessageId: 'ab\0\0', messageState: 5 })).toEqual({
      smscId: 'ab',
      stat: 'UNDELIV',
      err: null,
    });
    expect(parseReceipt('stat:DELIVRD', {})).toBeUndefined();
    expect(parseReceipt('id:1', {})).toBeUndefined();
    expect(parseReceipt('', {})).toBeUndefined();
  });
});
