// What Pigeon's own logs keep of a phone number. An erase (POST /erase) deletes a number from the database
// but cannot reach process logs already written, so a log line never carries a whole number: a reply from a
// number no account wrote to is logged masked (336****321).
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import { describeEachDialect } from '../helpers/harness.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

/** Every line the worker logs, as its fields and message. */
function recordingLog() {
  const lines: { level: string; fields: object; msg: string }[] = [];
  const at =
    (level: string) =>
    (fields: object, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describeEachDialect('what the logs keep of a number', (h) => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it('a reply from a number no account wrote to is logged with the number masked, never whole', async () => {
    const smsc = await new TestSmsc().listen();
    stops.push(() => smsc.close());
    const transport = new SmppTransport(testSmppOptions(smsc.url), quiet);
    const { lines, log } = recordingLog();
    const worker: DeliveryWorker = testDeliveryWorker(h(), transport, {}, log);
    await worker.start();
    stops.push(() => worker.stop());
    await waitFor(() => smsc.sessions.size === 1 && transport.ready(), 'the bind up');

    smsc.sendMo('33698700321', '36180', 'Who is this?');
    const line = await waitFor(
      () => lines.find((l) => l.msg === 'reply from a number no account wrote to; ignored'),
      'the unknown reply logged',
    );
    expect(line).toEqual({
      level: 'warn',
      fields: { from: '336****321' },
      msg: 'reply from a number no account wrote to; ignored',
    });
    expect(JSON.stringify(lines)).not.toContain('33698700321');
    expect(JSON.stringify(lines)).not.toContain('98700');
  });
});
