// The load of the campaign round, in its own process: ONE POST /send to Pigeon with N distinct French mobile
// numbers. Each recipient's gsmsmsid is "<request start ms>-c-<i>", so the receiver's latency for each DLR
// webhook is the time since the request started. The body is built first with a placeholder for that
// start, which is filled in just before sending, so building it is not timed.
// Prints one JSON line: startMs, answerMs (request start → whole answer parsed), bodyMb, the answer.
// Usage: node --import tsx campaign-client.ts URL TOKEN N TIMEOUT_S
const [url, token, countArg, timeoutArg] = process.argv.slice(2);
const recipients = Number(countArg);
const timeoutMs = Number(timeoutArg) * 1000;

const placeholder = 'T0T0T0T0T0T0T';
const gsm: string[] = [];
for (let i = 1; i <= recipients; i++) {
  gsm.push(`{"value":"3365${String(i).padStart(7, '0')}","gsmsmsid":"${placeholder}-c-${i}"}`);
}
const template = `{"sms":{"message":{"text":"Benchmark campaign message","pushtype":"alert"},"recipients":{"gsm":[${gsm.join(',')}]}}}`;

const startMs = Date.now();
const body = template.replaceAll(placeholder, String(startMs));
let outcome: Record<string, unknown>;
try {
  const response = await fetch(`${url}/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  outcome = { httpStatus: response.status, answer };
} catch (error) {
  outcome = { error: (error as Error).message };
}
const answerMs = Date.now() - startMs;
process.stdout.write(
  `${JSON.stringify({ startMs, answerMs, bodyMb: Number((body.length / 1e6).toFixed(2)), ...outcome })}\n`,
);
