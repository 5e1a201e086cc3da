// The `pigeon` command as a user runs it, in its own process, on a server's environment.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const pigeonBin = join(import.meta.dirname, '..', '..', 'bin', 'pigeon.js');
const run = promisify(execFile);

/** Runs `pigeon ...args`; answers its stdout (a non-zero exit rejects). */
export async function pigeon(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return (await run(process.execPath, [pigeonBin, ...args], { env })).stdout;
}

/** `pigeon account create` with a password and `credits`: answers the new account's token. */
export async function createAccount(env: NodeJS.ProcessEnv, email: string, credits: number): Promise<string> {
  const stdout = await pigeon(
    ['account', 'create', '--email', email, '--password', 'long enough', '--credits', String(credits)],
    env,
  );
  return (JSON.parse(stdout) as { token: string }).token;
}

/** Runs `pigeon ...args` on the database at `databaseUrl`: its exit code and output, whatever the code. */
export function pigeonOn(databaseUrl: string, ...args: string[]) {
  return pigeonWith({ DATABASE_URL: databaseUrl }, ...args);
}

/** Runs `pigeon ...args` with these variables set over the test's environment: its exit code and output. */
export async function pigeonWith(env: NodeJS.ProcessEnv, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [pigeonBin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
