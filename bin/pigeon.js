#!/usr/bin/env node
// The package's command: runs the TypeScript entry point through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
