import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { loadRoutingTable, readRoutingTable } from './connectors-file.ts';

const config = loadConfig({ DATABASE_URL: ':memory:' });

function errorsOf(raw: unknown): string[] {
  try {
    readRoutingTable(raw, config, '/etc/pigeon/connectors.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
  }
  throw new Error('no error');
}

describe('connectors file', () => {
  it('reads connectors with their defaults and routes with their weights', () => {
    const table = readRoutingTable(
      {
        connectors: [
          { name: 'orange', url: 'smpp://pigeon:secret@smsc.example:2775', binds: 2, window: 20, tps: 50 },
          { name: 'tls', url: 'ssmpp://pigeon:secret@smsc.example:3550', bindMode: 'transmitter-receiver' },
          { name: 'sim', url: 'simulator', dlrDelayMs: 0, outcomes: { DELIVRD: 1 } },
        ],
        routes: [
          { name: 'fr', match: { prefix: ['+336'], country: 'fr' }, connectors: ['orange', 'tls'] },
          { name: 'rest', connectors: ['orange', 'sim'], strategy: 'weighted', weights: { sim: 3 } },
        ],
        senders: { MyShop: 5 },
        defaultSenderTps: 20,
      },
      config,
      '/etc/pigeon/connectors.yaml',
    );
    expect(table.connectors[0]).toMatchObject({
      kind: 'smpp',
      binds: 2,
      window: 20,
      tps: 50,
      bindMode: 'transceiver',
    });
    expect(table.connectors[1]).toMatchObject({
      bindMode: 'transmitter-receiver',
      tls: { checkServerName: true },
    });
    expect(table.connectors[2]).toMatchObject({ kind: 'simulator', dlrDelayMs: 0 });
    expect(table.routes[0]).toMatchObject({
      match: { prefix: ['336'], country: ['FR'] },
      strategy: 'failover',
    });
    expect(table.routes[1]).toMatchObject({ strategy: 'weighted', weights: [1, 3] });
    expect(table.senderTps.get('MYSHOP')).toBe(5);
    expect(table.defaultSenderTps).toBe(20);
  });

  it('names every error with its path, all at once', () => {
    const errors = errorsOf({
      connectors: [
        { name: 'a', url: 'http://x:y@host:1' },
        { name: 'a', url: 'smpp://u:p@host:1', window: 0, colour: 'red' },
        { name: 'b', url: 'smpp://u:p@host:1', tls: { caFile: 'ca.pem' } },
        { name: 'c', url: 'simulator', binds: 2 },
      ],
      routes: [
        {
          name: 'r',
          match: { prefix: ['33x'], country: ['XX'], pushtype: 'sms', planet: 'mars' },
          connectors: ['a', 'zz'],
        },
        { name: 'r', connectors: ['a', 'b'], strategy: 'weighted', weights: [1, -2] },
        { name: 'f', connectors: ['a'], strategy: 'roundrobin' },
      ],
      senders: { MyShop: 'fast' },
      extra: true,
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^extra: unknown key/),
        expect.stringMatching(/^connectors\[0\]\.url: scheme must be smpp, ssmpp or the word simulator/),
        expect.stringMatching(/^connectors\[1\]\.name: duplicate name "a" \(already connectors\[0\]\)/),
        expect.stringMatching(/^connectors\[1\]\.window: must be >= 1$/),
        expect.stringMatching(/^connectors\[1\]\.colour: unknown key/),
        expect.stringMatching(/^connectors\[2\]\.tls: only for ssmpp:\/\/ URLs/),
        expect.stringMatching(/^connectors\[2\]\.tls\.caFile: no such file: \/etc\/pigeon\/ca\.pem/),
        expect.stringMatching(/^connectors\[3\]\.binds: unknown key/),
        expect.stringMatching(/^routes\[0\]\.match\.prefix\[0\]: must match pattern/),
        expect.stringMatching(/^routes\[0\]\.match\.country\[0\]: "XX" is not an ISO 3166-1 alpha-2/),
        expect.stringMatching(
          /^routes\[0\]\.match\.pushtype\[0\]: must be equal to one of the allowed values \(alert, marketing\)/,
        ),
        expect.stringMatching(/^routes\[0\]\.match\.planet: unknown key/),
        expect.stringMatching(/^routes\[0\]\.connectors\[1\]: unknown connector "zz"/),
        expect.stringMatching(/^routes\[1\]\.name: duplicate name "r"/),
        expect.stringMatching(/^routes\[1\]\.weights\[1\]: must be > 0$/),
        expect.stringMatching(
          /^routes\[2\]\.strategy: must be equal to one of the allowed values \(failover, weighted\)/,
        ),
        expect.stringMatching(/^senders\.MyShop: must be integer/),
      ]),
    );
    expect(errors).toHaveLength(17);
  });

  it('a file without connectors or routes says so', () => {
    expect(errorsOf({})).toEqual(['connectors: required', 'routes: required']);
  });

  it('reads YAML and JSON by extension, and names a file that cannot be read or parsed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-connectors-'));
    const yaml = join(dir, 'c.yaml');
    writeFileSync(
      yaml,
      'connectors:\n  - name: s\n    url: simulator\nroutes:\n  - name: all\n    connectors: [s]\n',
    );
    expect(loadRoutingTable({ ...config, CONNECTORS_FILE: yaml }).routes[0].connectors).toEqual(['s']);
    const json = join(dir, 'c.json');
    writeFileSync(
      json,
      JSON.stringify({
        connectors: [{ name: 's', url: 'simulator' }],
        routes: [{ name: 'all', connectors: ['s'] }],
      }),
    );
    expect(loadRoutingTable({ ...config, CONNECTORS_FILE: json }).connectors[0].name).toBe('s');
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'connectors: [\n');
    expect(() => loadRoutingTable({ ...config, CONNECTORS_FILE: broken })).toThrow(
      /invalid CONNECTORS_FILE .*broken\.yaml/,
    );
    expect(() => loadRoutingTable({ ...config, CONNECTORS_FILE: join(dir, 'none.yaml') })).toThrow(
      /cannot read .*none\.yaml \(ENOENT\)/,
    );
    const txt = join(dir, 'c.txt');
    writeFileSync(txt, '{}');
    expect(() => loadRoutingTable({ ...config, CONNECTORS_FILE: txt })).toThrow(
      /must end in \.yaml, \.yml or \.json/,
    );
  });

  it('without CONNECTORS_FILE: one connector `default` from TRANSPORT and one route taking every message', () => {
    const table = loadRoutingTable(
      loadConfig({
        DATABASE_URL: ':memory:',
        TRANSPORT: 'smpp',
        SMPP_URL: 'smpp://u:p@h:2775',
        SMPP_BINDS: '3',
      }),
    );
    expect(table.connectors).toEqual([expect.objectContaining({ name: 'default', kind: 'smpp', binds: 3 })]);
    expect(table.routes).toEqual([
      expect.objectContaining({ name: 'default', match: {}, connectors: ['default'] }),
    ]);
  });
});
