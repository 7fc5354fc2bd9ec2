#!/usr/bin/env node
// `npm run docs:relay-env`: writes the relay command's env table into docs/relay.md, between its markers, made from
// the command's own list of variables (packages/relay/src/server/relayVariables.ts: names, defaults, what each is).
// packages/relay/test/relayServer.test.ts fails while the docs differ from it. The TypeScript is loaded through tsx.
import { readFileSync, writeFileSync } from 'node:fs';
import { register } from 'tsx/esm/api';

register();
const { withEnvTable } = await import('../packages/relay/src/server/relayEnvTable.ts');
const path = new URL('../docs/relay.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withEnvTable(before);
if (after !== before) writeFileSync(path, after);
console.log(`docs/relay.md: the env table ${after === before ? 'was up to date' : 'is written'}`);
